package e2e_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

func authGet(t *testing.T, c *http.Client, e *testEdge, host, authz string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
	req.Host = host
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAuthBasicStrikesBan: wrong Basic credentials are strikes; enough of them ban the client,
// which then cannot try again even with the right password.
func TestAuthBasicStrikesBan(t *testing.T) {
	// The client's connection outlives its ban (ban_closes_connections, on by default, would close
	// it), so its last try is answered, with a 403.
	f := startAuthEdge(t, "[ratelimit.bans]\nstrikes = 3\nwindow_ms = 60000\nban_ms = 60000\n"+
		"[server.abuse]\nban_closes_connections = false\n")
	c := client("h2")
	for i := range 3 {
		if got := authGet(t, c, f.e, "ops.test", basicHeader("alice", "guess")); got != 401 {
			t.Fatalf("guess %d: got %d, want 401", i, got)
		}
	}
	if got := authGet(t, c, f.e, "ops.test", f.basicOK); got != 403 {
		t.Fatalf("after 3 strikes: got %d, want 403 banned", got)
	}
	if _, ok := f.e.lastAccess(t, `"reason":"banned"`); !ok {
		t.Error("no banned reason in the access log")
	}
}

// TestAuthJWTSubRateLimit: a route policy keyed on jwt:sub counts each subject separately, whatever
// address it comes from.
func TestAuthJWTSubRateLimit(t *testing.T) {
	f := startAuthEdge(t, `
[[ratelimit.requests]]
name = "per-user"
key = "jwt:sub"
per_minute = 1
burst = 2
scope = "route"

[[routes]]
name = "limited"
host = "limited.test"
backend = "builtin:echo"
auth = "jwt:idp"
rate_limit = ["per-user"]
`)
	c := client("h1")
	u7 := "Bearer " + f.k1.sign(t, authClaims(nil))
	u8 := "Bearer " + f.k1.sign(t, authClaims(func(c jwt.MapClaims) { c["sub"] = "user-8" }))
	for i, want := range []int{200, 200, 429} {
		if got := authGet(t, c, f.e, "limited.test", u7); got != want {
			t.Fatalf("user-7 request %d: got %d, want %d", i, got, want)
		}
	}
	if got := authGet(t, c, f.e, "limited.test", u8); got != 200 {
		t.Fatalf("user-8: got %d, want 200 (its own bucket)", got)
	}
	if got := authGet(t, c, f.e, "limited.test", ""); got != 401 {
		t.Fatalf("no token: got %d, want 401 before the limiter", got)
	}
}

// TestAuthUsersFileReload: a changed users file takes effect on reload (the file watcher triggers
// one), and a broken one is refused while the old users keep working.
func TestAuthUsersFileReload(t *testing.T) {
	f := startAuthEdge(t, "")
	c := client("h1")
	usersFile := f.usersFile
	if got := authGet(t, c, f.e, "ops.test", basicHeader("bob", "new-pw")); got != 401 {
		t.Fatalf("bob before: got %d, want 401", got)
	}
	h, _ := bcrypt.GenerateFromPassword([]byte("new-pw"), bcrypt.MinCost)
	if err := os.WriteFile(usersFile, []byte("bob:"+string(h)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := f.e.Reload("test"); !res.OK {
		t.Fatalf("reload: %v", res.Problems)
	}
	if got := authGet(t, c, f.e, "ops.test", basicHeader("bob", "new-pw")); got != 200 {
		t.Fatalf("bob after reload: got %d, want 200", got)
	}
	if got := authGet(t, c, f.e, "ops.test", f.basicOK); got != 401 {
		t.Fatalf("alice after removal: got %d, want 401", got)
	}
	os.WriteFile(usersFile, []byte("bob:plaintext\n"), 0o644)
	if res := f.e.Reload("test"); res.OK {
		t.Fatal("a users file with a plain-text password was accepted")
	}
	if got := authGet(t, c, f.e, "ops.test", basicHeader("bob", "new-pw")); got != 200 {
		t.Fatalf("bob after a refused reload: got %d, want 200", got)
	}
}

// TestAuthNetworkRulesTrustedProxy: allow_cidrs judge the client address edge resolved from a
// trusted proxy's X-Forwarded-For, not the proxy's own address.
func TestAuthNetworkRulesTrustedProxy(t *testing.T) {
	// The helper opens [server]: trusted_proxies continues it.
	e := startEdge(t, `trusted_proxies = ["127.0.0.1/32"]

[[routes]]
name = "office"
backend = "builtin:echo"
allow_cidrs = ["10.0.0.0/8", "2001:db8::/32"]
`)
	for _, tc := range []struct {
		xff    string
		status int
	}{{"10.1.2.3", 200}, {"2001:db8::7", 200}, {"203.0.113.5", 403}, {"", 403}} {
		req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
		if tc.xff != "" {
			req.Header.Set("X-Forwarded-For", tc.xff)
		}
		resp, err := client("h1").Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("X-Forwarded-For %q: got %d, want %d", tc.xff, resp.StatusCode, tc.status)
		}
	}
}
