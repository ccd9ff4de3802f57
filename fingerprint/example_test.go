package fingerprint_test

import (
	"context"
	stdtls "crypto/tls"
	"log"
	"net"
	"net/http"

	"edge/fingerprint"
)

type fpKey struct{}

// Wiring on TCP: wrap the accepted connection, fingerprint once from
// GetConfigForClient, classify, and carry the result on the connection.
func ExampleCaptureConn() {
	cfg := fingerprint.DefaultConfig()
	db, err := cfg.LoadDB()
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	for {
		raw, err := ln.Accept()
		if err != nil {
			return
		}
		cc := cfg.WrapConn(raw)
		var fp fingerprint.Fingerprints
		var match fingerprint.Match
		conf := &stdtls.Config{GetConfigForClient: func(*stdtls.ClientHelloInfo) (*stdtls.Config, error) {
			if h, _, err := cc.Hello(); err == nil {
				fp = fingerprint.Compute(&h, fingerprint.TCP)
				match, _ = db.Lookup(&fp)
			}
			cc.Release()    // the hello bytes are not needed any more
			return nil, nil // keep the base config
		}}
		go func() {
			tc := stdtls.Server(cc, conf)
			if tc.HandshakeContext(context.Background()) != nil {
				return
			}
			// Per request: headers for the backend and the UA signal.
			h := http.Header{}
			cfg.SetHeaders(h, &fp)
			_ = cfg.UAMismatchVerdict("Mozilla/5.0 ... Chrome/126.0.0.0 Safari/537.36", match.Class)
		}()
	}
}

// Wiring on QUIC: quic-go hands the hello to crypto/tls, so fingerprint from
// ClientHelloInfo.
func ExampleFromClientHelloInfo() {
	conf := &stdtls.Config{GetConfigForClient: func(chi *stdtls.ClientHelloInfo) (*stdtls.Config, error) {
		h := fingerprint.FromClientHelloInfo(chi)
		fp := fingerprint.Compute(&h, fingerprint.QUIC)
		_ = context.WithValue(chi.Context(), fpKey{}, fp)
		return nil, nil
	}}
	_ = conf
}
