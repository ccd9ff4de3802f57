package acme

import (
	stdtls "crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// LetsEncrypt is the default directory: Let's Encrypt's production ACME server.
const LetsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"

// Challenge types (RFC 8555 §8.3 and §8.4, RFC 8737).
const (
	HTTP01    = "http-01"
	TLSALPN01 = "tls-alpn-01"
	DNS01     = "dns-01"
)

// Storage values.
const (
	StorageLocal = "local"
	StorageRedis = "redis"
)

// Config is the [tls.acme] section. ACME is on when Domains is not empty or OnDemand is true.
type Config struct {
	// Directory is the ACME directory URL of the certificate authority.
	Directory string `toml:"directory"`
	// Email is the account's contact address; required when ACME is on.
	Email string `toml:"email"`
	// Domains are the names to get certificates for, each its own certificate: host names and
	// wildcards ("*.example.com", which need dns-01).
	Domains []string `toml:"domains"`
	// Challenges are the challenge types offered: any of "http-01", "tls-alpn-01", "dns-01".
	// "dns-01" is used alone (it cannot be combined with the other two).
	Challenges []string `toml:"challenges"`
	// TrustedRoots are PEM files of the CAs trusted for the directory's own TLS (a private ACME
	// server); empty means the system's roots.
	TrustedRoots []string `toml:"trusted_roots"`
	// EABKeyID and EABHMACKey are the External Account Binding (RFC 8555 §7.3.4) a CA gave, the
	// key base64url-encoded; both or neither.
	EABKeyID   string `toml:"eab_kid"`
	EABHMACKey string `toml:"eab_hmac_key"`
	// RenewBeforeDays renews a certificate when it has fewer days left. 0: the window the CA's
	// ACME Renewal Information (RFC 9773) suggests, else the last third of the lifetime (30 days
	// of a 90-day certificate).
	RenewBeforeDays int `toml:"renew_before_days"`
	// Storage is where the account, certificates and keys live: "local" (server.state_dir/acme)
	// or "redis" (the [ratelimit.redis] server, shared by every edge using it).
	Storage string `toml:"storage"`
	// OnDemand gets a certificate during the first handshake for a name no certificate covers,
	// when Ask or OnDemandAllow admits it, at most OnDemandPerMinute orders a minute.
	OnDemand bool `toml:"on_demand"`
	// Ask is a URL asked "GET ask?domain=NAME" before an on-demand order; 200 admits the name.
	Ask string `toml:"ask"`
	// OnDemandAllow lists the names (and "*.example.com" wildcards, one label deep) on-demand
	// certificates may be ordered for. With Ask also set, a name must pass both.
	OnDemandAllow []string `toml:"on_demand_allow"`
	// OnDemandPerMinute bounds on-demand orders (and ask calls): a token bucket of this many a
	// minute, with as many in a burst.
	OnDemandPerMinute int `toml:"on_demand_per_minute"`
	// DNSRFC2136 is the DNS-01 provider: RFC 2136 dynamic updates signed with TSIG (RFC 8945).
	DNSRFC2136 RFC2136Config `toml:"dns_rfc2136"`
}

// RFC2136Config is [tls.acme.dns_rfc2136].
type RFC2136Config struct {
	// Server is the primary name server accepting updates, host:port.
	Server string `toml:"server"`
	// Zone is the zone updated ("example.com."); empty: the parent of each _acme-challenge name.
	Zone string `toml:"zone"`
	// TSIGKeyName, TSIGAlgorithm ("hmac-sha256.", "hmac-sha512." …) and TSIGSecret (base64) sign
	// each update.
	TSIGKeyName   string `toml:"tsig_key_name"`
	TSIGAlgorithm string `toml:"tsig_algorithm"`
	TSIGSecret    string `toml:"tsig_secret"`
	// PropagationTimeoutMS bounds the wait for the TXT record to be visible at Server before the
	// CA is told to validate.
	PropagationTimeoutMS int `toml:"propagation_timeout_ms"`
}

// DefaultConfig is [tls.acme] with every default: off (no domains, no on-demand).
func DefaultConfig() Config {
	return Config{
		Directory:         LetsEncrypt,
		Challenges:        []string{HTTP01, TLSALPN01},
		Storage:           StorageLocal,
		OnDemandPerMinute: 10,
		DNSRFC2136: RFC2136Config{
			TSIGAlgorithm:        dns.HmacSHA256,
			PropagationTimeoutMS: 30000,
		},
	}
}

// Enabled reports whether ACME is on: domains are listed or on-demand is set.
func (c *Config) Enabled() bool { return len(c.Domains) > 0 || c.OnDemand }

// Validate checks the section without touching the network. Each problem is "key: message",
// relative to [tls.acme].
func (c *Config) Validate() (errs, warns []string) {
	if u, err := url.Parse(c.Directory); err != nil || u.Scheme != "https" || u.Host == "" {
		errs = append(errs, fmt.Sprintf("directory: %q is not an https URL", c.Directory))
	}
	if !c.Enabled() {
		return errs, warns
	}
	if c.Email == "" {
		errs = append(errs, "email: required when domains or on_demand are set (the ACME account's contact)")
	} else if !strings.Contains(c.Email, "@") {
		errs = append(errs, fmt.Sprintf("email: %q is not an address", c.Email))
	}
	hasDNS := slices.Contains(c.Challenges, DNS01)
	if len(c.Challenges) == 0 {
		errs = append(errs, `challenges: empty; list "http-01", "tls-alpn-01" or "dns-01"`)
	}
	for i, ch := range c.Challenges {
		switch {
		case ch != HTTP01 && ch != TLSALPN01 && ch != DNS01:
			errs = append(errs, fmt.Sprintf(`challenges[%d]: %q is not "http-01", "tls-alpn-01" or "dns-01"`, i, ch))
		case slices.Index(c.Challenges, ch) != i:
			errs = append(errs, fmt.Sprintf("challenges[%d]: %q listed twice", i, ch))
		case hasDNS && ch != DNS01:
			errs = append(errs, fmt.Sprintf(`challenges[%d]: %q cannot be combined with "dns-01", which is used alone`, i, ch))
		}
	}
	for i, d := range c.Domains {
		if msg := checkName(d); msg != "" {
			errs = append(errs, fmt.Sprintf("domains[%d]: %q %s", i, d, msg))
		} else if strings.HasPrefix(d, "*.") && !hasDNS {
			errs = append(errs, fmt.Sprintf(`domains[%d]: wildcard %q needs challenges = ["dns-01"]`, i, d))
		} else if slices.Index(c.Domains, d) != i {
			errs = append(errs, fmt.Sprintf("domains[%d]: %q listed twice", i, d))
		}
	}
	if (c.EABKeyID == "") != (c.EABHMACKey == "") {
		errs = append(errs, "eab_kid: eab_kid and eab_hmac_key go together")
	} else if c.EABHMACKey != "" {
		if _, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(c.EABHMACKey, "=")); err != nil {
			errs = append(errs, "eab_hmac_key: not base64url")
		}
	}
	if c.RenewBeforeDays < 0 {
		errs = append(errs, fmt.Sprintf("renew_before_days: %d is negative (0 means the CA's renewal information)", c.RenewBeforeDays))
	}
	if c.Storage != StorageLocal && c.Storage != StorageRedis {
		errs = append(errs, fmt.Sprintf(`storage: %q is not "local" or "redis"`, c.Storage))
	}
	if c.OnDemand {
		if c.Ask == "" && len(c.OnDemandAllow) == 0 {
			errs = append(errs, "on_demand: needs ask or on_demand_allow, or any name could run up orders")
		}
		if c.OnDemandPerMinute <= 0 {
			errs = append(errs, fmt.Sprintf("on_demand_per_minute: %d; want at least 1", c.OnDemandPerMinute))
		}
	}
	if c.Ask != "" {
		if u, err := url.Parse(c.Ask); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Sprintf("ask: %q is not an http(s) URL", c.Ask))
		}
	}
	for i, d := range c.OnDemandAllow {
		if msg := checkName(d); msg != "" {
			errs = append(errs, fmt.Sprintf("on_demand_allow[%d]: %q %s", i, d, msg))
		}
	}
	if hasDNS {
		errs = append(errs, c.DNSRFC2136.validate()...)
	}
	return errs, warns
}

