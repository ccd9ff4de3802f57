package edge

import "strings"

// misdirected is the stage that refuses a request sent over a TLS connection for another site:
// with server.reject_misdirected, a request whose canonical Host is not covered by the certificate
// the connection presented for its SNI gets 421 Misdirected Request (RFC 9110 §15.5.20), which
// tells a browser to retry on a connection of its own. Browsers reuse an HTTP/2 or HTTP/3
// connection only for hosts its certificate covers (RFC 9113 §9.1.1, RFC 9114 §3.3), so what
// this refuses is a client that names one site in SNI and asks for another. Connections without
// SNI, cleartext ones and requests without a Host are not checked. It does not allocate unless it
// refuses.
func misdirected(ex *exchange) decision {
	c := ex.conn
	if c == nil || c.id == nil || ex.host == "" || !ex.snap.cfg.Server.RejectMisdirected {
		return pass
	}
	if !c.id.Covers(ex.host) {
		return deny(denyMisdirected, "host "+ex.host+" not covered by the certificate for SNI "+c.tls.SNI)
	}
	return pass
}

// strictSNI is a route's strict_sni: over TLS, the request's Host must be the server name its
// connection sent (without SNI, none is), else 421 — even when the certificate covers both.
// Cleartext requests carry no SNI to compare and are not checked.
func strictSNI(ex *exchange) decision {
	rb := ex.snap.browser.route(ex)
	c := ex.conn
	if rb == nil || !rb.strictSNI || c == nil {
		return pass
	}
	if sni := strings.TrimSuffix(c.tls.SNI, "."); sni == "" || !strings.EqualFold(sni, ex.host) {
		return deny(denyMisdirected, "strict_sni: host "+ex.host+", SNI "+c.tls.SNI)
	}
	return pass
}
