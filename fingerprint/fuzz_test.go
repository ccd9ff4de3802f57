package fingerprint

import (
	"bytes"
	stdtls "crypto/tls"
	"errors"
	"strings"
	"testing"

	utls "github.com/refraction-networking/utls"
)

// fuzzSeeds are real hellos from the encoders the tests use: Go crypto/tls,
// uTLS parrots and the builder.
func fuzzSeeds(f *testing.F) [][]byte {
	seeds := [][]byte{
		specHello().msg(),
		helloBuilder{version: 0x0301, noExts: true}.msg(),
		helloBuilder{version: 0x0303, suites: []uint16{0x1301}, exts: []ext{alpnExt("\xba\xad")}}.msg(),
		helloBuilder{version: 0x0303, suites: []uint16{0x1301}, exts: []ext{alpnExt("")}}.msg(),
	}
	seeds = append(seeds,
		captureHello(f, goClient(&stdtls.Config{ServerName: "example.com", NextProtos: []string{"h2"}})).msg,
		captureHello(f, utlsClient(utls.HelloChrome_Auto)).msg,
		captureHello(f, utlsClient(utls.HelloFirefox_Auto)).msg,
	)
	return seeds
}

// FuzzParseClientHello: no panic; every successful parse yields fingerprints
// of the JA4 shape whose raw forms agree with the hashed ones, and the
// reference implementation agrees on JA3 and the sorted JA4.
func FuzzParseClientHello(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		h, err := ParseClientHello(msg)
		if err != nil {
			return
		}
		for _, quic := range []bool{false, true} {
			tr := TCP
			if quic {
				tr = QUIC
			}
			fp := Compute(&h, tr)
			if !ja4Shape(fp.JA4) || !ja4Shape(fp.JA4O) {
				t.Fatalf("ja4 %q / ja4_o %q: not of the JA4 shape", fp.JA4, fp.JA4O)
			}
			if fp.JA4[:10] != fp.JA4R[:10] || fp.JA4[:10] != fp.JA4O[:10] || fp.JA4[:10] != fp.JA4RO[:10] {
				t.Fatalf("part a differs between forms: %q %q %q %q", fp.JA4, fp.JA4R, fp.JA4O, fp.JA4RO)
			}
			if got := string(AppendJA4(nil, &h, quic)); got != fp.JA4 {
				t.Fatalf("AppendJA4 %q != Compute %q", got, fp.JA4)
			}
			if len(fp.JA3Hash) != 32 {
				t.Fatalf("ja3 hash %q", fp.JA3Hash)
			}
		}
		// Naive reference on the same lists (ALPN characters excluded: the
		// reference keeps only the plain alphanumeric case).
		r := refFromHello(t, &h)
		if r.ja3() != string(AppendJA3(nil, &h)) {
			t.Fatalf("ja3: got %q, reference %q", AppendJA3(nil, &h), r.ja3())
		}
		if p := h.firstALPN(); len(p) > 0 && isAlnum(p[0]) && isAlnum(p[len(p)-1]) {
			want, wantR := r.ja4("t")
			fp := Compute(&h, TCP)
			if !strings.HasPrefix(wantR, "t00") && !strings.HasPrefix(fp.JA4, "t00") && (fp.JA4 != want || fp.JA4R != wantR) {
				t.Fatalf("ja4: got %q %q, reference %q %q", fp.JA4, fp.JA4R, want, wantR)
			}
		}
		// The records path gives the same message back.
		rec := records(msg, 1000)
		got, err := HandshakeFromRecords(rec)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("HandshakeFromRecords of a valid hello: %v", err)
		}
	})
}

// FuzzHandshakeFromRecords: no panic; a reassembled message is a prefix-exact
// handshake message (its length matches its header), and feeding the same
// bytes through CaptureConn in small reads gives the same result.
func FuzzHandshakeFromRecords(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(records(s, 1<<14), 7)
		f.Add(records(s, 100), 1)
	}
	f.Add([]byte{0x16, 3, 1, 0, 0, 0x16, 3, 1, 0, 4, 1, 0, 0, 0}, 3)
	f.Fuzz(func(t *testing.T, b []byte, chunk int) {
		msg, err := HandshakeFromRecords(b)
		if err == nil {
			if len(msg) < 4 || msg[0] != typeClientHello || len(msg) != 4+(int(msg[1])<<16|int(msg[2])<<8|int(msg[3])) {
				t.Fatalf("message of %d bytes with header %x", len(msg), msg[:min(4, len(msg))])
			}
		}
		if chunk <= 0 || chunk > 1<<16 {
			chunk = 1 + chunk&0xff
		}
		cc := NewCaptureConn(&chunkConn{r: bytes.NewReader(b), n: chunk}, 0)
		readAll(cc)
		_, got, cerr := cc.Hello()
		if err != nil {
			if cerr == nil {
				t.Fatalf("HandshakeFromRecords: %v, CaptureConn: ok", err)
			}
			return
		}
		if cerr == nil && !bytes.Equal(got, msg) {
			t.Fatalf("CaptureConn message differs")
		}
		if cerr != nil && !errors.Is(cerr, ErrCaptureLimit) {
			// Only a parse error of the message itself is allowed here.
			if _, perr := ParseClientHello(msg); perr == nil {
				t.Fatalf("CaptureConn: %v, but the message parses", cerr)
			}
		}
	})
}

// FuzzParseDB: no panic; a database that parses looks up its own exact
// entries, and every error names the file.
func FuzzParseDB(f *testing.F) {
	f.Add([]byte(entry("ja4", "t13d1516h2_8daaf6152771_e5627efa2ab1", "c", "browser", "allow")))
	f.Add([]byte(entry("ja4", "t13d*_8daaf6152771_*", "c", "browser", "allow") + entry("ja3_hash", "0149f47eabf9a20d0893e2a44e5a6323", "curl", "library", "flag")))
	f.Add([]byte("[[fingerprint]]\nja4 = \"**_*_*\"\n"))
	f.Add([]byte("x = [1,2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := ParseDB(data, "fuzz.toml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fingerprint: fuzz.toml") {
				t.Fatalf("error without file name: %q", err)
			}
			return
		}
		for k, m := range db.ja4 {
			got, ok := db.Lookup(&Fingerprints{JA4: k})
			if !ok || got != *m {
				t.Fatalf("exact entry %q not found", k)
			}
		}
		for k := range db.ja3 {
			if _, ok := db.Lookup(&Fingerprints{JA3Hash: k}); !ok {
				t.Fatalf("ja3 entry %q not found", k)
			}
		}
		for _, g := range db.globs {
			db.Lookup(&Fingerprints{JA4: g.pat.sec[0] + "_" + g.pat.sec[1] + "_" + g.pat.sec[2]})
		}
	})
}
