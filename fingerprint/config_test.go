package fingerprint

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if c.Database != "rules/fingerprints.toml" || c.UAMismatchAction != "flag" || c.HeaderJA4R || c.CaptureMaxBytes != 65536 {
		t.Errorf("got %+v", c)
	}
	// The default path is relative to the repository root.
	c.Database = shippedDB
	if errs, warns := c.Validate(); len(errs) != 0 || len(warns) != 0 {
		t.Errorf("Validate: got errs %q warns %q, want none", errs, warns)
	}
}

func TestConfigDecode(t *testing.T) {
	var c struct {
		Fingerprint Config `toml:"fingerprint"`
	}
	c.Fingerprint = DefaultConfig()
	md, err := toml.Decode("[fingerprint]\ndatabase = \"x.toml\"\nua_mismatch_action = \"block\"\nheader_ja4_r = true\ncapture_max_bytes = 8192\n", &c)
	if err != nil || len(md.Undecoded()) != 0 {
		t.Fatalf("decode: %v, undecoded %v", err, md.Undecoded())
	}
	want := Config{Database: "x.toml", UAMismatchAction: "block", HeaderJA4R: true, CaptureMaxBytes: 8192}
	if c.Fingerprint != want {
		t.Errorf("got %+v, want %+v", c.Fingerprint, want)
	}
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[[fingerprint]]\nja4 = \"nope\"\nlabel = \"x\"\nclass = \"bot\"\naction = \"drop\"\nsource = \"s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.toml")
	if err := os.WriteFile(empty, []byte("# nothing yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		mod       func(*Config)
		wantErrs  []string
		wantWarns []string
	}{
		{"ok", func(*Config) {}, nil, nil},
		{"block", func(c *Config) { c.UAMismatchAction = "block" }, nil, nil},
		{"bad action", func(c *Config) { c.UAMismatchAction = "deny" }, []string{"ua_mismatch_action: must be"}, nil},
		{"empty action", func(c *Config) { c.UAMismatchAction = "" }, []string{"ua_mismatch_action: must be"}, nil},
		{"capture too small", func(c *Config) { c.CaptureMaxBytes = 100 }, []string{"capture_max_bytes: must be between 4096 and 1048576, got 100"}, nil},
		{"capture too large", func(c *Config) { c.CaptureMaxBytes = 1 << 30 }, []string{"capture_max_bytes: must be between"}, nil},
		{"missing database", func(c *Config) { c.Database = filepath.Join(dir, "missing.toml") }, []string{"database: fingerprint: open"}, nil},
		{"bad database, all problems with lines", func(c *Config) { c.Database = bad },
			[]string{"database: fingerprint: " + bad + ":5: fingerprint[0].action", "database: fingerprint: " + bad + ":2: fingerprint[0].ja4"}, nil},
		{"empty database", func(c *Config) { c.Database = empty }, nil, []string{"database: " + empty + " has no entries"}},
		{"no database", func(c *Config) { c.Database = "" }, nil, []string{"database: empty"}},
		{"several problems at once", func(c *Config) { c.UAMismatchAction = "x"; c.CaptureMaxBytes = 0 },
			[]string{"ua_mismatch_action", "capture_max_bytes"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Database = shippedDB
			tc.mod(&c)
			errs, warns := c.Validate()
			check := func(kind string, got, want []string) {
				if len(got) != len(want) {
					t.Errorf("%s: got %q, want %d matching %q", kind, got, len(want), want)
					return
				}
				for i := range want {
					if !strings.HasPrefix(got[i], want[i]) {
						t.Errorf("%s[%d]: got %q, want prefix %q", kind, i, got[i], want[i])
					}
				}
			}
			check("errs", errs, tc.wantErrs)
			check("warns", warns, tc.wantWarns)
		})
	}
}

// TestConfigEffects shows the observable effect of every key.
func TestConfigEffects(t *testing.T) {
	chromeUA := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	c := DefaultConfig()
	// ua_mismatch_action
	if got := c.UAMismatchVerdict(chromeUA, ClassLibrary); got != ActionFlag {
		t.Errorf("flag: got %v, want flag", got)
	}
	c.UAMismatchAction = "block"
	if got := c.UAMismatchVerdict(chromeUA, ClassLibrary); got != ActionBlock {
		t.Errorf("block: got %v, want block", got)
	}
	if got := c.UAMismatchVerdict(chromeUA, ClassBrowser); got != ActionNone {
		t.Errorf("no mismatch: got %v, want none", got)
	}
	// header_ja4_r
	fp := Fingerprints{JA4: "t13d1516h2_8daaf6152771_e5627efa2ab1", JA3Hash: "cd08e31494f9531f560d64c695473da9", JA4R: "t13d1516h2_002f"}
	h := http.Header{}
	c.SetHeaders(h, &fp)
	if h.Get("Edge-JA4") != fp.JA4 || h.Get("Edge-JA3") != fp.JA3Hash || h.Get("Edge-JA4-R") != "" {
		t.Errorf("header_ja4_r=false: got %v", h)
	}
	c.HeaderJA4R = true
	h = http.Header{}
	c.SetHeaders(h, &fp)
	if h.Get("Edge-JA4-R") != fp.JA4R {
		t.Errorf("header_ja4_r=true: got %v", h)
	}
	// database
	c.Database = shippedDB
	db, err := c.LoadDB()
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := db.Lookup(&fp); !ok || m.Label != "chromium" {
		t.Errorf("database lookup: got %+v %v", m, ok)
	}
	c.Database = ""
	if db, err = c.LoadDB(); err != nil {
		t.Fatal(err)
	}
	if _, ok := db.Lookup(&fp); ok {
		t.Error("no database: got a match")
	}
	// capture_max_bytes
	msg := specHello().msg()
	for _, tc := range []struct {
		max    int
		wantOK bool
	}{{4096, true}, {len(msg) + 4, false}} {
		c.CaptureMaxBytes = tc.max
		cc := c.WrapConn(&chunkConn{r: bytes.NewReader(records(msg, 1<<14)), n: 1 << 16})
		readAll(cc)
		if _, _, err := cc.Hello(); (err == nil) != tc.wantOK {
			t.Errorf("capture_max_bytes=%d: got %v, want ok=%v", tc.max, err, tc.wantOK)
		}
	}
}
