package edge

import (
	"time"

	"edge/tls"
)

// statusOCSP is one certificate's OCSP stapling state on the status page.
type statusOCSP struct {
	Name     string `json:"name"`
	CertFile string `json:"cert_file"`
	// Status is the responder's last answer: "good", "revoked", "unknown", "" before any.
	Status  string `json:"status"`
	Stapled bool   `json:"stapled"`
	// SecondsLeft is the time until the staple's nextUpdate (0 when none is stapled).
	SecondsLeft float64 `json:"seconds_left"`
	LastError   string  `json:"last_error,omitempty"`
}

// ticketKeysSource names where the session ticket keys in use come from, as the
// edge_tls_ticket_keys_source series does: "local", "redis" or "fallback".
func (s *Server) ticketKeysSource(ts tls.Stats) string {
	switch {
	case s.tickets == nil:
		return "local"
	case ts.TicketKeysFleet:
		return "redis"
	}
	return "fallback"
}

// statusOCSPList is the OCSP part of the status page's TLS card.
func statusOCSPList(ts tls.Stats, now time.Time) []statusOCSP {
	out := make([]statusOCSP, 0, len(ts.OCSP))
	for _, o := range ts.OCSP {
		so := statusOCSP{Name: o.Name, CertFile: o.CertFile, Status: o.Status, Stapled: o.Stapled, LastError: o.LastError}
		if o.Stapled {
			so.SecondsLeft = max(o.NextUpdate.Sub(now).Seconds(), 0)
		}
		out = append(out, so)
	}
	return out
}
