package edge

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"edge/fingerprint"
	"edge/trust"
)

// TestSignedDataFiles: with trusted_keys set, an unsigned or tampered data file makes the
// configuration invalid at start and is refused on reload while the old data keeps serving.
func TestSignedDataFiles(t *testing.T) {
	dir := t.TempDir()
	pub, priv, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pubFile := filepath.Join(dir, "fleet.pub")
	os.WriteFile(pubFile, pub, 0o644)
	db := filepath.Join(dir, "fp.toml")
	dbv1 := "[[fingerprint]]\nja4 = \"t13i*_*_*\"\nlabel = \"v1\"\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n"
	os.WriteFile(db, []byte(dbv1), 0o644)
	cfgPath := filepath.Join(dir, "edge.toml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf("%s[server]\nstate_dir = %q\n[data]\ntrusted_keys = [\"fleet.pub\"]\n[fingerprint]\ndatabase = \"fp.toml\"\n%s",
		testListen, filepath.Join(dir, "state"), echoRoute)), 0o644)

	_, problems := LoadFile(cfgPath)
	if !problems.HasErrors() || !strings.Contains(problems.Err().Error(), "unsigned") {
		t.Fatalf("unsigned database: got %v, want an 'unsigned' error", problems)
	}

	sign := func(content string) {
		sig, err := trust.Sign(priv, db, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(db+".sig", sig, 0o644)
	}
	sign(dbv1)
	cfg, problems := LoadFile(cfgPath)
	if problems.HasErrors() {
		t.Fatalf("signed database rejected: %v", problems)
	}
	srv, err := NewServer(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), AccessLog: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(t.Context())
	if n := srv.snap.Load().fpDB.Len(); n != 1 {
		t.Fatalf("database has %d entries", n)
	}

	// Tampered on disk: the reload is refused and the signed version keeps serving.
	os.WriteFile(db, []byte(strings.Replace(dbv1, "allow", "block", 1)), 0o644)
	res := srv.Reload("api")
	if res.OK || !strings.Contains(res.Problems.Err().Error(), "bad signature") {
		t.Fatalf("tampered reload: ok=%v %v", res.OK, res.Problems)
	}
	probe := &fingerprint.Fingerprints{JA4: "t13i1311h2_aaaaaaaaaaaa_bbbbbbbbbbbb"}
	if m, ok := srv.snap.Load().fpDB.Lookup(probe); !ok || m.Label != "v1" || m.Action != fingerprint.ActionAllow {
		t.Errorf("after a refused reload the database is %+v, want v1 intact", m)
	}

	// Properly signed new version: accepted.
	v2 := strings.Replace(dbv1, "v1", "v2", 1)
	os.WriteFile(db, []byte(v2), 0o644)
	sign(v2)
	if res := srv.Reload("api"); !res.OK {
		t.Fatalf("signed update rejected: %v", res.Problems)
	}
	if m, _ := srv.snap.Load().fpDB.Lookup(probe); m.Label != "v2" {
		t.Errorf("after a signed update the label is %q, want v2", m.Label)
	}
}
