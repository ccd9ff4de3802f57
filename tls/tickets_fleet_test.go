package tls

import (
	stdtls "crypto/tls"
	"testing"
	"time"
)

// fleetPair returns two Terminators serving the same certificate, as two
// edges of a fleet would, and the CA that issued it.
func fleetPair(t *testing.T) (a, b *Terminator, ca *testCA) {
	t.Helper()
	ca = newTestCA(t)
	cf, _ := ca.writePair(t, t.TempDir(), "edge", leafOpts{names: []string{"edge.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	return newTestTerminator(t, cfg), newTestTerminator(t, cfg), ca
}

// TestSetTicketKeysResumesAcrossEdges: a ticket issued by one Terminator
// resumes on another once both hold the same fleet keys, over TCP and over
// QUIC; without shared keys it does not.
func TestSetTicketKeysResumesAcrossEdges(t *testing.T) {
	fleet := [][32]byte{newTicketKey(), newTicketKey(), newTicketKey()}
	for _, tc := range []struct {
		name   string
		shared bool
		quic   bool
	}{
		{name: "tcp shared", shared: true},
		{name: "tcp not shared"},
		{name: "quic shared", shared: true, quic: true},
		{name: "quic not shared", quic: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, ca := fleetPair(t)
			if tc.shared {
				stale := time.Now().Add(time.Hour)
				a.SetTicketKeys(fleet, stale)
				b.SetTicketKeys(fleet, stale)
			}
			cli := clientConfig(ca, "edge.test")
			cli.ClientSessionCache = stdtls.NewLRUClientSessionCache(4)
			connect := func(term *Terminator) stdtls.ConnectionState {
				if tc.quic {
					cs, err := quicHandshake(t, term, cli)
					if err != nil {
						t.Fatal(err)
					}
					return cs
				}
				r := handshake(t, term.ServerConfig([]string{"h2"}), cli)
				if r.clientErr != nil || r.serverErr != nil {
					t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
				}
				return r.server
			}
			if cs := connect(a); cs.DidResume {
				t.Fatal("first connection resumed")
			}
			if got := connect(b).DidResume; got != tc.shared {
				t.Errorf("got resumed %v on the second edge, want %v", got, tc.shared)
			}
			if st := b.Stats(); st.TicketKeysFleet != tc.shared {
				t.Errorf("got TicketKeysFleet %v, want %v", st.TicketKeysFleet, tc.shared)
			}
		})
	}
}

// TestTicketFallback: fleet keys past their deadline make the Terminator
// rotate on its own (counted); the next install brings the fleet keys back
// and keeps the local key, so a ticket issued during the outage still
// resumes on this edge; a ticket from before the outage resumes throughout.
func TestTicketFallback(t *testing.T) {
	term, ca := pqFixture(t, nil)
	now := time.Now()
	term.now = func() time.Time { return now }
	fleet := [][32]byte{newTicketKey(), newTicketKey()}
	term.SetTicketKeys(fleet, now.Add(time.Minute))
	srv := term.ServerConfig([]string{"h2"})
	resumes := func(cli *stdtls.Config) bool {
		t.Helper()
		r := handshake(t, srv, cli)
		if r.clientErr != nil || r.serverErr != nil {
			t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
		}
		return r.server.DidResume
	}
	newClient := func() *stdtls.Config {
		c := clientConfig(ca, "edge.test")
		c.ClientSessionCache = stdtls.NewLRUClientSessionCache(4)
		return c
	}
	before := newClient()
	resumes(before) // a ticket under the fleet key

	now = now.Add(2 * time.Minute) // the fleet source went quiet
	during := newClient()
	if resumes(during) {
		t.Fatal("first connection resumed")
	}
	st := term.Stats()
	if st.TicketFallbackRotations != 1 || st.TicketKeysFleet {
		t.Fatalf("got %d fallback rotations, fleet %v; want 1, false", st.TicketFallbackRotations, st.TicketKeysFleet)
	}
	if _, keys := term.tickets.current(now); keys[0] == fleet[0] || keys[1] != fleet[0] {
		t.Errorf("after the fallback rotation: want a new local key first, the fleet key second")
	}

	term.SetTicketKeys(fleet, now.Add(time.Minute)) // the fleet is back
	if !term.Stats().TicketKeysFleet {
		t.Error("got TicketKeysFleet false after the install")
	}
	if !resumes(during) {
		t.Error("a ticket issued during the outage does not resume after the fleet came back")
	}
	if !resumes(before) {
		t.Error("a ticket issued under the fleet key does not resume")
	}
	// The local key ages out like any other.
	now = now.Add(TicketKeyRotation * TicketKeysKept)
	term.SetTicketKeys(fleet, now.Add(time.Minute))
	if _, keys := term.tickets.current(now); len(keys) != len(fleet) {
		t.Errorf("got %d keys once the local key aged out, want %d", len(keys), len(fleet))
	}
}

// TestTicketInstallSameKeys: installing the keys already held keeps the
// generation, so the per-listener derived config is not rebuilt on every
// poll of the fleet source.
func TestTicketInstallSameKeys(t *testing.T) {
	var ts ticketState
	now := time.Now()
	ts.init(now)
	keys := [][32]byte{newTicketKey()}
	ts.install(keys, now.Add(time.Minute), now)
	n1, _ := ts.current(now)
	ts.install(keys, now.Add(2*time.Minute), now)
	n2, _ := ts.current(now.Add(90 * time.Second))
	if n1 != n2 {
		t.Errorf("got generation %d then %d for the same keys, want equal", n1, n2)
	}
	ts.install([][32]byte{newTicketKey()}, now.Add(time.Minute), now)
	if n3, _ := ts.current(now); n3 == n2 {
		t.Errorf("got the same generation %d for new keys", n3)
	}
}

// TestTicketKeysHotPathAllocs: with fleet keys installed, picking the
// per-connection config allocates nothing (one atomic load and the cached
// derived config), the same as with local keys.
func TestTicketKeysHotPathAllocs(t *testing.T) {
	for _, fleet := range []bool{false, true} {
		term, _ := pqFixture(t, nil)
		if fleet {
			term.SetTicketKeys([][32]byte{newTicketKey(), newTicketKey()}, time.Now().Add(time.Hour))
		}
		get := term.ServerConfig([]string{"h2"}).GetConfigForClient
		chi := &stdtls.ClientHelloInfo{ServerName: "edge.test"}
		first, _ := get(chi)
		allocs := testing.AllocsPerRun(1000, func() {
			if c, _ := get(chi); c != first {
				t.Fatal("the derived config changed without a new key set")
			}
		})
		if allocs != 0 {
			t.Errorf("fleet %v: got %v allocations per ClientHello, want 0", fleet, allocs)
		}
	}
}

// BenchmarkTicketKeysConfig measures picking the per-connection config
// (GetConfigForClient) with local and with fleet keys.
func BenchmarkTicketKeysConfig(b *testing.B) {
	ca := newTestCA(b)
	cf, _ := ca.writePair(b, b.TempDir(), "edge", leafOpts{names: []string{"edge.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	for _, fleet := range []bool{false, true} {
		b.Run(map[bool]string{false: "local", true: "fleet"}[fleet], func(b *testing.B) {
			term := newTestTerminator(b, cfg)
			if fleet {
				term.SetTicketKeys([][32]byte{newTicketKey(), newTicketKey()}, time.Now().Add(time.Hour))
			}
			get := term.ServerConfig([]string{"h2"}).GetConfigForClient
			chi := &stdtls.ClientHelloInfo{ServerName: "edge.test"}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = get(chi)
			}
		})
	}
}
