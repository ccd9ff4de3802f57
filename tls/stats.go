package tls

import (
	stdtls "crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
)

// FailureReason is why a handshake failed. Reasons are counted in Stats.
type FailureReason uint8

const (
	// FailPQNoHybrid: pq_policy "require" and the client offered no hybrid
	// group the edge enables (alert insufficient_security).
	FailPQNoHybrid FailureReason = iota
	// FailPQTLS12: pq_policy "require" and the client offered TLS 1.2 only
	// (alert insufficient_security).
	FailPQTLS12
	// FailPQClassical: pq_policy "require" and a classical group was
	// negotiated anyway (for example GODEBUG=tlsmlkem=0); the handshake is
	// aborted. It should stay zero.
	FailPQClassical
	// FailNoCommonVersion: the client offered no TLS version the edge
	// accepts (min_version).
	FailNoCommonVersion
	// FailNoCommonGroup: no key-exchange group in common (groups,
	// pq_policy "off").
	FailNoCommonGroup
	// FailNoCommonCipher: no cipher suite in common.
	FailNoCommonCipher
	// FailNotTLS: the first bytes were not a TLS handshake (for example
	// plain HTTP sent to the TLS port).
	FailNotTLS
	// FailRemoteAlert: the client aborted with an alert (often: it does not
	// trust the certificate).
	FailRemoteAlert
	// FailLocalAlert: crypto/tls aborted with an alert (no common version,
	// cipher or group; malformed message).
	FailLocalAlert
	// FailTimeout: the handshake deadline passed.
	FailTimeout
	// FailEOF: the client closed the connection during the handshake.
	FailEOF
	// FailOther: anything else (for example a non-TLS client).
	FailOther
	failureReasonCount
)

var failureNames = [failureReasonCount]string{
	FailPQNoHybrid:      "pq_required_no_hybrid",
	FailPQTLS12:         "pq_required_tls12",
	FailPQClassical:     "pq_required_classical_negotiated",
	FailNoCommonVersion: "no_common_version",
	FailNoCommonGroup:   "no_common_group",
	FailNoCommonCipher:  "no_common_cipher",
	FailNotTLS:          "not_tls",
	FailRemoteAlert:     "remote_alert",
	FailLocalAlert:      "local_alert",
	FailTimeout:         "timeout",
	FailEOF:             "eof",
	FailOther:           "other",
}

// String returns the reason's metric label, e.g. "pq_required_no_hybrid".
func (r FailureReason) String() string {
	if r < failureReasonCount {
		return failureNames[r]
	}
	return "unknown"
}

// versionSlots indexes the per-version counters: TLS 1.3, TLS 1.2, other.
const versionSlots = 3

func versionSlot(v uint16) int {
	switch v {
	case stdtls.VersionTLS13:
		return 0
	case stdtls.VersionTLS12:
		return 1
	}
	return 2
}

// groupSlots indexes the per-group counters: knownGroups, then "unknown".
const groupSlots = 8

var slotVersions = [versionSlots]uint16{stdtls.VersionTLS13, stdtls.VersionTLS12, 0}

// counters are the Terminator's atomic counters.
type counters struct {
	handshakes     [versionSlots][groupSlots]atomic.Uint64 // [versionSlot][groupIndex]
	failures       [failureReasonCount]atomic.Uint64
	sni            [sniMatchCount]atomic.Uint64
	resumed        atomic.Uint64
	echAccepted    atomic.Uint64
	reloads        atomic.Uint64
	reloadFailures atomic.Uint64
}

// HandshakeCount is the number of completed handshakes for one version and
// group.
type HandshakeCount struct {
	Version string // VersionName
	Group   string // GroupName; "" for none
	PQ      bool
	Count   uint64
}

// FailureCount is the number of failed handshakes for one reason.
type FailureCount struct {
	Reason string // FailureReason.String
	Count  uint64
}

// Stats is a point-in-time snapshot of the counters. Zero counts are
// omitted from Handshakes and Failures.
type Stats struct {
	Handshakes []HandshakeCount
	Failures   []FailureCount
	// SNI counts certificate selections by how they matched.
	SNIExact, SNIWildcard, SNIDefault, SNINone uint64
	// Resumed and ECHAccepted count completed handshakes reported through
	// OnHandshake that resumed a session or accepted ECH.
	Resumed, ECHAccepted uint64
	// Reloads counts Reload calls; ReloadFailures counts files (certificate
	// pairs and ECH keys) that failed to load during a reload and kept their
	// previous version.
	Reloads, ReloadFailures uint64
	// Certificates and ECHKeys are the sizes of the serving snapshot.
	Certificates, ECHKeys int
	// TicketKeysFleet reports whether the session ticket keys in use were
	// installed by SetTicketKeys and are not stale. TicketKeyInstalls
	// counts SetTicketKeys calls; TicketFallbackRotations counts the
	// rotations the Terminator did itself because fleet keys were stale.
	TicketKeysFleet                            bool
	TicketKeyInstalls, TicketFallbackRotations uint64
	// OCSP is the stapling state of every certificate OCSP stapling applies
	// to, by cert file; OCSPFetches counts fetches by result. Both are
	// empty when ocsp_stapling is off.
	OCSP        []OCSPStaple
	OCSPFetches []OCSPFetchCount
}

