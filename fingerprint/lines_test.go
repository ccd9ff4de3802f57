package fingerprint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type outLine struct {
	ID      any    `json:"id"`
	JA3     string `json:"ja3"`
	JA3Hash string `json:"ja3_hash"`
	JA4     string `json:"ja4"`
	JA4R    string `json:"ja4_r"`
	JA4O    string `json:"ja4_o"`
	JA4RO   string `json:"ja4_ro"`
	Error   string `json:"error"`
}

func runLines(t *testing.T, in string) []outLine {
	t.Helper()
	var out bytes.Buffer
	if err := RunLines(strings.NewReader(in), &out); err != nil {
		t.Fatalf("RunLines: %v", err)
	}
	var lines []outLine
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var o outLine
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("output line %q is not JSON: %v", sc.Text(), err)
		}
		lines = append(lines, o)
	}
	return lines
}

func TestRunLinesVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpusDir, "vectors.jsonl"))
	if os.IsNotExist(err) {
		t.Skip("corpus absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	vs := loadVectors(t)
	// As handshake only, as records only, then the file as given (both
	// fields present, plus the expected values, which are ignored).
	var hs, rec strings.Builder
	for _, v := range vs {
		b, _ := json.Marshal(map[string]string{"id": v.ID, "transport": v.Transport, "handshake_hex": v.HandshakeHex})
		hs.Write(append(b, '\n'))
		if v.RecordHex != "" {
			b, _ = json.Marshal(map[string]string{"id": v.ID, "transport": v.Transport, "record_hex": v.RecordHex})
			rec.Write(append(b, '\n'))
		}
	}
	for _, in := range []string{hs.String(), rec.String()} {
		out := runLines(t, in)
		inLines := strings.Count(in, "\n")
		if len(out) != inLines {
			t.Fatalf("got %d output lines, want %d", len(out), inLines)
		}
		j := 0
		for _, v := range vs {
			if in == rec.String() && v.RecordHex == "" {
				continue
			}
			o := out[j]
			j++
			if o.ID != v.ID || o.Error != "" {
				t.Fatalf("line %d: got id %v error %q, want id %s", j, o.ID, o.Error, v.ID)
			}
			checkVector(t, v, Fingerprints{o.JA3, o.JA3Hash, o.JA4, o.JA4R, o.JA4O, o.JA4RO})
		}
	}
	out := runLines(t, string(data))
	if len(out) != len(vs) {
		t.Fatalf("got %d output lines, want %d", len(out), len(vs))
	}
	for i, o := range out {
		if o.ID != vs[i].ID || o.Error != "" {
			t.Fatalf("line %d: got id %v error %q, want id %s", i+1, o.ID, o.Error, vs[i].ID)
		}
		checkVector(t, vs[i], Fingerprints{o.JA3, o.JA3Hash, o.JA4, o.JA4R, o.JA4O, o.JA4RO})
	}
}

func TestRunLinesErrors(t *testing.T) {
	good := `{"id":"ok","transport":"tcp","handshake_hex":"` + hexOf(specHello().msg()) + `"}`
	long := `{"id":"long","handshake_hex":"` + strings.Repeat("ab", MaxLineBytes) + `"}`
	in := strings.Join([]string{
		good,
		`garbage`,
		``,
		`{"id":7,"transport":"tcp","handshake_hex":"zz"}`,
		`{"id":"x","transport":"udp","handshake_hex":"00"}`,
		`{"id":"short","transport":"tcp","handshake_hex":"010000"}`,
		`{"id":"rec","transport":"tcp","record_hex":"170303000100"}`,
		`{"id":"none","transport":"tcp"}`,
		long,
		`{"id":"q","transport":"quic","handshake_hex":"` + hexOf(specHello().msg()) + `"}`,
		`[1,2]`,
		`{"id":"Q","transport":"QUIC","handshake_hex":"` + hexOf(specHello().msg()) + `"}`,
		good,
	}, "\n") // no final newline: the last line still counts
	out := runLines(t, in)
	want := []struct {
		id  any
		err bool
	}{{"ok", false}, {nil, true}, {nil, true}, {7.0, true}, {"x", true}, {"short", true}, {"rec", true},
		{"none", true}, {"long", true}, {"q", false}, {nil, true}, {"Q", false}, {"ok", false}}
	if len(out) != len(want) {
		t.Fatalf("got %d lines, want %d", len(out), len(want))
	}
	for i, w := range want {
		if out[i].ID != w.id || (out[i].Error != "") != w.err {
			t.Errorf("line %d: got id %v error %q, want id %v error %v", i+1, out[i].ID, out[i].Error, w.id, w.err)
		}
	}
	if out[0].JA4 != "t13d1516h2_8daaf6152771_e5627efa2ab1" || out[9].JA4 != "q13d1516h2_8daaf6152771_e5627efa2ab1" {
		t.Errorf("ja4: got %q and %q", out[0].JA4, out[9].JA4)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRunLinesWriteError(t *testing.T) {
	in := strings.Repeat("garbage\n", 100000)
	if err := RunLines(strings.NewReader(in), failWriter{}); err == nil {
		t.Error("got nil error, want the write error")
	}
}

func hexOf(b []byte) string {
	const d = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, d[c>>4], d[c&15])
	}
	return string(out)
}
