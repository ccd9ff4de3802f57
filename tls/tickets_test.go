package tls

import (
	stdtls "crypto/tls"
	"testing"
	"time"
)

func TestSessionTickets(t *testing.T) {
	for _, tc := range []struct {
		name        string
		enabled     bool
		rotations   int // key rotations between the first and the second connection
		wantResumed bool
	}{
		{name: "resumes", enabled: true, wantResumed: true},
		{name: "resumes after one rotation", enabled: true, rotations: 1, wantResumed: true},
		{name: "resumes with the oldest kept key", enabled: true, rotations: TicketKeysKept - 1, wantResumed: true},
		{name: "key rotated out", enabled: true, rotations: TicketKeysKept},
		{name: "disabled", enabled: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, ca := pqFixture(t, func(c *Config) { c.SessionTickets = tc.enabled })
			now := time.Now()
			term.now = func() time.Time { return now }
			srv := term.ServerConfig([]string{"h2"})
			cli := clientConfig(ca, "edge.test")
			cli.ClientSessionCache = stdtls.NewLRUClientSessionCache(4)
			r := handshake(t, srv, cli)
			if r.clientErr != nil || r.server.DidResume {
				t.Fatalf("first handshake: got %v resumed %v, want a full handshake", r.clientErr, r.server.DidResume)
			}
			term.OnHandshake(&r.server)
			for range tc.rotations {
				now = now.Add(TicketKeyRotation)
				handshake(t, srv, clientConfig(ca, "edge.test")) // a handshake performs the lazy rotation
			}
			r = handshake(t, srv, cli)
			if r.clientErr != nil {
				t.Fatal(r.clientErr)
			}
			if r.server.DidResume != tc.wantResumed || Facts(&r.server).Resumed != tc.wantResumed {
				t.Errorf("got resumed %v, want %v", r.server.DidResume, tc.wantResumed)
			}
			if !IsHybrid(r.server.CurveID) {
				t.Errorf("got group %v on the second handshake, want a hybrid (psk_dhe_ke)", r.server.CurveID)
			}
			term.OnHandshake(&r.server)
			want := uint64(0)
			if tc.wantResumed {
				want = 1
			}
			if got := term.Stats().Resumed; got != want {
				t.Errorf("got %d resumed in Stats, want %d", got, want)
			}
		})
	}
}

func TestTicketRotation(t *testing.T) {
	var ts ticketState
	t0 := time.Unix(1_000_000, 0)
	ts.init(t0)
	e1, k1 := ts.current(t0.Add(TicketKeyRotation - 1))
	if e1 != 1 || len(k1) != 1 {
		t.Fatalf("before the deadline: got epoch %d with %d keys, want 1 with 1", e1, len(k1))
	}
	var prev [32]byte = k1[0]
	for i := 2; i <= TicketKeysKept+2; i++ {
		e, k := ts.current(t0.Add(time.Duration(i-1) * TicketKeyRotation))
		if e != uint64(i) {
			t.Fatalf("rotation %d: got epoch %d", i, e)
		}
		if want := min(i, TicketKeysKept); len(k) != want {
			t.Errorf("rotation %d: got %d keys, want %d", i, len(k), want)
		}
		if k[0] == prev || k[1] != prev {
			t.Errorf("rotation %d: want a new first key and the previous one second", i)
		}
		prev = k[0]
	}
}
