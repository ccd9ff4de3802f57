package fingerprint

import (
	stdtls "crypto/tls"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	utls "github.com/refraction-networking/utls"
)

var shippedDB = filepath.Join("..", "rules", "fingerprints.toml")

func entry(key, val, label, class, action string) string {
	return "[[fingerprint]]\n" + key + " = \"" + val + "\"\nlabel = \"" + label + "\"\nclass = \"" + class +
		"\"\naction = \"" + action + "\"\nsource = \"test\"\n"
}

func TestParseDBErrors(t *testing.T) {
	cases := []struct {
		name string
		data string
		want []string // substrings of the joined error
	}{
		{"toml syntax", "[[fingerprint]]\nja4 = \"x\n", []string{"f.toml:2:"}},
		{"unknown key", entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "c", "browser", "allow") + "colour = \"red\"\n",
			[]string{"f.toml:7: unknown key \"fingerprint.colour\""}},
		{"bad class and action on their lines", "# header\n" + entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "c", "robot", "drop"),
			[]string{"f.toml:5: fingerprint[0].class:", "f.toml:6: fingerprint[0].action:"}},
		{"second entry", entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "c", "browser", "allow") +
			entry("ja3_hash", "ABC", "x", "library", "flag"), []string{"f.toml:8: fingerprint[1].ja3_hash: ja3_hash must be 32"}},
		{"both keys", entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "c", "browser", "allow") + "ja3_hash = \"0149f47eabf9a20d0893e2a44e5a6323\"\n",
			[]string{"fingerprint[0].ja3_hash: give ja4 or ja3_hash, not both"}},
		{"neither key", "[[fingerprint]]\nlabel = \"a\"\nclass = \"bot\"\naction = \"flag\"\nsource = \"s\"\n",
			[]string{"f.toml:1: fingerprint[0]: ja4 or ja3_hash is required"}},
		{"missing label and source", "[[fingerprint]]\nja4 = \"t13d1516h2_8daaf6152771_e5627efa2ab1\"\nclass = \"bot\"\naction = \"flag\"\n",
			[]string{"fingerprint[0].label: label is required", "fingerprint[0].source: source is required"}},
		{"two sections", entry("ja4", "t13d1516h2_8daaf6152771", "c", "browser", "allow"), []string{"three sections"}},
		{"bad character", entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2a-1", "c", "browser", "allow"), []string{"only letters, digits"}},
		{"exact of wrong shape", entry("ja4", "t13d1516h2_8daaf615277_e5627efa2ab1", "c", "browser", "allow"), []string{"not of the form"}},
		{"duplicate", entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "a", "browser", "allow") +
			entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "b", "browser", "allow"), []string{"f.toml:8: fingerprint[1].ja4: duplicate of the entry labelled \"a\""}},
		{"wrong type", "[[fingerprint]]\nja4 = 5\n", []string{"f.toml:2:"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, err := ParseDB([]byte(tc.data), "f.toml")
			if err == nil {
				t.Fatalf("got db with %d entries, want an error", db.Len())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestLookupOrder(t *testing.T) {
	data := entry("ja4", "t13d*_8daaf6152771_*", "glob-first", "browser", "allow") +
		entry("ja4", "t13*_8daaf6152771_*", "glob-second", "bot", "limit") +
		entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "exact", "browser", "allow") +
		entry("ja3_hash", "0149f47eabf9a20d0893e2a44e5a6323", "by-ja3", "library", "flag") +
		entry("ja4", "*_*_000000000000", "no-extensions", "scanner", "block") +
		entry("ja4", "t12*h*_*_*", "tls12-h-alpn", "bot", "limit")
	db, err := ParseDB([]byte(data), "f.toml")
	if err != nil {
		t.Fatal(err)
	}
	if db.Len() != 6 {
		t.Fatalf("Len: got %d, want 6", db.Len())
	}
	cases := []struct {
		ja4, ja3 string
		want     string // label, "" for no match
	}{
		{"t13d1516h2_8daaf6152771_e5627efa2ab1", "0149f47eabf9a20d0893e2a44e5a6323", "exact"},
		{"t13d9999h2_aaaaaaaaaaaa_e5627efa2ab1", "0149f47eabf9a20d0893e2a44e5a6323", "by-ja3"},
		{"t13d1515h2_8daaf6152771_de4a06bb82e3", "", "glob-first"},
		{"t13i1515h2_8daaf6152771_de4a06bb82e3", "", "glob-second"},
		{"t10d230100_6a57a6f57151_000000000000", "", "no-extensions"},
		{"t12d1311h2_8b80da21ef18_eb7c9aabf852", "", "tls12-h-alpn"},
		{"t12d120700_d34a8e72043a_036209cd1ead", "", ""},
		{"garbage", "", ""},
		{"", "", ""},
	}
	for _, tc := range cases {
		m, ok := db.Lookup(&Fingerprints{JA4: tc.ja4, JA3Hash: tc.ja3})
		if got := m.Label; got != tc.want || ok != (tc.want != "") {
			t.Errorf("Lookup(%s, %s): got %q %v, want %q", tc.ja4, tc.ja3, got, ok, tc.want)
		}
	}
	var nilDB *DB
	if _, ok := nilDB.Lookup(&Fingerprints{JA4: "t13d1516h2_8daaf6152771_e5627efa2ab1"}); ok {
		t.Error("nil DB: got a match")
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"abc", "abc", true}, {"abc", "abd", false},
		{"t13d*", "t13d1516h2", true}, {"t13d*", "t13i1516h2", false}, {"*h2", "t13d1516h2", true},
		{"t*d*h2", "t13d1516h2", true}, {"t*d*h3", "t13d1516h2", false}, {"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false}, {"**", "x", true}, {"a*", "", false}, {"*a", "ba", true}, {"*a*a", "aaa", true},
	}
	for _, tc := range cases {
		if got := glob(tc.pat, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q): got %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
}

func TestLookupAllocs(t *testing.T) {
	db, err := LoadDB(shippedDB)
	if err != nil {
		t.Fatal(err)
	}
	fps := []Fingerprints{{JA4: "t13d1516h2_8daaf6152771_d8a2da3f94cd"}, {JA4: "t13d9999h2_8daaf6152771_000000000000"},
		{JA4: "t12d120700_d34a8e72043a_036209cd1ead", JA3Hash: "6c0f0a346dcd84cb4b97a0d9382c53fd"}}
	for _, fp := range fps {
		if n := testing.AllocsPerRun(100, func() { db.Lookup(&fp) }); n != 0 {
			t.Errorf("Lookup(%s): got %v allocs, want 0", fp.JA4, n)
		}
	}
}

// TestShippedDB loads rules/fingerprints.toml and checks it classifies hellos
// generated right now by the clients its entries were measured from.
func TestShippedDB(t *testing.T) {
	db, err := LoadDB(shippedDB)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		client func(net.Conn)
		label  string
		class  Class
	}{
		{"go default", goClient(&stdtls.Config{ServerName: "localhost"}), "go-crypto-tls", ClassLibrary},
		{"go net/http-like", goClient(&stdtls.Config{ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}}), "go-http-client", ClassLibrary},
		{"go ip literal (pattern)", goClient(&stdtls.Config{InsecureSkipVerify: true}), "go-crypto-tls", ClassLibrary},
		{"chrome", utlsClient(utls.HelloChrome_Auto), "chrome", ClassBrowser},
		{"firefox", utlsClient(utls.HelloFirefox_Auto), "firefox", ClassBrowser},
		{"safari", utlsClient(utls.HelloSafari_Auto), "safari", ClassBrowser},
		{"edge", utlsClient(utls.HelloEdge_Auto), "edge", ClassBrowser},
		{"ios", utlsClient(utls.HelloIOS_Auto), "ios-safari", ClassBrowser},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := captureHello(t, tc.client)
			h, err := ParseClientHello(got.msg)
			if err != nil {
				t.Fatal(err)
			}
			fp := Compute(&h, TCP)
			m, ok := db.Lookup(&fp)
			if !ok || m.Label != tc.label || m.Class != tc.class {
				t.Errorf("%s: got %q/%v (found %v), want %q/%v", fp.JA4, m.Label, m.Class, ok, tc.label, tc.class)
			}
		})
	}
	// Corpus captures of the same tools on the build machine.
	if _, err := os.Stat(corpusDir); err != nil {
		return
	}
	want := map[string]string{
		"generated:curl-7.88.1-openssl-3.0.19":                       "curl",
		"generated:openssl-3.0.19-s_client":                          "openssl-s_client",
		"generated:python-3.11.7-ssl-default-context":                "python-urllib",
		"generated:quic-go-v0.65.0(go1.26 crypto/tls QUIC)#udp44163": "quic-go",
		"generated:go1.26-crypto/tls-default-noalpn":                 "go-crypto-tls",
		"foxio:latest.pcapng#f101.1":                                 "chromium-family",
	}
	for _, v := range loadVectors(t) {
		label, ok := want[v.ID]
		if !ok {
			continue
		}
		delete(want, v.ID)
		m, found := db.Lookup(&Fingerprints{JA4: *v.JA4, JA3Hash: *v.JA3Hash})
		if !found || m.Label != label {
			t.Errorf("%s: got %q (found %v), want %q", v.ID, m.Label, found, label)
		}
	}
	for id := range want {
		t.Errorf("vector %s not in the corpus", id)
	}
}

// TestLoadDBWrapsCause: the load error keeps its cause for errors.Is, and its text.
func TestLoadDBWrapsCause(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.toml")
	_, err := LoadDB(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want an error wrapping fs.ErrNotExist", err)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "fingerprint: open "+missing) {
		t.Errorf("got %q, want it to start with %q", err, "fingerprint: open "+missing)
	}
}
