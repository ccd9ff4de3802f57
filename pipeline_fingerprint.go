package edge

import (
	"net/http"

	"edge/fingerprint"
)

// classify looks the connection's fingerprint up in the database and checks the User-Agent against
// it. It returns the strongest action: a database "block", or a UA mismatch under
// ua_mismatch_action = "block".
func (s *Server) classify(ex *exchange, r *http.Request) fingerprint.Action {
	if ex.conn == nil || ex.conn.fp.JA4 == "" {
		return fingerprint.ActionNone
	}
	m, ok := ex.snap.fpDB.Lookup(&ex.conn.fp)
	if !ok {
		return fingerprint.ActionNone
	}
	ex.fpMatch, ex.fpMatched = m, true
	act := m.Action
	if ua := ex.snap.cfg.Fingerprint.UAMismatchVerdict(r.UserAgent(), m.Class); ua != fingerprint.ActionNone {
		ex.uaMismatch = true
		if ua == fingerprint.ActionBlock {
			act = fingerprint.ActionBlock
		}
	}
	return act
}
