package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestFingerprintDatabaseActions: a database entry matching the Go client's JA4 decides the request:
// "block" refuses it with 403; a browser User-Agent on a "library" fingerprint is a ua_mismatch,
// blocked when ua_mismatch_action = "block".
func TestFingerprintDatabaseActions(t *testing.T) {
	tests := []struct {
		name, class, action, uaAction, ua string
		want                              int
	}{
		{"block entry", "malicious", "block", "flag", "Go-http-client/1.1", http.StatusForbidden},
		{"allow entry", "library", "allow", "flag", "Go-http-client/1.1", http.StatusOK},
		{"ua mismatch flagged", "library", "allow", "flag", "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36", http.StatusOK},
		{"ua mismatch blocked", "library", "allow", "block", "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36", http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "fp.toml")
			os.WriteFile(db, []byte(fmt.Sprintf(`
[[fingerprint]]
ja4 = "t13i*_*_*"
label = "go-test"
class = %q
action = %q
source = "test"
`, tc.class, tc.action)), 0o644)
			e := startEdge(t, fmt.Sprintf("[fingerprint]\ndatabase = %q\nua_mismatch_action = %q\n", db, tc.uaAction)+echoRoute)
			req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
			req.Header.Set("User-Agent", tc.ua)
			resp, err := client("h1").Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("got %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
