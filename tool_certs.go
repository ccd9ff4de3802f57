package edge

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"edge/acme"
	"edge/tls"
)

// CertListing is one certificate `edge certs` lists.
type CertListing struct {
	// Source is "file" ([[tls.certificates]], cert_dir), "acme" ([tls.acme] storage) or
	// "self-signed" (the one edge made in server.state_dir).
	Source   string    `json:"source"`
	Names    []string  `json:"names"`
	Issuer   string    `json:"issuer"`
	NotAfter time.Time `json:"not_after"`
	// Where is the certificate file, or the ACME storage key.
	Where   string `json:"where"`
	Default bool   `json:"default,omitempty"`
}

// ListCertificates lists the certificates the configuration serves, as a fresh start of edge would
// load them: certificate files, the self-signed certificate when no file is configured (if it was
// created already), and what [tls.acme] storage holds. It writes nothing.
func ListCertificates(ctx context.Context, cfg *Config) ([]CertListing, error) {
	var out []CertListing
	tcfg := cfg.TLS.Config
	selfSigned := ""
	if len(tcfg.Certificates) == 0 && tcfg.CertDir == "" {
		selfSigned = filepath.Join(cfg.stateDir(), selfSignedCert)
		if _, err := os.Stat(selfSigned); err == nil {
			tcfg.Certificates = []tls.CertificateFiles{{CertFile: selfSigned, KeyFile: filepath.Join(cfg.stateDir(), selfSignedKey)}}
		}
	}
	if len(tcfg.Certificates) > 0 || tcfg.CertDir != "" {
		term, err := tls.New(tcfg, nil)
		if err != nil {
			return nil, err
		}
		for _, c := range term.Certificates() {
			l := CertListing{Source: c.Source, Names: c.Names, Issuer: c.Issuer, NotAfter: c.NotAfter, Where: c.File, Default: c.Default}
			if c.File == selfSigned {
				l.Source = "self-signed"
			}
			out = append(out, l)
		}
	}
	if a := cfg.TLS.ACME; a.Enabled() {
		stored, err := acme.StoredCertificates(ctx, a, acme.Options{
			StateDir:     cfg.stateDir(),
			RedisURL:     cfg.RateLimit.Redis.URL,
			RedisTimeout: time.Duration(cfg.RateLimit.Redis.TimeoutMS) * time.Millisecond,
			RedisPrefix:  cfg.RateLimit.Redis.Prefix,
		})
		if err != nil {
			return out, err
		}
		for _, s := range stored {
			out = append(out, CertListing{Source: tls.OriginACME, Names: s.Names, Issuer: s.Issuer, NotAfter: s.NotAfter, Where: s.Key})
		}
	}
	slices.SortStableFunc(out, func(a, b CertListing) int {
		return cmp.Compare(strings.Join(a.Names, ","), strings.Join(b.Names, ","))
	})
	return out, nil
}
