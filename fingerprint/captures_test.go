package fingerprint

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// captureLabels is the database label each captured client must get.
var captureLabels = map[string]string{
	"chromium (Debian 12 package, headless)":    "chrome",
	"firefox-esr (Debian 12 package, headless)": "firefox",
	"curl 7.88.1 (OpenSSL 3.0.19)":              "curl",
	"openssl s_client 3.0.19":                   "openssl-s_client",
	"wget":                                      "wget",
	"python 3.11.7 urllib":                      "python-urllib",
	"python 3.11.7 ssl":                         "python-urllib",
	"python requests":                           "python-requests",
	"go net/http":                               "go-http-client",
	"go crypto/tls default":                     "go-crypto-tls",
	"utls Chrome_133 (HelloChrome_Auto)":        "chrome",
	"utls Chrome_120":                           "chrome",
	"utls Chrome_115_PQ":                        "chrome",
	"utls Firefox_120 (HelloFirefox_Auto)":      "firefox",
	"utls Firefox_105":                          "firefox",
	"utls Safari_16_0 (HelloSafari_Auto)":       "safari",
	"utls Edge_85 (HelloEdge_Auto)":             "edge",
	"utls Edge_106":                             "chromium",
	"utls iOS_14 (HelloIOS_Auto)":               "ios-safari",
}

// TestCaptures checks the hellos of testdata/captures.jsonl (real Chromium
// and Firefox with X25519MLKEM768, curl, OpenSSL, wget, Python, Go, uTLS,
// captured by TestCaptureStarterDB): the golden fingerprints, the naive
// reference on the same bytes, both input forms, and the database label.
func TestCaptures(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "captures.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	db, err := LoadDB(shippedDB)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c capture
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(c.ID, func(t *testing.T) {
			msg := mustHex(t, c.HandshakeHex)
			fromRec, err := HandshakeFromRecords(mustHex(t, c.RecordHex))
			if err != nil || string(fromRec) != string(msg) {
				t.Fatalf("records: %v", err)
			}
			h, err := ParseClientHello(msg)
			if err != nil {
				t.Fatal(err)
			}
			fp := Compute(&h, TCP)
			want := Fingerprints{c.JA3, c.JA3Hash, c.JA4, c.JA4R, c.JA4O, c.JA4RO}
			if fp != want {
				t.Errorf("got %+v, want golden %+v", fp, want)
			}
			ja3, ja3h, ja4, ja4r := refFromHello(t, &h).fingerprints("t")
			if fp.JA3 != ja3 || fp.JA3Hash != ja3h || fp.JA4 != ja4 || fp.JA4R != ja4r {
				t.Errorf("reference: got %s %s %s, want %s %s %s", fp.JA3Hash, fp.JA4, fp.JA4R, ja3h, ja4, ja4r)
			}
			label, ok := captureLabels[c.ID]
			if !ok {
				t.Fatalf("no expected label for %q", c.ID)
			}
			if m, found := db.Lookup(&fp); !found || m.Label != label {
				t.Errorf("database: got %q (found %v), want %q", m.Label, found, label)
			}
		})
	}
	if n != len(captureLabels) {
		t.Errorf("got %d captures, want %d", n, len(captureLabels))
	}
}
