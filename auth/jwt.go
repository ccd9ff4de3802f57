package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// JWTConfig is one [auth.jwt.NAME] section. Exactly one of JWKSURL and KeysFile is set. The
// token reaches the backend unchanged in Authorization, so a backend may verify it again.
type JWTConfig struct {
	// JWKSURL is an https (or, for tests and sidecars, http) URL serving a JWKS (RFC 7517 §5).
	JWKSURL string `toml:"jwks_url"`
	// KeysFile is a JWKS document or PEM public keys or certificates; it is read again on change.
	KeysFile string `toml:"keys_file"`
	// Issuer, when set, must equal the token's iss claim.
	Issuer string `toml:"issuer"`
	// Audiences, when set, must contain one of the token's aud values.
	Audiences []string `toml:"audiences"`
	// Algorithms are the accepted signature algorithms (RS256..512, PS256..512, ES256..512, EdDSA).
	// "none" and the HMAC algorithms are refused. Default: RS256, ES256, EdDSA.
	Algorithms []string `toml:"algorithms"`
	// ClockSkewMS is the leeway for exp, nbf and iat. Default 60000; 0 keeps the default, -1 is none.
	ClockSkewMS int `toml:"clock_skew_ms"`
	// RequiredClaims must be present in every token (exp always is).
	RequiredClaims []string `toml:"required_claims"`
	// ClaimHeaders maps a request header to the claim whose value it carries to the backend. A client
	// value of the header is always replaced (or removed when the claim is absent).
	ClaimHeaders map[string]string `toml:"claim_headers"`
	// MaxTokenBytes bounds the token; a longer one is refused without parsing. Default 8192.
	MaxTokenBytes int `toml:"max_token_bytes"`
	// JWKSRefreshMS is how old the fetched key set may grow before it is fetched again in the
	// background. Default 300000.
	JWKSRefreshMS int `toml:"jwks_refresh_ms"`
	// JWKSMinRefreshMS is the shortest time between two fetches triggered by a token signed with an
	// unknown key id (key rotation). Default 10000.
	JWKSMinRefreshMS int `toml:"jwks_min_refresh_ms"`
	// JWKSTimeoutMS bounds one JWKS fetch. Default 5000.
	JWKSTimeoutMS int `toml:"jwks_timeout_ms"`
	// Realm is the realm of the WWW-Authenticate: Bearer challenge. Empty: the section's name.
	Realm string `toml:"realm"`
}

// Defaults of JWTConfig, applied by WithDefaults to keys left at zero.
const (
	DefaultClockSkewMS      = 60_000
	DefaultMaxTokenBytes    = 8192
	DefaultJWKSRefreshMS    = 300_000
	DefaultJWKSMinRefreshMS = 10_000
	DefaultJWKSTimeoutMS    = 5000
)

// DefaultAlgorithms are accepted when algorithms is empty.
var DefaultAlgorithms = []string{"RS256", "ES256", "EdDSA"}

var asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// WithDefaults returns c with every zero key set to its default.
func (c JWTConfig) WithDefaults() JWTConfig {
	if len(c.Algorithms) == 0 {
		c.Algorithms = slices.Clone(DefaultAlgorithms)
	}
	if c.ClockSkewMS == 0 {
		c.ClockSkewMS = DefaultClockSkewMS
	} else if c.ClockSkewMS < 0 {
		c.ClockSkewMS = 0
	}
	if c.MaxTokenBytes == 0 {
		c.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if c.JWKSRefreshMS == 0 {
		c.JWKSRefreshMS = DefaultJWKSRefreshMS
	}
	if c.JWKSMinRefreshMS == 0 {
		c.JWKSMinRefreshMS = DefaultJWKSMinRefreshMS
	} else if c.JWKSMinRefreshMS < 0 {
		c.JWKSMinRefreshMS = 0
	}
	if c.JWKSTimeoutMS == 0 {
		c.JWKSTimeoutMS = DefaultJWKSTimeoutMS
	}
	return c
}

// Validate returns every problem of c, each prefixed with its key.
func (c JWTConfig) Validate() []error {
	var errs []error
	if (c.JWKSURL == "") == (c.KeysFile == "") {
		errs = append(errs, errors.New("set exactly one of jwks_url and keys_file"))
	}
	if c.JWKSURL != "" && !strings.HasPrefix(c.JWKSURL, "https://") && !strings.HasPrefix(c.JWKSURL, "http://") {
		errs = append(errs, fmt.Errorf("jwks_url: %q is not an http(s) URL", c.JWKSURL))
	}
	for _, a := range c.Algorithms {
		if !slices.Contains(asymmetric, a) {
			errs = append(errs, fmt.Errorf("algorithms: %q is not accepted (want one of %s; none and HMAC are refused)", a, strings.Join(asymmetric, ", ")))
		}
	}
	for _, k := range []struct {
		name string
		v    int
	}{{"max_token_bytes", c.MaxTokenBytes}, {"jwks_refresh_ms", c.JWKSRefreshMS}, {"jwks_timeout_ms", c.JWKSTimeoutMS}} {
		if k.v < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative", k.name))
		}
	}
	for h, claim := range c.ClaimHeaders {
		if h == "" || !isToken(h) || claim == "" {
			errs = append(errs, fmt.Errorf("claim_headers: %q = %q is not a header name and claim", h, claim))
		} else if reservedHeader(h) {
			errs = append(errs, fmt.Errorf("claim_headers: %q is a header edge does not let a claim set", h))
		}
	}
	return errs
}

