package e2e_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// idpKey is a signing key of the test identity provider.
type idpKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newIdPKey(t testing.TB, kid string) idpKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return idpKey{kid: kid, priv: k}
}

func (k idpKey) sign(t testing.TB, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testIdP serves a JWKS whose keys the test rotates.
type testIdP struct {
	*httptest.Server
	mu   sync.Mutex
	keys []idpKey
}

func newTestIdP(t testing.TB, keys ...idpKey) *testIdP {
	idp := &testIdP{keys: keys}
	idp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		idp.mu.Lock()
		defer idp.mu.Unlock()
		var doc struct {
			Keys []map[string]string `json:"keys"`
		}
		for _, k := range idp.keys {
			raw, _ := k.priv.PublicKey.Bytes()
			b64 := base64.RawURLEncoding.EncodeToString
			doc.Keys = append(doc.Keys, map[string]string{"kty": "EC", "crv": "P-256", "kid": k.kid, "alg": "ES256",
				"x": b64(raw[1:33]), "y": b64(raw[33:])})
		}
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(idp.Close)
	return idp
}

func (idp *testIdP) rotate(keys ...idpKey) {
	idp.mu.Lock()
	idp.keys = keys
	idp.mu.Unlock()
}

// authClaims are valid claims for the test's jwt:idp section, changed by mod.
func authClaims(mod func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": "https://idp.test", "aud": "api", "sub": "user-7", "exp": now.Add(time.Hour).Unix(),
		"iat": now.Unix(), "role": "reader"}
	if mod != nil {
		mod(c)
	}
	return c
}

// authFixture is an edge with one route per mechanism, plus its identity provider and auth
// service.
type authFixture struct {
	e          *testEdge
	idp        *testIdP
	k1, k2     idpKey
	basicOK    string // Authorization for a bcrypt user
	basicArgon string // Authorization for an argon2id user
	usersFile  string
}

// cheapArgon2id hashes password under argon2id with small parameters (1 MiB, one pass), so the
// test stays fast under the race detector; production files use auth.HashArgon2id's.
func cheapArgon2id(password string) string {
	salt := []byte("saltsaltsaltsalt")
	key := argon2.IDKey([]byte(password), salt, 1, 1024, 1, 32)
	return "$argon2id$v=19$m=1024,t=1,p=1$" + base64.RawStdEncoding.EncodeToString(salt) + "$" +
		base64.RawStdEncoding.EncodeToString(key)
}

