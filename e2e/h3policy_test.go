package e2e_test

import (
	stdtls "crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// TestHTTP3RetryEndToEnd: with Retry asked (always, or by the flood detector), real quic-go clients
// validate their address and their requests succeed; the reasons are counted.
func TestHTTP3RetryEndToEnd(t *testing.T) {
	for _, tc := range []struct{ cfg, reason string }{
		{"http3_retry = \"always\"\n", "always"},
		{"http3_retry = \"auto\"\nhttp3_retry_flood_per_second = 1\n", "flood"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			e := startEdgeListen(t, testListen+tc.cfg, "[ratelimit.connections]\nenabled = false\n"+echoRoute)
			// The connections start together, so the flood detector sees more than one a second
			// however slow the box (sequential handshakes under -race on a busy CI box took over a
			// second for 4 and never tripped it).
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for i := range 4 {
				wg.Go(func() {
					c := client("h3") // a new transport: a new QUIC connection without a token
					defer c.Transport.(*http3.Transport).Close()
					if code, _, err := get(c, e.url("https", fmt.Sprintf("/r%d", i))); err != nil || code != 200 {
						errs <- fmt.Errorf("request %d: %d %v", i, code, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			m := scrape(t, e)
			if v := m.sum("edge_quic_retries_total", map[string]string{"reason": tc.reason}); v < 1 {
				t.Errorf("edge_quic_retries_total{reason=%q} = %v, want ≥ 1", tc.reason, v)
			}
			if tc.reason == "flood" {
				if v := m.sum("edge_quic_handshake_flood", nil); v != 1 {
					t.Errorf("edge_quic_handshake_flood = %v, want 1", v)
				}
			}
		})
	}
}

// earlyOrigin records the Early-Data header of each request and answers 425 to early ones when
// tooEarly is set.
type earlyOrigin struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []string
	groups []string
}

func newEarlyOrigin(t *testing.T, tooEarly bool) *earlyOrigin {
	o := &earlyOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.seen = append(o.seen, r.Method+" "+r.Header.Get("Early-Data"))
		o.groups = append(o.groups, r.Header.Get("Edge-Tls-Group")+" "+r.Header.Get("Edge-Ja4"))
		o.mu.Unlock()
		if tooEarly && r.Header.Get("Early-Data") == "1" {
			w.WriteHeader(http.StatusTooEarly)
			return
		}
		io.WriteString(w, "served")
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *earlyOrigin) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

// earlyClient returns an HTTP/3 client that keeps session tickets and offers 0-RTT.
func earlyClient() (*http.Client, *http3.Transport, <-chan struct{}) {
	cache := &ticketCache{ClientSessionCache: stdtls.NewLRUClientSessionCache(8), stored: make(chan struct{}, 1)}
	tr := &http3.Transport{
		TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true, ClientSessionCache: cache},
		QUICConfig:      &quic.Config{Allow0RTT: true},
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}, tr, cache.stored
}

// ticketCache reports each session ticket stored, so a test resumes only once it has one.
type ticketCache struct {
	stdtls.ClientSessionCache
	stored chan struct{}
}

func (c *ticketCache) Put(key string, cs *stdtls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.stored <- struct{}{}:
		default:
		}
	}
}

// handshakeDelayRelay relays UDP between one QUIC client and edge, holding back each client datagram
// that starts with a Handshake packet (the client's Finished) by delay. A resumed client's 0-RTT
// request then reliably reaches edge while the handshake is still incomplete, as it would over a
// real network round trip, instead of racing a loopback handshake that completes in microseconds.
func handshakeDelayRelay(t *testing.T, edgeAddr net.Addr, delay time.Duration) string {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, edgeAddr.(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close(); back.Close() })
	var client atomic.Pointer[net.UDPAddr]
	go func() {
		buf := make([]byte, 2048)
		for {
			n, addr, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			client.Store(addr)
			pkt := append([]byte(nil), buf[:n]...)
			// Long header (0x80) of type Handshake (0x20 in bits 0x30).
			if pkt[0]&0x80 != 0 && pkt[0]&0x30 == 0x20 {
				time.AfterFunc(delay, func() { back.Write(pkt) })
				continue
			}
			back.Write(pkt)
		}
	}()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, err := back.Read(buf)
			if err != nil {
				return
			}
			if a := client.Load(); a != nil {
				front.WriteToUDP(buf[:n], a)
			}
		}
	}()
	return front.LocalAddr().String()
}

