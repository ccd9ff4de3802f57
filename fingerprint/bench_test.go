package fingerprint

import (
	"crypto/md5"
	stdtls "crypto/tls"
	"encoding/hex"
	"testing"

	utls "github.com/refraction-networking/utls"
)

// benchHello is a captured Chrome 133 parrot hello (X25519MLKEM768 key share,
// about 1.8 KB), the common case on the hot path.
func benchHello(tb testing.TB) []byte {
	tb.Helper()
	return captureHello(tb, utlsClient(utls.HelloChrome_Auto)).msg
}

// ja3ja4 is the per-connection work the budget covers: parse the captured
// hello, JA3 string, JA3 hash, JA4, with reused buffers.
func ja3ja4(msg, ja3, out []byte) ([]byte, []byte, error) {
	h, err := ParseClientHello(msg)
	if err != nil {
		return ja3, out, err
	}
	ja3 = AppendJA3(ja3[:0], &h)
	sum := md5.Sum(ja3)
	out = hex.AppendEncode(out[:0], sum[:])
	out = AppendJA4(out, &h, false)
	return ja3, out, nil
}

// TestAllocBudget: JA3+JA4 from a captured hello within 3 allocations (the
// issue's budget); with reused buffers it is 0. Compute, which returns six
// strings, stays within 3 as well.
func TestAllocBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"chrome", benchHello(t)},
		{"go", captureHello(t, goClient(&stdtls.Config{ServerName: "example.com"})).msg},
		{"many extensions", func() []byte {
			var e []ext
			for i := 0; i < 400; i++ {
				e = append(e, ext{uint16(0x1000 + i), nil})
			}
			return helloBuilder{version: 0x0303, suites: []uint16{0x1301}, exts: e}.msg()
		}()},
		{"many ciphers", func() []byte {
			var s []uint16
			for i := 0; i < 500; i++ {
				s = append(s, uint16(i+1))
			}
			return helloBuilder{version: 0x0303, suites: s}.msg()
		}()},
	} {
		ja3, out := make([]byte, 0, 4096), make([]byte, 0, 4096)
		var err error
		n := testing.AllocsPerRun(200, func() { ja3, out, err = ja3ja4(tc.msg, ja3, out) })
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: JA3+JA4 with reused buffers: got %v allocs, want 0", tc.name, n)
		}
		h, _ := ParseClientHello(tc.msg)
		if n := testing.AllocsPerRun(200, func() { Compute(&h, TCP) }); n > 3 {
			t.Errorf("%s: Compute: got %v allocs, want <= 3", tc.name, n)
		}
	}
}

func BenchmarkParseClientHello(b *testing.B) {
	msg := benchHello(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := ParseClientHello(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJA3JA4 is the budgeted path: parse + JA3 + JA3 hash + JA4.
func BenchmarkJA3JA4(b *testing.B) {
	msg := benchHello(b)
	ja3, out := make([]byte, 0, 4096), make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if ja3, out, err = ja3ja4(msg, ja3, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompute is parse + all six strings.
func BenchmarkCompute(b *testing.B) {
	msg := benchHello(b)
	b.ReportAllocs()
	for b.Loop() {
		h, err := ParseClientHello(msg)
		if err != nil {
			b.Fatal(err)
		}
		_ = Compute(&h, TCP)
	}
}

func BenchmarkLookup(b *testing.B) {
	db, err := LoadDB(shippedDB)
	if err != nil {
		b.Fatal(err)
	}
	hit := Fingerprints{JA4: "t13d1516h2_8daaf6152771_d8a2da3f94cd"}
	miss := Fingerprints{JA4: "t12d120700_d34a8e72043a_036209cd1ead", JA3Hash: "6c0f0a346dcd84cb4b97a0d9382c53fd"}
	b.ReportAllocs()
	for b.Loop() {
		db.Lookup(&hit)
		db.Lookup(&miss)
	}
}

func BenchmarkCaptureHello(b *testing.B) {
	rec := records(benchHello(b), 1<<14)
	b.ReportAllocs()
	for b.Loop() {
		cc := NewCaptureConn(&chunkConn{r: newBytesReader(rec), n: 1500}, 0)
		readAll(cc)
		if _, _, err := cc.Hello(); err != nil {
			b.Fatal(err)
		}
	}
}