func basicHeader(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

func startAuthEdge(t *testing.T, extra string) *authFixture {
	t.Helper()
	f := &authFixture{k1: newIdPKey(t, "k1"), k2: newIdPKey(t, "k2")}
	f.idp = newTestIdP(t, f.k1)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer let-me-in":
			w.Header().Set("X-Auth-User", "svc-user")
			w.WriteHeader(http.StatusOK)
		case "Bearer forbidden":
			w.WriteHeader(http.StatusForbidden)
		case "Bearer slow":
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		case "Bearer broken":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="sso"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(svc.Close)
	dir := t.TempDir()
	bc, _ := bcrypt.GenerateFromPassword([]byte("bcrypt-pw"), bcrypt.MinCost)
	users := "alice:" + string(bc) + "\nann:" + cheapArgon2id("argon-pw") + "\n"
	usersFile := filepath.Join(dir, "users.txt")
	if err := os.WriteFile(usersFile, []byte(users), 0o644); err != nil {
		t.Fatal(err)
	}
	f.usersFile = usersFile
	f.basicOK = basicHeader("alice", "bcrypt-pw")
	f.basicArgon = basicHeader("ann", "argon-pw")
	cfg := fmt.Sprintf(`
[auth.jwt.idp]
jwks_url = %q
issuer = "https://idp.test"
audiences = ["api"]
algorithms = ["ES256"]
clock_skew_ms = 5000
required_claims = ["role"]
claim_headers = { "X-User" = "sub", "X-Role" = "role" }
jwks_min_refresh_ms = -1

[auth.jwt.down]
jwks_url = "http://127.0.0.1:1/jwks"
jwks_timeout_ms = 300

[auth.basic.ops]
users_file = %q
realm = "ops"

[auth.forward.sso]
url = %q
timeout_ms = 300
request_headers = ["Authorization"]
response_headers = ["X-Auth-User"]

[[routes]]
name = "office"
host = "office.test"
backend = "builtin:echo"
allow_cidrs = ["10.0.0.0/8", "2001:db8::/32"]

[[routes]]
name = "local"
host = "local.test"
backend = "builtin:echo"
allow_cidrs = ["127.0.0.0/8", "::1/128"]
deny_cidrs = ["10.0.0.0/8"]

[[routes]]
name = "denied"
host = "denied.test"
backend = "builtin:echo"
deny_cidrs = ["127.0.0.1"]

[[routes]]
name = "api"
host = "api.test"
backend = "builtin:echo"
auth = "jwt:idp"

[[routes]]
name = "down"
host = "down.test"
backend = "builtin:echo"
auth = "jwt:down"

[[routes]]
name = "ops"
host = "ops.test"
backend = "builtin:echo"
auth = "basic:ops"

[[routes]]
name = "sso"
host = "sso.test"
backend = "builtin:echo"
auth = "forward:sso"
`, f.idp.URL, usersFile, svc.URL) + extra
	f.e = startEdgeFile(t, filepath.Join(dir, "edge.toml"), cfg)
	return f
}

// authCase is one request of the auth parity table and what edge must answer.
type authCase struct {
	name      string
	host      string
	authz     string
	header    map[string]string
	status    int
	reason    string // the access log's reason ("" when served)
	challenge string // prefix of WWW-Authenticate on a 401
	check     func(t *testing.T, echo echoReply)
}

func (f *authFixture) cases(t *testing.T) []authCase {
	k1, k2 := f.k1, f.k2
	tok := func(mod func(jwt.MapClaims)) string { return "Bearer " + k1.sign(t, authClaims(mod)) }
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, authClaims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	other := newIdPKey(t, "k1") // claims kid k1 but is not the IdP's key
	return []authCase{
		{name: "network outside allow list", host: "office.test", status: 403, reason: "forbidden_network"},
		{name: "network inside allow list", host: "local.test", status: 200},
		{name: "network in deny list", host: "denied.test", status: 403, reason: "forbidden_network"},

		{name: "jwt valid", host: "api.test", authz: tok(nil), header: map[string]string{"X-User": "forged", "Edge-Auth-User": "forged"}, status: 200,
			check: func(t *testing.T, echo echoReply) {
				for h, want := range map[string]string{"X-User": "user-7", "X-Role": "reader", "Edge-Auth-User": "user-7", "Edge-Auth-Method": "jwt:idp"} {
					if got := strings.Join(echo.Headers[h], ","); got != want {
						t.Errorf("backend %s: got %q, want %q", h, got, want)
					}
				}
			}},
		{name: "jwt rotated key", host: "api.test", authz: "Bearer " + k2.sign(t, authClaims(nil)), status: 200},
		{name: "jwt missing", host: "api.test", status: 401, reason: "unauthorized", challenge: `Bearer realm="idp"`},
		{name: "jwt empty bearer", host: "api.test", authz: "Bearer", status: 401, reason: "unauthorized", challenge: `Bearer realm="idp", error="invalid_request"`},
		{name: "jwt wrong scheme", host: "api.test", authz: "Token abc", status: 401, reason: "unauthorized"},
		{name: "jwt bad token68", host: "api.test", authz: "Bearer a b c", status: 401, reason: "unauthorized"},
		{name: "jwt garbage", host: "api.test", authz: "Bearer not.a.token", status: 401, reason: "unauthorized", challenge: `Bearer realm="idp", error="invalid_token"`},
		{name: "jwt expired", host: "api.test", authz: tok(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), status: 401, reason: "unauthorized"},
		{name: "jwt not yet valid", host: "api.test", authz: tok(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Minute).Unix() }), status: 401, reason: "unauthorized"},
		{name: "jwt wrong audience", host: "api.test", authz: tok(func(c jwt.MapClaims) { c["aud"] = "billing" }), status: 401, reason: "unauthorized"},
		{name: "jwt wrong issuer", host: "api.test", authz: tok(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }), status: 401, reason: "unauthorized"},
		{name: "jwt missing required claim", host: "api.test", authz: tok(func(c jwt.MapClaims) { delete(c, "role") }), status: 401, reason: "unauthorized"},
		{name: "jwt alg none", host: "api.test", authz: "Bearer " + none, status: 401, reason: "unauthorized"},
		{name: "jwt unknown signer", host: "api.test", authz: "Bearer " + other.sign(t, authClaims(nil)), status: 401, reason: "unauthorized"},
		{name: "jwt oversized", host: "api.test", authz: tok(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("p", 9000) }), status: 401, reason: "unauthorized"},
		{name: "jwt keys unavailable", host: "down.test", authz: tok(nil), status: 503, reason: "auth_unavailable"},

		{name: "basic bcrypt", host: "ops.test", authz: f.basicOK, status: 200,
			check: func(t *testing.T, echo echoReply) {
				if echo.Headers["Authorization"] != nil {
					t.Errorf("the password reached the backend: %v", echo.Headers["Authorization"])
				}
				if got := first(echo.Headers["Edge-Auth-User"]); got != "alice" {
					t.Errorf("Edge-Auth-User: got %q, want alice", got)
				}
			}},
		{name: "basic argon2id", host: "ops.test", authz: f.basicArgon, status: 200},
		{name: "basic missing", host: "ops.test", status: 401, reason: "unauthorized", challenge: `Basic realm="ops"`},
		{name: "basic wrong password", host: "ops.test", authz: basicHeader("alice", "nope"), status: 401, reason: "unauthorized", challenge: `Basic realm="ops"`},
		{name: "basic malformed base64", host: "ops.test", authz: "Basic %%%", status: 401, reason: "unauthorized"},
		{name: "basic no colon", host: "ops.test", authz: "Basic " + base64.StdEncoding.EncodeToString([]byte("alice")), status: 401, reason: "unauthorized"},

		{name: "forward allowed", host: "sso.test", authz: "Bearer let-me-in", header: map[string]string{"X-Auth-User": "forged"}, status: 200,
			check: func(t *testing.T, echo echoReply) {
				if got := strings.Join(echo.Headers["X-Auth-User"], ","); got != "svc-user" {
					t.Errorf("X-Auth-User: got %q, want svc-user", got)
				}
			}},
		{name: "forward unauthorized", host: "sso.test", status: 401, reason: "unauthorized", challenge: `Bearer realm="sso"`},
		{name: "forward forbidden", host: "sso.test", authz: "Bearer forbidden", status: 403, reason: "forbidden"},
		{name: "forward timeout", host: "sso.test", authz: "Bearer slow", status: 503, reason: "auth_unavailable"},
		{name: "forward service error", host: "sso.test", authz: "Bearer broken", status: 503, reason: "auth_unavailable"},
	}
}

