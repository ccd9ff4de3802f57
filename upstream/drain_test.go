package upstream

import (
	"errors"
	"testing"
)

func TestSetDrained(t *testing.T) {
	addrs := countingOrigins(t, 2)
	p := mustPool(t, testConfig(ProtoH1, addrs...), options{})
	if !p.SetDrained(addrs[0], true) {
		t.Fatal("SetDrained: server not found")
	}
	if p.SetDrained("127.0.0.1:1", true) {
		t.Error("SetDrained found a server the pool does not have")
	}
	for range 10 {
		resp, _, err := do(t, p, "GET", "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("X-Server"); got != "1" {
			t.Fatalf("a request went to server %s while server 0 was drained", got)
		}
	}
	if st := p.Stats(); !st.Servers[0].Drained || st.Servers[1].Drained {
		t.Errorf("Stats: got drained %v %v, want true false", st.Servers[0].Drained, st.Servers[1].Drained)
	}
	p.SetDrained(addrs[1], true)
	if _, _, err := do(t, p, "GET", "/", nil); !errors.Is(err, ErrNoHealthyServer) {
		t.Fatalf("all drained: got %v, want ErrNoHealthyServer", err)
	}
	p.SetDrained(addrs[0], false)
	if _, _, err := do(t, p, "GET", "/", nil); err != nil {
		t.Fatalf("after undrain: %v", err)
	}
}
