package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateGeoIPDatabase checks that --validate opens the [geoip] databases: a file that is not
// a MaxMind database makes the configuration invalid, naming the key.
func TestValidateGeoIPDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "country.mmdb")
	os.WriteFile(db, []byte("not a database"), 0o644)
	cfg := filepath.Join(dir, "edge.toml")
	os.WriteFile(cfg, []byte("[geoip]\ncountry_db = \"country.mmdb\"\n[[routes]]\nname = \"r\"\nbackend = \"builtin:echo\"\n"), 0o644)
	code, _, stderr := runEdge(t, "--validate", "--config", cfg)
	if code != exitInvalid || !strings.Contains(stderr, "geoip.country_db") {
		t.Fatalf("got exit %d, stderr:\n%s\nwant exit %d naming geoip.country_db", code, stderr, exitInvalid)
	}
}
