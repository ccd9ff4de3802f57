package tls

import "time"

// DefaultConfig returns the [tls] section defaults:
//
//   - min_version = "1.3": TLS 1.3 only (its zero value "" is rejected by
//     Validate). "1.2" is allowed with a warning.
//   - groups = the three hybrid post-quantum groups, then x25519, secp256r1
//     and secp384r1 (IANA names). crypto/tls ignores the order of this list
//     and always selects a hybrid group first when both sides support one.
//   - pq_policy = "prefer": negotiate a hybrid group whenever the client
//     supports one (even with a HelloRetryRequest), otherwise classical.
//   - certificates = none, cert_dir = "" (none), default_cert = "" (the
//     first certificate loaded; see Config.DefaultCert). With no certificate
//     at all the Terminator serves a generated self-signed certificate for
//     "localhost" so that a zero-setup edge starts.
//   - session_tickets = true: TLS 1.3 session tickets, keys rotated every
//     TicketKeyRotation, TicketKeysKept keys accepted.
//   - session_ticket_keys = "local": each edge rotates its own keys
//     ("redis": the fleet shares them; see package ticketkeys).
//   - ocsp_stapling = true: certificates whose leaf names an OCSP responder
//     get a fetched, verified staple, refreshed at half its validity;
//     ocsp_fetch_timeout_ms = 10000 and ocsp_max_response_bytes = 16384
//     bound each fetch (a zero value is rejected by Validate).
//   - ech.key_files = none: Encrypted Client Hello off.
func DefaultConfig() Config {
	return Config{
		MinVersion: "1.3",
		Groups: []string{
			"X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024",
			"x25519", "secp256r1", "secp384r1",
		},
		PQPolicy:             PQPrefer,
		SessionTickets:       true,
		SessionTicketKeys:    TicketKeysLocal,
		OCSPStapling:         true,
		OCSPFetchTimeoutMS:   10000,
		OCSPMaxResponseBytes: 16384,
		ClientAuth:           ClientAuthConfig{Mode: ClientAuthOff},
	}
}

// Fixed operating parameters. They are not configuration keys.
const (
	// TicketKeyRotation is how often a new session ticket key is generated.
	TicketKeyRotation = 6 * time.Hour
	// TicketKeysKept is how many ticket keys (the current one first) can
	// decrypt a ticket, so a ticket is accepted for at most
	// TicketKeyRotation*TicketKeysKept (24 h) after it was issued.
	TicketKeysKept = 4
	// WatchDebounce is how long Watch waits after the last file-system event
	// before it calls Reload, so a writer replacing a certificate and its
	// key one after the other causes a single reload.
	WatchDebounce = 250 * time.Millisecond
	// WatchMaxDelay caps the debounce: a directory that never stops changing
	// still gets a reload this long after the first relevant event.
	WatchMaxDelay = 2 * time.Second
	// ExpiryWarning is how close to its NotAfter a certificate makes
	// Validate warn.
	ExpiryWarning = 14 * 24 * time.Hour
	// MaxPEMFileBytes bounds every certificate, key, OCSP and ECH key file.
	MaxPEMFileBytes = 1 << 20
	// MinOCSPFetchTimeoutMS and MaxOCSPFetchTimeoutMS bound
	// ocsp_fetch_timeout_ms.
	MinOCSPFetchTimeoutMS = 100
	MaxOCSPFetchTimeoutMS = 60000
	// MinOCSPResponseBytes and MaxOCSPResponseBytes bound
	// ocsp_max_response_bytes. A typical response is 0.5 to 3 KiB.
	MinOCSPResponseBytes = 1024
	MaxOCSPResponseBytes = 1 << 20
	// MaxCertDirFiles bounds the number of entries read from cert_dir.
	MaxCertDirFiles = 10000
)