// TestAuthParity runs every auth mechanism's table over HTTP/1.1, HTTP/2 and HTTP/3: the same
// status, reason, challenge and backend headers on each.
func TestAuthParity(t *testing.T) {
	f := startAuthEdge(t, "")
	f.idp.rotate(f.k1, f.k2) // the IdP rotated before any client used k2
	cases := f.cases(t)
	clients := map[string]*http.Client{"h1": client("h1"), "h2": client("h2"), "h3": client("h3")}
	counts := map[string]int{}
	for _, proto := range []string{"h1", "h2", "h3"} {
		for _, tc := range cases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				req, _ := http.NewRequest("GET", f.e.url("https", "/x"), nil)
				req.Host = tc.host
				if tc.authz != "" {
					req.Header.Set("Authorization", tc.authz)
				}
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				resp, err := clients[proto].Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("got %d %s, want %d", resp.StatusCode, body, tc.status)
				}
				rid := resp.Header.Get(hdrRequestID)
				if tc.reason != "" {
					counts[tc.reason]++
					if !strings.Contains(string(body), rid) {
						t.Errorf("error body %q lacks the request id", body)
					}
					if a, ok := f.e.lastAccess(t, `"request_id":"`+rid+`"`); !ok || a.Reason != tc.reason {
						t.Errorf("access log for %s lacks reason %s: %+v (found %v)", rid, tc.reason, a, ok)
					}
				}
				if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode == 401 && !strings.HasPrefix(got, tc.challenge) || resp.StatusCode == 401 && got == "" {
					t.Errorf("WWW-Authenticate: got %q, want prefix %q", got, tc.challenge)
				}
				if tc.check != nil {
					var echo echoReply
					if err := json.Unmarshal(body, &echo); err != nil {
						t.Fatalf("echo: %v", err)
					}
					tc.check(t, echo)
				}
			})
		}
	}
	for _, want := range []string{`"auth":"jwt:idp","auth_user":"user-7"`, `"auth":"basic:ops","auth_user":"alice"`, `"auth":"forward:sso"`} {
		if !strings.Contains(f.e.access.String(), want) {
			t.Errorf("access log lacks %s", want)
		}
	}
	if strings.Contains(f.e.access.String(), "bcrypt-pw") || strings.Contains(f.e.access.String(), f.k1.sign(t, authClaims(nil))[:30]) {
		t.Error("the access log holds a password or token")
	}
	checkDenied(t, f.e, counts)
	// The status page counts the same reasons.
	status := fetchStatus(t, f.e.url("admin", ""))
	for reason, n := range counts {
		if got := countOf(status.Requests.Denied, reason); got != uint64(n) {
			t.Errorf("status page %s: got %d, want %d", reason, got, n)
		}
	}
}

// checkDenied checks that /metrics counts exactly n edge_denied_total for each reason of counts.
func checkDenied(t *testing.T, e *testEdge, counts map[string]int) {
	t.Helper()
	m := scrape(t, e)
	for reason, n := range counts {
		labels := map[string]string{"reason": reason}
		if !m.has("edge_denied_total", labels) || m.sum("edge_denied_total", labels) != float64(n) {
			t.Errorf("metrics: edge_denied_total{reason=%q} = %v, want %d", reason, m.match("edge_denied_total", labels), n)
		}
	}
}
