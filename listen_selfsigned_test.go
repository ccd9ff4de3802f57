package edge

import (
	"os"
	"testing"
	"time"
)

func TestSelfSignedReused(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	a, err := ensureSelfSigned(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ensureSelfSigned(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if !a.created || b.created || a.fingerprint != b.fingerprint {
		t.Errorf("created %v/%v fingerprints %s/%s: want created once, then reused", a.created, b.created, a.fingerprint, b.fingerprint)
	}
	// Near expiry it is renewed.
	c, err := ensureSelfSigned(dir, now.Add(selfSignedValidity-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !c.created || c.fingerprint == a.fingerprint {
		t.Errorf("certificate near expiry was not renewed")
	}
	leaf := c.cert.Leaf
	if leaf.DNSNames[0] != "localhost" || len(leaf.IPAddresses) != 2 {
		t.Errorf("SANs = %v %v, want localhost, 127.0.0.1, ::1", leaf.DNSNames, leaf.IPAddresses)
	}
	if st, err := os.Stat(c.keyFile); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", st.Mode().Perm())
	}
}