// zeroRTTGet makes a first request (full handshake, session ticket), closes the connection, then
// sends GET in 0-RTT on a resumed connection, through a relay that delays the client's Finished.
func zeroRTTGet(t *testing.T, e *testEdge, path string) (*http.Response, string) {
	t.Helper()
	udp := &net.UDPAddr{}
	if a, ok := e.Addr("https").(*net.TCPAddr); ok {
		udp = &net.UDPAddr{IP: a.IP, Port: a.Port}
	}
	// The relay holds the client's handshake completion back long enough that the early request
	// is served before it arrives even on a loaded machine (300 ms was not: under -race CI load the
	// handshake sometimes completed first and the request was no longer early).
	const hold = 1500 * time.Millisecond
	base := "https://" + handshakeDelayRelay(t, udp, hold)
	c, tr, ticket := earlyClient()
	defer tr.Close()
	if code, _, err := get(c, base+"/warmup"); err != nil || code != 200 {
		t.Fatalf("warm-up: %d %v", code, err)
	}
	// The session ticket comes after the handshake: resume only once the client has it.
	select {
	case <-ticket:
	case <-time.After(5 * time.Second):
		t.Fatal("no session ticket from edge within 5 s")
	}
	tr.CloseIdleConnections()
	req, _ := http.NewRequest(http3.MethodGet0RTT, base+path, nil)
	req.Header.Set("Early-Data", "1") // a client's own claim is never passed on
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// Let the held-back Finished arrive before the client closes: its CONNECTION_CLOSE would
	// otherwise travel in a Handshake packet the relay holds until after the test ends.
	time.Sleep(hold + 100*time.Millisecond)
	return resp, string(body)
}

// TestHTTP3EarlyData: with listen.http3_0rtt a resumed client's GET sent in 0-RTT reaches the
// backend with Early-Data: 1; without it (the default) 0-RTT is refused and the GET is served after
// the handshake, without the header. A backend's 425 makes edge retry after the handshake.
func TestHTTP3EarlyData(t *testing.T) {
	if raceEnabled {
		// quic-go v0.65.0's client races with itself in 0-RTT (OpenStreamSync reads the peer's
		// transport parameters while the handshake writes them: streams_map.go, connection.go), in
		// the test's client, not in edge. `make test` runs this test without -race.
		t.Skip("quic-go's 0-RTT client has a data race of its own; run without -race (make test does)")
	}
	route := func(o *earlyOrigin) string {
		return fmt.Sprintf("[ratelimit.connections]\nenabled = false\n[backends.o]\nservers = [{ address = %q }]\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", o.Listener.Addr().String())
	}
	t.Run("enabled", func(t *testing.T) {
		o := newEarlyOrigin(t, false)
		e := startEdgeListen(t, testListen+"http3_0rtt = true\n", route(o))
		resp, body := zeroRTTGet(t, e, "/early")
		if resp.StatusCode != 200 || body != "served" {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
		if got := o.requests(); len(got) != 2 || got[0] != "GET " || got[1] != "GET 1" {
			t.Errorf("origin saw %q, want [\"GET \" \"GET 1\"] (warm-up after the handshake, then early)", got)
		}
		if v := scrape(t, e).sum("edge_early_data_requests_total", map[string]string{"outcome": "forwarded"}); v != 1 {
			t.Errorf("edge_early_data_requests_total{outcome=forwarded} = %v, want 1", v)
		}
		// The connection's facts are known in 0-RTT too: the group from the server's key share, the
		// JA4 from the ClientHello that carried the early data.
		for _, g := range o.groups {
			if !strings.HasPrefix(g, "X25519MLKEM768 q13") {
				t.Errorf("origin saw TLS group and JA4 %q, want X25519MLKEM768 and a q13… JA4", g)
			}
		}
	})
	t.Run("default off", func(t *testing.T) {
		o := newEarlyOrigin(t, false)
		e := startEdge(t, route(o))
		resp, body := zeroRTTGet(t, e, "/early")
		if resp.StatusCode != 200 || body != "served" {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
		if got := o.requests(); len(got) != 2 || got[1] != "GET " {
			t.Errorf("origin saw %q, want the second GET without Early-Data", got)
		}
	})
	t.Run("425 retried after the handshake", func(t *testing.T) {
		o := newEarlyOrigin(t, true)
		e := startEdgeListen(t, testListen+"http3_0rtt = true\n", route(o))
		resp, body := zeroRTTGet(t, e, "/early")
		if resp.StatusCode != 200 || body != "served" {
			t.Fatalf("got %d %q, want 200 served (the 425 is edge's to handle); origin saw %q", resp.StatusCode, body, o.requests())
		}
		if got := o.requests(); strings.Join(got, ",") != "GET ,GET 1,GET " {
			t.Errorf("origin saw %q, want warm-up, early attempt, retry without Early-Data", got)
		}
		if v := scrape(t, e).sum("edge_early_data_requests_total", map[string]string{"outcome": "retried_after_425"}); v != 1 {
			t.Errorf("edge_early_data_requests_total{outcome=retried_after_425} = %v, want 1", v)
		}
	})
}