func (r *RFC2136Config) validate() (errs []string) {
	p := "dns_rfc2136."
	if _, _, err := net.SplitHostPort(r.Server); err != nil {
		errs = append(errs, fmt.Sprintf("%sserver: %q is not host:port (dns-01 needs it)", p, r.Server))
	}
	if r.Zone != "" && !dns.IsFqdn(r.Zone) {
		errs = append(errs, fmt.Sprintf("%szone: %q must end with a dot", p, r.Zone))
	}
	if (r.TSIGKeyName == "") != (r.TSIGSecret == "") {
		errs = append(errs, p+"tsig_key_name: tsig_key_name and tsig_secret go together")
	}
	if r.TSIGKeyName != "" && !dns.IsFqdn(r.TSIGKeyName) {
		errs = append(errs, fmt.Sprintf("%stsig_key_name: %q must end with a dot", p, r.TSIGKeyName))
	}
	if _, err := base64.StdEncoding.DecodeString(r.TSIGSecret); err != nil {
		errs = append(errs, p+"tsig_secret: not base64")
	}
	switch r.TSIGAlgorithm {
	case dns.HmacSHA1, dns.HmacSHA224, dns.HmacSHA256, dns.HmacSHA384, dns.HmacSHA512:
	default:
		errs = append(errs, fmt.Sprintf(`%stsig_algorithm: %q is not one of "hmac-sha256." "hmac-sha384." "hmac-sha512." "hmac-sha224." "hmac-sha1."`, p, r.TSIGAlgorithm))
	}
	if r.PropagationTimeoutMS <= 0 {
		errs = append(errs, fmt.Sprintf("%spropagation_timeout_ms: %d; want at least 1", p, r.PropagationTimeoutMS))
	}
	return errs
}