// Failure returns the count for one reason.
func (s Stats) Failure(r FailureReason) uint64 {
	name := r.String()
	for _, f := range s.Failures {
		if f.Reason == name {
			return f.Count
		}
	}
	return 0
}

// OnHandshake counts a completed handshake. The root calls it once per
// connection after Handshake succeeds (TCP) or the QUIC handshake completes.
// It does not allocate.
func (t *Terminator) OnHandshake(cs *stdtls.ConnectionState) {
	t.stats.handshakes[versionSlot(cs.Version)][groupIndex(cs.CurveID)].Add(1)
	if cs.DidResume {
		t.stats.resumed.Add(1)
	}
	if cs.ECHAccepted {
		t.stats.echAccepted.Add(1)
	}
}

// OnHandshakeError counts a failed handshake by reason and returns the
// reason. Refusals counted by the Terminator itself (pq_policy "require")
// are recognised and not counted twice.
func (t *Terminator) OnHandshakeError(err error) FailureReason {
	var pe *pqRefusal
	if errors.As(err, &pe) {
		return pe.reason
	}
	r := classifyHandshakeError(err)
	t.stats.failures[r].Add(1)
	return r
}

func classifyHandshakeError(err error) FailureReason {
	var rh stdtls.RecordHeaderError
	if errors.As(err, &rh) {
		return FailNotTLS
	}
	// crypto/tls returns these as plain errors after sending its alert;
	// the texts are pinned by tests that provoke each one for real.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "tls: client offered only unsupported versions"):
		return FailNoCommonVersion
	case strings.Contains(msg, "tls: no key exchanges supported by both"):
		return FailNoCommonGroup
	case strings.Contains(msg, "tls: no cipher suite supported by both"):
		return FailNoCommonCipher
	}
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed):
		return FailEOF
	case errors.As(err, &ne) && ne.Timeout():
		return FailTimeout
	case errors.As(err, &oe) && oe.Op == "remote error":
		return FailRemoteAlert
	case errors.As(err, &oe) && oe.Op == "local error":
		return FailLocalAlert
	}
	var ae stdtls.AlertError
	if errors.As(err, &ae) {
		return FailLocalAlert
	}
	return FailOther
}

func (t *Terminator) fail(r FailureReason) { t.stats.failures[r].Add(1) }

// Stats returns a snapshot of the counters.
func (t *Terminator) Stats() Stats {
	var s Stats
	for v := range versionSlots {
		for g := range t.stats.handshakes[v] {
			n := t.stats.handshakes[v][g].Load()
			if n == 0 {
				continue
			}
			hc := HandshakeCount{Version: VersionName(slotVersions[v]), Count: n, Group: "unknown"}
			if g < len(knownGroups) {
				hc.Group, hc.PQ = knownGroups[g].name, knownGroups[g].hybrid
			}
			s.Handshakes = append(s.Handshakes, hc)
		}
	}
	for r := range failureReasonCount {
		if n := t.stats.failures[r].Load(); n > 0 {
			s.Failures = append(s.Failures, FailureCount{Reason: r.String(), Count: n})
		}
	}
	s.SNIExact = t.stats.sni[sniExact].Load()
	s.SNIWildcard = t.stats.sni[sniWildcard].Load()
	s.SNIDefault = t.stats.sni[sniDefault].Load()
	s.SNINone = t.stats.sni[sniNone].Load()
	s.Resumed = t.stats.resumed.Load()
	s.ECHAccepted = t.stats.echAccepted.Load()
	s.Reloads = t.stats.reloads.Load()
	s.ReloadFailures = t.stats.reloadFailures.Load()
	s.Certificates = len(t.certs.Load().entries)
	s.ECHKeys = len(*t.ech.Load())
	e := t.tickets.cur.Load()
	s.TicketKeysFleet = e.fleet && t.now().UnixNano() < e.next
	s.TicketKeyInstalls = t.tickets.installs.Load()
	s.TicketFallbackRotations = t.tickets.fallbacks.Load()
	t.ocsp.stats(&s)
	return s
}
