package tls

import (
	stdtls "crypto/tls"
	"strings"
)

// group describes one key-exchange group edge can negotiate.
type group struct {
	id      stdtls.CurveID
	name    string   // IANA TLS Supported Groups registry name
	aliases []string // other accepted spellings in configuration (case-insensitive)
	hybrid  bool     // hybrid post-quantum (ML-KEM + ECDH)
}

// knownGroups lists every group crypto/tls in Go 1.26 implements, in the
// order crypto/tls prefers them (hybrids first). Names follow the IANA "TLS
// Supported Groups" registry (RFC 8422 §5.1.1, RFC 7748,
// draft-ietf-tls-ecdhe-mlkem §3).
var knownGroups = []group{
	{id: stdtls.X25519MLKEM768, name: "X25519MLKEM768", hybrid: true},
	{id: stdtls.SecP256r1MLKEM768, name: "SecP256r1MLKEM768", hybrid: true},
	{id: stdtls.SecP384r1MLKEM1024, name: "SecP384r1MLKEM1024", hybrid: true},
	{id: stdtls.X25519, name: "x25519"},
	{id: stdtls.CurveP256, name: "secp256r1", aliases: []string{"P-256", "CurveP256", "P256"}},
	{id: stdtls.CurveP384, name: "secp384r1", aliases: []string{"P-384", "CurveP384", "P384"}},
	{id: stdtls.CurveP521, name: "secp521r1", aliases: []string{"P-521", "CurveP521", "P521"}},
}

// ParseGroup returns the CurveID for a group name. It accepts the IANA
// registry name ("X25519MLKEM768", "x25519", "secp256r1") and the common
// aliases ("X25519", "P-256", "CurveP256"), case-insensitively.
func ParseGroup(name string) (stdtls.CurveID, bool) {
	for i := range knownGroups {
		g := &knownGroups[i]
		if strings.EqualFold(name, g.name) {
			return g.id, true
		}
		for _, a := range g.aliases {
			if strings.EqualFold(name, a) {
				return g.id, true
			}
		}
	}
	return 0, false
}

// GroupName returns the IANA registry name of a key-exchange group
// ("X25519MLKEM768", "x25519", "secp256r1"), "" for the zero CurveID (no key
// exchange, e.g. a TLS 1.2 RSA handshake) and "unknown" for anything else.
// The returned strings are constants: GroupName does not allocate.
func GroupName(id stdtls.CurveID) string {
	if id == 0 {
		return ""
	}
	for i := range knownGroups {
		if knownGroups[i].id == id {
			return knownGroups[i].name
		}
	}
	return "unknown"
}

// IsHybrid reports whether id is a hybrid post-quantum key exchange
// (ML-KEM combined with X25519 or a NIST curve).
func IsHybrid(id stdtls.CurveID) bool {
	switch id {
	case stdtls.X25519MLKEM768, stdtls.SecP256r1MLKEM768, stdtls.SecP384r1MLKEM1024:
		return true
	}
	return false
}

// groupIndex returns the position of id in knownGroups, or len(knownGroups)
// for an unknown or absent group. It indexes the per-group counters.
func groupIndex(id stdtls.CurveID) int {
	for i := range knownGroups {
		if knownGroups[i].id == id {
			return i
		}
	}
	return len(knownGroups)
}

// VersionName returns "TLS1.3", "TLS1.2", "TLS1.1", "TLS1.0" or "unknown".
// The returned strings are constants.
func VersionName(v uint16) string {
	switch v {
	case stdtls.VersionTLS13:
		return "TLS1.3"
	case stdtls.VersionTLS12:
		return "TLS1.2"
	case stdtls.VersionTLS11:
		return "TLS1.1"
	case stdtls.VersionTLS10:
		return "TLS1.0"
	}
	return "unknown"
}
