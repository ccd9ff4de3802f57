package auth

import (
	"net/netip"
	"testing"
)

func TestNetworks(t *testing.T) {
	n, err := ParseNetworks([]string{"10.0.0.0/8", "2001:db8::/32", "192.0.2.7"}, []string{"10.9.0.0/16", "::ffff:10.8.0.0/112"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr string
		want bool
	}{
		{"10.1.2.3", true},
		{"::ffff:10.1.2.3", true},
		{"10.9.1.1", false},
		{"10.8.0.1", false},
		{"192.0.2.7", true},
		{"192.0.2.8", false},
		{"2001:db8::1", true},
		{"2001:db9::1", false},
		{"127.0.0.1", false},
	}
	for _, tc := range tests {
		if got := n.Allowed(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Allowed(%s): got %v, want %v", tc.addr, got, tc.want)
		}
	}
	if n.Allowed(netip.Addr{}) {
		t.Error("an unknown address passed an allow list")
	}
	denyOnly, _ := ParseNetworks(nil, []string{"0.0.0.0/0"})
	if denyOnly.Allowed(netip.MustParseAddr("1.2.3.4")) || !denyOnly.Allowed(netip.MustParseAddr("::1")) {
		t.Error("deny 0.0.0.0/0 must refuse IPv4 only")
	}
	if n, err := ParseNetworks(nil, nil); n != nil || err != nil || !n.Allowed(netip.MustParseAddr("1.1.1.1")) {
		t.Errorf("empty rules: got %v %v, want nil rules that allow", n, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "nope", ""} {
		if _, err := ParseNetworks([]string{bad}, nil); err == nil {
			t.Errorf("ParseNetworks(%q): got nil error", bad)
		}
	}
}
