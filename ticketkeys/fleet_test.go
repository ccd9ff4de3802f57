package ticketkeys

import (
	stdtls "crypto/tls"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"edge/tls"
)

// terminators returns n Terminators serving one self-signed certificate for "edge.test", as the
// edges of a fleet do.
func terminators(t *testing.T, n int) []*tls.Terminator {
	t.Helper()
	certPEM, keyPEM, err := tls.GenerateSelfSigned([]string{"edge.test"}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cf := tls.CertificateFiles{CertFile: filepath.Join(dir, "edge.crt"), KeyFile: filepath.Join(dir, "edge.key")}
	if err := os.WriteFile(cf.CertFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cf.KeyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := tls.DefaultConfig()
	cfg.Certificates = []tls.CertificateFiles{cf}
	out := make([]*tls.Terminator, n)
	for i := range out {
		if out[i], err = tls.New(cfg, nil); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// resumes connects to a server using term over loopback and reports whether the session resumed;
// the client reads one byte so the session ticket has arrived when it returns.
func resumes(t *testing.T, term *tls.Terminator, cli *stdtls.Config) bool {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := term.ServerConfig([]string{"h2"})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		tc := stdtls.Server(c, srv)
		if tc.Handshake() == nil {
			tc.Write([]byte{1})
			tc.Read(make([]byte, 1))
		}
	}()
	c, err := stdtls.Dial("tcp", ln.Addr().String(), cli)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	return c.ConnectionState().DidResume
}

// TestStagedKeyCoversRotation: right after edge A rotated the fleet's keys, a ticket A issues
// (under the key that was staged) resumes on edge B, which has not synced since; B still encrypts
// with the previous key, which A still decrypts.
func TestStagedKeyCoversRotation(t *testing.T) {
	url, _ := redisOn(t, "")
	const rot = 500 * time.Millisecond
	terms := terminators(t, 2)
	a, b := newMember(t, url, rot), newMember(t, url, rot)
	a.o.Install, b.o.Install = terms[0].SetTicketKeys, terms[1].SetTicketKeys
	mustSync(t, a, b)
	time.Sleep(rot + 100*time.Millisecond)
	mustSync(t, a) // A rotates; B keeps the set from before the rotation
	if a.Stats().Epoch != 2 || b.Stats().Epoch != 1 {
		t.Fatalf("got epochs %d and %d, want A at 2 and B at 1", a.Stats().Epoch, b.Stats().Epoch)
	}
	client := func() *stdtls.Config {
		return &stdtls.Config{InsecureSkipVerify: true, ServerName: "edge.test", ClientSessionCache: stdtls.NewLRUClientSessionCache(2)}
	}
	fromA := client()
	resumes(t, terms[0], fromA)
	if !resumes(t, terms[1], fromA) {
		t.Error("a ticket issued by A after its rotation does not resume on B, which has not synced yet")
	}
	fromB := client()
	resumes(t, terms[1], fromB)
	if !resumes(t, terms[0], fromB) {
		t.Error("a ticket issued by B before syncing the rotation does not resume on A")
	}
}
