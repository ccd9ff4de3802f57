package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testKey is a signing key with its JWK.
type testKey struct {
	kid  string
	alg  string
	priv crypto.Signer
}

func newECKey(t testing.TB, kid string) testKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{kid: kid, alg: "ES256", priv: k}
}

func (k testKey) jwk() map[string]string {
	b64 := base64.RawURLEncoding.EncodeToString
	switch p := k.priv.Public().(type) {
	case *ecdsa.PublicKey:
		raw, _ := p.Bytes()
		return map[string]string{"kty": "EC", "crv": "P-256", "kid": k.kid, "alg": k.alg, "use": "sig",
			"x": b64(raw[1:33]), "y": b64(raw[33:])}
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": k.kid, "n": b64(p.N.Bytes()), "e": b64([]byte{1, 0, 1})}
	case ed25519.PublicKey:
		return map[string]string{"kty": "OKP", "crv": "Ed25519", "kid": k.kid, "x": b64(p)}
	}
	panic("key type")
}

func jwksOf(keys ...testKey) []byte {
	doc := map[string]any{"keys": []any{}}
	for _, k := range keys {
		doc["keys"] = append(doc["keys"].([]any), k.jwk())
	}
	b, _ := json.Marshal(doc)
	return b
}

func (k testKey) sign(t testing.TB, claims jwt.MapClaims) string {
	m := jwt.GetSigningMethod(k.alg)
	tok := jwt.NewWithClaims(m, claims)
	if k.kid != "" {
		tok.Header["kid"] = k.kid
	}
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validClaims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{"iss": "https://idp.example", "aud": "api", "sub": "user-1",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "nbf": now.Unix(), "tenant": "t1"}
}

func TestJWTVerifyKeysFile(t *testing.T) {
	now := time.Now()
	ec := newECKey(t, "ec1")
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs := testKey{kid: "rs1", alg: "RS256", priv: rk}
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	ed := testKey{kid: "ed1", alg: "EdDSA", priv: edPriv}
	other := newECKey(t, "ec1") // same kid, a key edge does not know
	cfg := JWTConfig{KeysFile: "keys.json", Issuer: "https://idp.example", Audiences: []string{"api", "api2"},
		Algorithms: []string{"ES256", "RS256", "EdDSA"}, RequiredClaims: []string{"tenant"}, ClockSkewMS: 30_000}
	v, err := NewJWTVerifier(cfg, jwksOf(ec, rs, ed), JWTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rsaPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: mustPKIX(t, &rk.PublicKey)})
	hmacConfusion := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, validClaims(now))
		tok.Header["kid"] = "rs1"
		s, _ := tok.SignedString(rsaPEM) // the classic attack: the public key as HMAC secret
		return s
	}
	with := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := validClaims(now)
		mod(c)
		return c
	}
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"ES256", ec.sign(t, validClaims(now)), true},
		{"RS256", rs.sign(t, validClaims(now)), true},
		{"EdDSA", ed.sign(t, validClaims(now)), true},
		{"second audience", ec.sign(t, with(func(c jwt.MapClaims) { c["aud"] = []string{"x", "api2"} })), true},
		{"within clock skew", ec.sign(t, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })), true},
		{"expired", ec.sign(t, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })), false},
		{"not yet valid", ec.sign(t, with(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() })), false},
		{"issued in the future", ec.sign(t, with(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })), false},
		{"no exp", ec.sign(t, with(func(c jwt.MapClaims) { delete(c, "exp") })), false},
		{"wrong audience", ec.sign(t, with(func(c jwt.MapClaims) { c["aud"] = "other" })), false},
		{"no audience", ec.sign(t, with(func(c jwt.MapClaims) { delete(c, "aud") })), false},
		{"wrong issuer", ec.sign(t, with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), false},
		{"missing required claim", ec.sign(t, with(func(c jwt.MapClaims) { delete(c, "tenant") })), false},
		{"unknown key", other.sign(t, validClaims(now)), false},
		{"alg none", noneToken(validClaims(now)), false},
		{"HMAC with the RSA public key", hmacConfusion(), false},
		{"tampered payload", tamper(ec.sign(t, validClaims(now))), false},
		{"garbage", "not.a.jwt", false},
		{"two parts", "abc.def", false},
		{"empty", "", false},
		{"oversized", ec.sign(t, with(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("x", 9000) })), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := v.Verify(context.Background(), tc.token)
			if (err == nil) != tc.ok {
				t.Fatalf("got err %v, want ok=%v", err, tc.ok)
			}
			if err != nil && tc.token != "" && len(tc.token) > 20 && strings.Contains(err.Error(), tc.token[:20]) {
				t.Errorf("error %q quotes the token", err)
			}
			if tc.ok {
				if sub, _ := ClaimString(claims, "sub"); sub != "user-1" {
					t.Errorf("sub: got %q, want user-1", sub)
				}
			}
		})
	}
	// PEM keys without kid work too.
	pv, err := NewJWTVerifier(JWTConfig{KeysFile: "k.pem", Algorithms: []string{"RS256"}}, rsaPEM, JWTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pv.Verify(context.Background(), rs.sign(t, validClaims(now))); err != nil {
		t.Errorf("PEM key: %v", err)
	}
	if _, err := pv.Verify(context.Background(), ec.sign(t, validClaims(now))); err == nil {
		t.Error("PEM RS256 verifier accepted an ES256 token")
	}
}

