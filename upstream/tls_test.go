package upstream

import (
	"net/http"
	"strings"
	"testing"
)

// TestUpstreamTLS checks that verification is on by default, that ca_file, server_name,
// insecure_skip_verify and the mTLS client certificate each change the outcome.
func TestUpstreamTLS(t *testing.T) {
	pki := newPKI(t)
	for _, proto := range []string{ProtoH1TLS, ProtoH2, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			plain := startOrigin(t, proto, echoHandler(), false)
			mtls := startOrigin(t, proto, echoHandler(), true)
			tests := []struct {
				name   string
				addr   string
				tls    TLSConfig
				wantOK bool
			}{
				{"system roots reject self-signed", plain.addr, TLSConfig{}, false},
				{"ca_file", plain.addr, TLSConfig{CAFile: pki.caFile}, true},
				{"wrong ca_file", plain.addr, TLSConfig{CAFile: pki.otherCAFile}, false},
				{"server_name in certificate", plain.addr, TLSConfig{CAFile: pki.caFile, ServerName: "origin.test"}, true},
				{"server_name not in certificate", plain.addr, TLSConfig{CAFile: pki.caFile, ServerName: "evil.test"}, false},
				{"insecure_skip_verify", plain.addr, TLSConfig{InsecureSkipVerify: true}, true},
				{"mtls without client cert", mtls.addr, TLSConfig{CAFile: pki.caFile}, false},
				{"mtls with client cert", mtls.addr, TLSConfig{CAFile: pki.caFile, CertFile: pki.clientCert, KeyFile: pki.clientKey}, true},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					cfg := BackendConfig{Protocol: proto, Servers: []ServerConfig{{Address: tc.addr}}, TLS: tc.tls, MaxAttempts: 1}
					p := mustPool(t, cfg, options{})
					resp, _, err := do(t, p, "GET", "/bytes?n=3", nil)
					if ok := err == nil && resp.StatusCode == 200; ok != tc.wantOK {
						t.Fatalf("got ok=%v (err %v), want ok=%v", ok, err, tc.wantOK)
					}
					if err != nil && StatusFor(err) != http.StatusBadGateway {
						t.Errorf("StatusFor(%v) = %d, want 502", err, StatusFor(err))
					}
				})
			}
		})
	}
}

func TestValidateTLSWarning(t *testing.T) {
	c := BackendConfig{Protocol: ProtoH2, Servers: []ServerConfig{{Address: "127.0.0.1:1"}}, TLS: TLSConfig{InsecureSkipVerify: true}}
	errs, warns := c.Validate()
	if len(errs) != 0 || len(warns) != 1 || !strings.HasPrefix(warns[0], "tls.insecure_skip_verify: ") {
		t.Errorf("Validate = %q, %q; want no errors and one tls.insecure_skip_verify warning", errs, warns)
	}
}
