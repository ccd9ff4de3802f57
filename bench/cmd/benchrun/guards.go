package main

import (
	stdtls "crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// sqliProbe is the guard request every WAF in block mode must refuse.
const sqliProbe = "/?q=1'%20OR%201=1--"

// guardClients returns one client per protocol for single guard requests.
func guardClients() map[string]*http.Client {
	tlsCfg := &stdtls.Config{InsecureSkipVerify: true, MinVersion: stdtls.VersionTLS13}
	h1 := &http.Transport{TLSClientConfig: tlsCfg.Clone(), TLSNextProto: map[string]func(string, *stdtls.Conn) http.RoundTripper{}}
	h2 := &http.Transport{TLSClientConfig: tlsCfg.Clone(), ForceAttemptHTTP2: true}
	h3 := &http3.Transport{TLSClientConfig: tlsCfg.Clone()}
	return map[string]*http.Client{
		protoH1C:   {Transport: h1, Timeout: 5 * time.Second},
		protoH1TLS: {Transport: h1, Timeout: 5 * time.Second},
		protoH2TLS: {Transport: h2, Timeout: 5 * time.Second},
		protoH3:    {Transport: h3, Timeout: 5 * time.Second},
	}
}

// get sends one GET and returns the status, body length and protocol.
func get(c *http.Client, url string) (int, int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, 0, "", err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, int(n), resp.Proto, err
}

func (a *arm) url(proto, path string) string {
	if proto == protoH1C {
		return "http://" + a.http + path
	}
	return "https://" + a.https + path
}

// guards checks, before anything is measured, that every arm answers 200
// with the right body on every protocol it serves, that the SQLi probe is
// refused (403) by edge full exactly when its WAF section is active and
// passes (200) edge lean, and that a short burst gets no 4xx from either edge
// arm on H1, H2, H3 and the POST (the limiters of edge full must not fire
// at the offered load).
func (b *bench) guards() error {
	cl := guardClients()
	for _, a := range b.arms {
		for _, p := range []string{protoH1C, protoH1TLS, protoH2TLS, protoH3} {
			if p == protoH3 && !a.h3 {
				continue
			}
			for _, body := range bodies {
				st, n, proto, err := get(cl[p], a.url(p, body.path))
				if err != nil || st != 200 || n != body.size {
					return fmt.Errorf("benchrun: guard failed: %s %s GET %s: status %d, %d body bytes (want 200, %d), err %v (logs in %s)", a.label, p, body.path, st, n, body.size, err, b.dir)
				}
				if want := map[string]int{protoH1C: 1, protoH1TLS: 1, protoH2TLS: 2, protoH3: 3}[p]; proto[len(proto)-3] != byte('0'+want) {
					return fmt.Errorf("benchrun: guard failed: %s %s answered over %s", a.label, p, proto)
				}
			}
		}
	}
	lean, full := b.arm("edge-lean"), b.arm("edge-full")
	wantFull := 200
	if contains(full.conf.accepted, "waf") {
		wantFull = 403
	}
	for _, c := range []struct {
		a    *arm
		want int
	}{{lean, 200}, {full, wantFull}} {
		for _, p := range []string{protoH1TLS, protoH2TLS, protoH3} {
			st, _, _, err := get(cl[p], c.a.url(p, sqliProbe))
			if err != nil || st != c.want {
				return fmt.Errorf("benchrun: guard failed: SQLi probe GET %s on %s over %s: status %d, err %v, want %d", sqliProbe, c.a.label, p, st, err, c.want)
			}
		}
	}
	if wantFull == 200 {
		b.note("SQLi guard: edge full answered 200 to GET %s because its [waf] section is not accepted by this edge build: the 'edge full' column measures the lean path", sqliProbe)
	} else {
		b.note("SQLi guard: GET %s got 403 from edge full and 200 from edge lean on H1, H2 and H3", sqliProbe)
	}
	b.checkAccessLog()
	for _, a := range []*arm{lean, full} {
		for _, c := range []cell{{protoH1TLS, "56"}, {protoH2TLS, "56"}, {protoH3, "56"}, {protoH1TLS, "post"}} {
			res, err := runLoad(b, a, c, loadSpec{n: 3000})
			if err != nil {
				return err
			}
			if res.non2xx != 0 || res.errors != 0 || res.requests != 3000 {
				return fmt.Errorf("benchrun: guard failed: burst of 3000 (%s) on %s: %d done, %d non-2xx, %d errors", c, a.label, res.requests, res.non2xx, res.errors)
			}
		}
	}
	return nil
}

// checkAccessLog notes when an edge arm wrote an access log although its
// config says access = "off": a file named like the keyword appears beside
// the config (edge resolved the keyword as a relative path). The edge
// figures then include JSON access-log encoding and one write per request.
func (b *bench) checkAccessLog() {
	for _, name := range []string{"off", "stdout", "stderr"} {
		p := filepath.Join(b.dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			b.note("edge wrote an access log to the file %s although [log] access = \"off\" (edge resolves the keyword as a path relative to its config): every edge figure below includes JSON access-logging and a write per request, which the peers do not do", p)
		}
	}
}