func mustPKIX(t testing.TB, pub crypto.PublicKey) []byte {
	b, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func noneToken(c jwt.MapClaims) string {
	s, _ := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	return s
}

func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload = []byte(strings.Replace(string(payload), "user-1", "admin", 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

func TestJWTConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  JWTConfig
		want string
	}{
		{"none", JWTConfig{KeysFile: "k", Algorithms: []string{"none"}}, "none and HMAC are refused"},
		{"HS256", JWTConfig{KeysFile: "k", Algorithms: []string{"HS256"}}, "HS256"},
		{"both sources", JWTConfig{KeysFile: "k", JWKSURL: "https://x"}, "exactly one"},
		{"no source", JWTConfig{}, "exactly one"},
		{"bad url", JWTConfig{JWKSURL: "ftp://x"}, "jwks_url"},
		{"claim sets Host", JWTConfig{KeysFile: "k", ClaimHeaders: map[string]string{"Host": "sub"}}, "does not let a claim set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := errors.Join(tc.cfg.WithDefaults().Validate()...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// jwksServer serves a key set that the test can rotate, and can be made to fail.
type jwksServer struct {
	*httptest.Server
	mu   sync.Mutex
	doc  []byte
	fail bool
	hits int
}

func newJWKSServer(t testing.TB, keys ...testKey) *jwksServer {
	s := &jwksServer{doc: jwksOf(keys...)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.hits++
		if s.fail {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(s.doc)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(fail bool, keys ...testKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fail
	if keys != nil {
		s.doc = jwksOf(keys...)
	}
}

func TestJWTJWKSRotationAndFailure(t *testing.T) {
	k1, k2, k3 := newECKey(t, "k1"), newECKey(t, "k2"), newECKey(t, "k3")
	srv := newJWKSServer(t, k1)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var fetchErrs []error
	v, err := NewJWTVerifier(JWTConfig{JWKSURL: srv.URL, Algorithms: []string{"ES256"}, JWKSMinRefreshMS: 1000, JWKSRefreshMS: 60_000},
		nil, JWTOptions{Now: clock, OnFetchError: func(err error) { fetchErrs = append(fetchErrs, err) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	claims := func() jwt.MapClaims { c := validClaims(clock()); delete(c, "aud"); delete(c, "iss"); return c }
	if _, err := v.Verify(ctx, k1.sign(t, claims())); err != nil {
		t.Fatalf("k1: %v", err)
	}
	// Rotation: the IdP now signs with k2; the unknown kid fetches the set again.
	srv.set(false, k1, k2)
	if _, err := v.Verify(ctx, k2.sign(t, claims())); err == nil {
		t.Fatal("k2 verified before the minimum refresh interval allowed a fetch")
	}
	advance(2 * time.Second)
	if _, err := v.Verify(ctx, k2.sign(t, claims())); err != nil {
		t.Fatalf("k2 after rotation: %v", err)
	}
	// A token with an unknown kid does not fetch again inside the minimum interval.
	before := v.Fetches()
	for range 5 {
		v.Verify(ctx, k3.sign(t, claims()))
	}
	if got := v.Fetches() - before; got != 0 {
		t.Errorf("unknown kids fetched %d times within the minimum interval, want 0", got)
	}
	// The endpoint fails: the last good set keeps verifying.
	srv.set(true)
	advance(2 * time.Second)
	if _, err := v.Verify(ctx, k3.sign(t, claims())); err == nil {
		t.Error("k3 verified though the JWKS never had it")
	}
	if _, err := v.Verify(ctx, k1.sign(t, claims())); err != nil {
		t.Errorf("k1 after a failed fetch: %v", err)
	}
	if len(fetchErrs) == 0 {
		t.Error("the failed fetch was not reported")
	}
}

func TestJWTJWKSUnavailable(t *testing.T) {
	srv := newJWKSServer(t)
	srv.set(true)
	v, err := NewJWTVerifier(JWTConfig{JWKSURL: srv.URL}, nil, JWTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := newECKey(t, "k")
	if _, err := v.Verify(context.Background(), k.sign(t, validClaims(time.Now()))); !errors.Is(err, ErrKeysUnavailable) {
		t.Fatalf("got %v, want ErrKeysUnavailable", err)
	}
}

func TestClaimString(t *testing.T) {
	c := Claims{"s": "x", "n": float64(42), "b": true, "a": []any{"r1", "r2"}, "o": map[string]any{"k": 1}}
	for name, want := range map[string]string{"s": "x", "n": "42", "b": "true", "a": "r1,r2", "o": `{"k":1}`} {
		if got, _ := ClaimString(c, name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	if _, ok := ClaimString(c, "missing"); ok {
		t.Error("absent claim reported present")
	}
}

// FuzzJWTVerify feeds arbitrary tokens to a verifier: never a panic, never a success without the
// key's signature.
func FuzzJWTVerify(f *testing.F) {
	k := newECKey(f, "k")
	v, err := NewJWTVerifier(JWTConfig{KeysFile: "k"}, jwksOf(k), JWTOptions{})
	if err != nil {
		f.Fatal(err)
	}
	good := k.sign(f, validClaims(time.Now()))
	f.Add(good)
	f.Add(noneToken(validClaims(time.Now())))
	f.Add(tamper(good))
	f.Add("eyJhbGciOiJFUzI1NiJ9..")
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := v.Verify(context.Background(), tok); err == nil && tok != good {
			t.Fatalf("verified a token the key did not sign: %q", tok)
		}
	})
}

// TestJWTJWKSBackgroundRefresh: a key set older than jwks_refresh_ms is fetched again in the
// background while tokens keep verifying against the one in hand.
func TestJWTJWKSBackgroundRefresh(t *testing.T) {
	k1, k2 := newECKey(t, "k1"), newECKey(t, "k2")
	srv := newJWKSServer(t, k1)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	v, err := NewJWTVerifier(JWTConfig{JWKSURL: srv.URL, Algorithms: []string{"ES256"}, JWKSRefreshMS: 60_000, JWKSMinRefreshMS: 60_000},
		nil, JWTOptions{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	tok := func(k testKey) string {
		c := validClaims(clock())
		delete(c, "aud")
		return k.sign(t, c)
	}
	if _, err := v.Verify(context.Background(), tok(k1)); err != nil {
		t.Fatal(err)
	}
	srv.set(false, k2) // the IdP rotated k1 out
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := v.Verify(context.Background(), tok(k1)); err != nil {
		t.Fatalf("the stale set must keep serving while it is refreshed: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for v.Fetches() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		if _, err := v.Verify(context.Background(), tok(k2)); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("k2 never verified after the background refresh (%d fetches)", v.Fetches())
}
