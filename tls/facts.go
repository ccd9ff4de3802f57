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
		Cipher:  CipherName(cs.CipherSuite),
		Group:   GroupName(cs.CurveID),
		PQ:      IsHybrid(cs.CurveID),
		ALPN:    cs.NegotiatedProtocol,
		SNI:     cs.ServerName,
		Resumed: cs.DidResume,
		ECH:     cs.ECHAccepted,
	}
}

// CipherName returns the IANA name of a cipher suite. The suites crypto/tls
// enables by default are answered from a switch without allocating; others
// fall back to stdtls.CipherSuiteName (which builds its lookup tables on
// every call).
func CipherName(id uint16) string {
	switch id {
	case stdtls.TLS_AES_128_GCM_SHA256:
		return "TLS_AES_128_GCM_SHA256"
	case stdtls.TLS_AES_256_GCM_SHA384:
		return "TLS_AES_256_GCM_SHA384"
	case stdtls.TLS_CHACHA20_POLY1305_SHA256:
		return "TLS_CHACHA20_POLY1305_SHA256"
	case stdtls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:
		return "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
	case stdtls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:
		return "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
	case stdtls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:
		return "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
	case stdtls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:
		return "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
	case stdtls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:
		return "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
	case stdtls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:
		return "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
	}
	return stdtls.CipherSuiteName(id)
}