// Errors of Verify a caller branches on. Every other error means the token is not acceptable.
var (
	// ErrKeysUnavailable: no key set could be loaded yet (the JWKS endpoint never answered).
	ErrKeysUnavailable = errors.New("auth: no verification keys available")
	// ErrTokenTooLarge: the token is longer than max_token_bytes.
	ErrTokenTooLarge = errors.New("auth: token too large")
)

// Claims are a verified token's claims.
type Claims = jwt.MapClaims

// JWTOptions adjust a verifier.
type JWTOptions struct {
	// Client fetches the JWKS. Nil: a client with the configured timeout.
	Client *http.Client
	// OnFetchError is told about each failed JWKS fetch (the last good set stays in use).
	OnFetchError func(error)
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
}

// JWTVerifier verifies tokens for one [auth.jwt.NAME] section.
type JWTVerifier struct {
	cfg    JWTConfig
	parser *jwt.Parser
	opts   JWTOptions
	static *keySet // from keys_file

	jwks      atomic.Pointer[keySet]
	fetchMu   sync.Mutex // held by the one fetch in progress
	mu        sync.Mutex // guards the fields below
	fetchedAt time.Time  // of the key set in jwks
	triedAt   time.Time  // of the last fetch attempt
	bgRunning bool
	fetches   atomic.Uint64
}

// NewJWTVerifier builds a verifier. keysFile is the content of cfg.KeysFile (nil with a JWKS URL).
// A JWKS is fetched on first use, not here, so building a verifier never waits on the network.
func NewJWTVerifier(cfg JWTConfig, keysFile []byte, opts JWTOptions) (*JWTVerifier, error) {
	cfg = cfg.WithDefaults()
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: time.Duration(cfg.JWKSTimeoutMS) * time.Millisecond}
	}
	v := &JWTVerifier{cfg: cfg, opts: opts}
	if cfg.KeysFile != "" {
		set, err := parseKeys(keysFile)
		if err != nil {
			return nil, fmt.Errorf("keys_file: %w", err)
		}
		v.static = set
	}
	popts := []jwt.ParserOption{
		jwt.WithValidMethods(cfg.Algorithms),
		jwt.WithLeeway(time.Duration(cfg.ClockSkewMS) * time.Millisecond),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(opts.Now),
		jwt.WithStrictDecoding(),
	}
	if cfg.Issuer != "" {
		popts = append(popts, jwt.WithIssuer(cfg.Issuer))
	}
	if len(cfg.Audiences) > 0 {
		popts = append(popts, jwt.WithAudience(cfg.Audiences...))
	}
	v.parser = jwt.NewParser(popts...)
	return v, nil
}

// Config returns the configuration with defaults applied.
func (v *JWTVerifier) Config() JWTConfig { return v.cfg }

// Fetches returns how many JWKS fetches were attempted.
func (v *JWTVerifier) Fetches() uint64 { return v.fetches.Load() }

// Verify checks token's size, signature, algorithm, time claims (with the clock skew), issuer,
// audience and required claims, and returns its claims. Error texts never contain the token.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (Claims, error) {
	if len(token) > v.cfg.MaxTokenBytes {
		return nil, ErrTokenTooLarge
	}
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) { return v.key(ctx, t) })
	if err != nil {
		if errors.Is(err, ErrKeysUnavailable) {
			return nil, ErrKeysUnavailable
		}
		return nil, err
	}
	for _, c := range v.cfg.RequiredClaims {
		if _, ok := claims[c]; !ok {
			return nil, fmt.Errorf("token lacks required claim %q", c)
		}
	}
	return claims, nil
}

