package tls

import stdtls "crypto/tls"

// ConnFacts describes one TLS connection for the access log, the counters
// and the Edge-TLS-* request headers. All strings are constants or come
// from the ConnectionState: building ConnFacts does not allocate.
type ConnFacts struct {
	Version string // "TLS1.3" (VersionName)
	Cipher  string // IANA cipher suite name, e.g. "TLS_AES_128_GCM_SHA256"
	Group   string // IANA group name, e.g. "X25519MLKEM768" (GroupName)
	PQ      bool   // Group is a hybrid post-quantum key exchange
	ALPN    string // negotiated protocol: "h2", "http/1.1", "h3" or ""
	SNI     string // server name the client asked for (the inner one with ECH)
	Resumed bool   // session resumed from a ticket
	ECH     bool   // Encrypted Client Hello accepted
}

// Facts extracts ConnFacts from a completed handshake.
func Facts(cs *stdtls.ConnectionState) ConnFacts {
	return ConnFacts{
		Version: VersionName(cs.Version),
		Cipher:  stdtls.CipherSuiteName(cs.CipherSuite),
		Group:   GroupName(cs.CurveID),
		PQ:      IsHybrid(cs.CurveID),
		ALPN:    cs.NegotiatedProtocol,
		SNI:     cs.ServerName,
		Resumed: cs.DidResume,
		ECH:     cs.ECHAccepted,
	}
}
