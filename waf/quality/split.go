package quality

import "crypto/sha256"

// Part is one of the two halves every corpus is split into. Rules are
// written and adjusted looking at the Tune half only; the Check half judges
// them, and the gap between the halves shows how far a rule matches the
// strings of particular lines rather than the attack.
type Part uint8

const (
	Tune Part = iota
	Check
)

// String returns "tune" or "check".
func (p Part) String() string {
	if p == Check {
		return "check"
	}
	return "tune"
}

// splitSalt is prepended to a line's id before hashing. The shared corpora
// are themselves one half of their sources, chosen by an unpublished hash
// of the same ids; the salt keeps this split independent of that one (an
// unsalted hash of the same kind would put every shared line in one part).
const splitSalt = "edge-waf-split-v1\n"

// PartOf returns the part of the line with the given id: SHA-256 of
// splitSalt followed by the id's bytes; Tune when the first digest byte is
// even, Check when it is odd. The function is stable across Go versions and
// machines and easy to reproduce elsewhere:
//
//	printf 'edge-waf-split-v1\n%s' "$id" | sha256sum   # first hex pair even → tune
func PartOf(id string) Part {
	h := sha256.New()
	h.Write([]byte(splitSalt))
	h.Write([]byte(id))
	var sum [sha256.Size]byte
	return Part(h.Sum(sum[:0])[0] & 1)
}
