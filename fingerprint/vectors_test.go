package fingerprint

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// corpusDir is the shared corpora directory beside the repository.
var corpusDir = filepath.Join("..", "..", "shared", "corpora", "fingerprint")

// vector is one line of vectors.jsonl (fields in /work/shared/corpora/README.md).
type vector struct {
	ID           string   `json:"id"`
	Transport    string   `json:"transport"`
	HandshakeHex string   `json:"handshake_hex"`
	RecordHex    string   `json:"record_hex"`
	JA3          *string  `json:"ja3"`
	JA3Hash      *string  `json:"ja3_hash"`
	JA4          *string  `json:"ja4"`
	JA4R         *string  `json:"ja4_r"`
	JA4O         *string  `json:"ja4_o"`
	JA4RO        *string  `json:"ja4_ro"`
	Notes        []string `json:"notes"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "vectors.jsonl"))
	if os.IsNotExist(err) {
		t.Skipf("corpus absent: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("vectors.jsonl: %v", err)
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("vectors.jsonl is empty")
	}
	return vs
}

func checkField(t *testing.T, name string, want *string, got string) {
	t.Helper()
	if want != nil && *want != got {
		t.Errorf("%s: got %q, want %q", name, got, *want)
	}
}

func checkVector(t *testing.T, v vector, fp Fingerprints) {
	t.Helper()
	checkField(t, "ja3", v.JA3, fp.JA3)
	checkField(t, "ja3_hash", v.JA3Hash, fp.JA3Hash)
	checkField(t, "ja4", v.JA4, fp.JA4)
	checkField(t, "ja4_r", v.JA4R, fp.JA4R)
	checkField(t, "ja4_o", v.JA4O, fp.JA4O)
	checkField(t, "ja4_ro", v.JA4RO, fp.JA4RO)
}

func TestVectorsHandshake(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.ID, func(t *testing.T) {
			msg, err := hex.DecodeString(v.HandshakeHex)
			if err != nil {
				t.Fatal(err)
			}
			h, err := ParseClientHello(msg)
			if err != nil {
				t.Fatalf("ParseClientHello: %v", err)
			}
			tr := TCP
			if v.Transport == "quic" {
				tr = QUIC
			}
			checkVector(t, v, Compute(&h, tr))
		})
	}
}

func TestVectorsRecord(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.RecordHex == "" {
			continue
		}
		n++
		t.Run(v.ID, func(t *testing.T) {
			rec, err := hex.DecodeString(v.RecordHex)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := HandshakeFromRecords(rec)
			if err != nil {
				t.Fatalf("HandshakeFromRecords: %v", err)
			}
			if got := hex.EncodeToString(msg); got != v.HandshakeHex {
				t.Fatalf("reassembled message differs from handshake_hex")
			}
			h, err := ParseClientHello(msg)
			if err != nil {
				t.Fatalf("ParseClientHello: %v", err)
			}
			checkVector(t, v, Compute(&h, TCP))
		})
	}
	if n == 0 {
		t.Fatal("no vector carries record_hex")
	}
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