// key finds the key for t: by kid when the token names one, else every key that fits its algorithm.
func (v *JWTVerifier) key(ctx context.Context, t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	kid, _ := t.Header["kid"].(string)
	set := v.static
	if set == nil {
		set = v.remoteKeys(ctx, kid)
		if set == nil {
			return nil, ErrKeysUnavailable
		}
	}
	var fit []jwt.VerificationKey
	for _, k := range set.keys {
		if kid != "" && k.kid != "" && k.kid != kid {
			continue
		}
		if (k.alg != "" && k.alg != alg) || !keyFits(alg, k.key) {
			continue
		}
		fit = append(fit, k.key)
	}
	switch len(fit) {
	case 0:
		return nil, errors.New("no key fits the token's kid and alg")
	case 1:
		return fit[0], nil
	}
	return jwt.VerificationKeySet{Keys: fit}, nil
}

// remoteKeys returns the JWKS to verify a token with key id kid, fetching it when there is none
// yet or, rate-limited, when kid is unknown; a stale set is refreshed in the background.
func (v *JWTVerifier) remoteKeys(ctx context.Context, kid string) *keySet {
	now := v.opts.Now()
	set := v.jwks.Load()
	v.mu.Lock()
	age, sinceTry, tried := now.Sub(v.fetchedAt), now.Sub(v.triedAt), !v.triedAt.IsZero()
	v.mu.Unlock()
	minGap := time.Duration(v.cfg.JWKSMinRefreshMS) * time.Millisecond
	switch {
	case set == nil:
		if !tried || sinceTry >= minGap {
			v.fetch(ctx, set)
		}
	case kid != "" && !set.has(kid) && sinceTry >= minGap:
		v.fetch(ctx, set)
	case age >= time.Duration(v.cfg.JWKSRefreshMS)*time.Millisecond:
		v.mu.Lock()
		start := !v.bgRunning && sinceTry >= minGap
		v.bgRunning = v.bgRunning || start
		v.mu.Unlock()
		if start {
			go func() {
				v.fetch(context.Background(), set)
				v.mu.Lock()
				v.bgRunning = false
				v.mu.Unlock()
			}()
		}
	}
	return v.jwks.Load()
}

func (s *keySet) has(kid string) bool {
	for _, k := range s.keys {
		if k.kid == kid {
			return true
		}
	}
	return false
}

// fetch loads the JWKS once; concurrent callers wait for the one fetch in progress instead of
// starting their own. seen is the set the caller saw: when another fetch replaced it meanwhile,
// nothing is fetched.
func (v *JWTVerifier) fetch(ctx context.Context, seen *keySet) {
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	if cur := v.jwks.Load(); cur != seen {
		return
	}
	v.mu.Lock()
	v.triedAt = v.opts.Now()
	v.mu.Unlock()
	v.fetches.Add(1)
	set, err := v.download(ctx)
	if err != nil {
		if v.opts.OnFetchError != nil {
			v.opts.OnFetchError(err)
		}
		return
	}
	v.jwks.Store(set)
	v.mu.Lock()
	v.fetchedAt = v.opts.Now()
	v.mu.Unlock()
}

// maxJWKSBytes bounds a JWKS document.
const maxJWKSBytes = 1 << 20

func (v *JWTVerifier) download(ctx context.Context) (*keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(v.cfg.JWKSTimeoutMS)*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKSURL, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks fetch: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := v.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks fetch: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwks fetch: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, errors.New("jwks fetch: document over 1 MiB")
	}
	return parseJWKS(body)
}

// ClaimString renders claim name of c as a header value or rate-limit key: strings as they are,
// numbers in decimal, booleans as true/false, arrays of strings joined by ",", anything else as
// JSON. ok is false when the claim is absent.
func ClaimString(c Claims, name string) (string, bool) {
	val, ok := c[name]
	if !ok || val == nil {
		return "", false
	}
	switch x := val.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				b, _ := json.Marshal(x)
				return string(b), true
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), true
	}
	b, err := json.Marshal(val)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// SafeHeaderValue reports whether s may be sent as a header value: no control characters (so a
// claim cannot split headers) and at most 4096 bytes.
func SafeHeaderValue(s string) bool {
	if len(s) > 4096 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// ReadKeysFile reads cfg.KeysFile (nil when the section uses a JWKS URL).
func ReadKeysFile(cfg JWTConfig) ([]byte, error) {
	if cfg.KeysFile == "" {
		return nil, nil
	}
	return os.ReadFile(cfg.KeysFile)
}