// propagationTimeout is PropagationTimeoutMS as a duration.
func (r *RFC2136Config) propagationTimeout() time.Duration {
	return time.Duration(r.PropagationTimeoutMS) * time.Millisecond
}

// checkName returns why d is not a DNS name a certificate can be ordered for, or "".
func checkName(d string) string {
	name := strings.TrimPrefix(d, "*.")
	switch {
	case d == "" || name == "":
		return "is empty"
	case d != strings.ToLower(d):
		return "must be lower case"
	case strings.Contains(name, "*"):
		return `may have "*." only as its first label`
	case net.ParseIP(name) != nil:
		return "is an IP address (ACME names only)"
	case !strings.Contains(name, "."):
		return "is not a fully qualified name"
	}
	if _, ok := dns.IsDomainName(name); !ok {
		return "is not a valid DNS name"
	}
	return ""
}

// matchName reports whether name is pattern, or matches a "*." pattern one label deep.
func matchName(pattern, name string) bool {
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		i := strings.IndexByte(name, '.')
		return i > 0 && name[i+1:] == rest
	}
	return pattern == name
}

// CheckFiles reads the trusted_roots files, as Validate does not.
func (c *Config) CheckFiles() (errs []string) {
	for i, f := range c.TrustedRoots {
		if _, err := c.rootPool(f); err != nil {
			errs = append(errs, fmt.Sprintf("trusted_roots[%d]: %v", i, err))
		}
	}
	return errs
}

func (c *Config) rootPool(files ...string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s: no PEM certificate", f)
		}
	}
	return pool, nil
}

// ProbeDirectory fetches the directory within timeout and returns why it is not usable, or "" when
// it is: an ACME server may be down for a while without the configuration being wrong, so the
// caller reports this as a warning.
func (c *Config) ProbeDirectory(timeout time.Duration) string {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if len(c.TrustedRoots) > 0 {
		pool, err := c.rootPool(c.TrustedRoots...)
		if err != nil {
			return err.Error()
		}
		tr.TLSClientConfig = &stdtls.Config{RootCAs: pool}
	}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: timeout}
	resp, err := cl.Get(c.Directory)
	if err != nil {
		return fmt.Sprintf("directory %s unreachable: %v", c.Directory, err)
	}
	defer resp.Body.Close()
	var dir struct {
		NewNonce string `json:"newNonce"`
		NewOrder string `json:"newOrder"`
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("directory %s answered %s", c.Directory, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&dir); err != nil || dir.NewNonce == "" || dir.NewOrder == "" {
		return fmt.Sprintf("directory %s is not an ACME directory (RFC 8555 §7.1.1)", c.Directory)
	}
	return ""
}
