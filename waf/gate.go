package waf

import "bytes"

// Byte-class gating. One pass over a value records which classes of special
// bytes it contains (classMask). A transform whose trigger classes are all
// absent cannot change its input, so a chain whose transforms are all
// untriggered is the identity and costs nothing; a detector whose trigger
// classes are absent cannot match and is not called. Gating is exact: it only
// skips work whose result is already known (the differential test FuzzPrefilter
// compares against evaluation without any gate).

// Byte classes.
const (
	clsPercent   uint32 = 1 << iota // %
	clsPlus                         // +
	clsAmp                          // &
	clsBackslash                    // \
	clsUpper                        // A–Z
	clsSpace                        // ' '
	clsCtlWS                        // \t \n \v \f \r
	clsNUL                          // 0x00
	clsCtl                          // other C0 controls and DEL
	clsQuote                        // ' " `
	clsHash                         // #
	clsSlash                        // /
	clsStar                         // *
	clsDash                         // -
	clsLT                           // <
	clsHigh                         // 0x80–0xFF
	clsCaret                        // ^
	clsComma                        // ,
	clsLParen                       // (
	clsDot                          // .
	// clsWSRun is not a byte but a place: a space at either end of the
	// value, or two in a row — what trim, compress_ws and cmdline act on,
	// where a lone space between words leaves them unchanged.
	clsWSRun
	// clsLong is not a byte either: the value is at least 8 bytes long,
	// the shortest run base64_scan decodes. No transform lengthens a
	// value but the decoders (adds clsAny), so none adds it otherwise.
	clsLong

	// clsAlways is set in every mask: a trigger that includes it always runs.
	clsAlways uint32 = 1 << 31
	// clsAny is every class.
	clsAny = ^uint32(0)
)

// byteClass maps a byte to its class bit (0 for letters, digits and the
// punctuation no transform or detector keys on).
var byteClass = func() (t [256]uint32) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clsUpper
	}
	for c := 0; c < 0x20; c++ {
		t[c] = clsCtl
	}
	t[0x7f] = clsCtl
	for c := 0x80; c < 0x100; c++ {
		t[c] = clsHigh
	}
	for _, c := range []byte{'\t', '\n', '\v', '\f', '\r'} {
		t[c] = clsCtlWS
	}
	t[0] = clsNUL
	t['%'], t['+'], t['&'], t['\\'], t[' '] = clsPercent, clsPlus, clsAmp, clsBackslash, clsSpace
	t['\''], t['"'], t['`'] = clsQuote, clsQuote, clsQuote
	t['#'], t['/'], t['*'], t['-'], t['<'] = clsHash, clsSlash, clsStar, clsDash, clsLT
	t['^'], t[','], t['('], t['.'] = clsCaret, clsComma, clsLParen, clsDot
	return t
}()

// classMask returns the union of the byte classes of b, plus clsAlways,
// clsWSRun when b has a space at either end or two in a row, and clsLong
// when it has at least 8 bytes.
func classMask(b []byte) uint32 {
	// Four independent accumulators: no chain of dependent ORs per byte.
	m, m1, m2, m3 := clsAlways, uint32(0), uint32(0), uint32(0)
	i := 0
	for ; i+4 <= len(b); i += 4 {
		q := b[i : i+4 : i+4]
		m |= byteClass[q[0]]
		m1 |= byteClass[q[1]]
		m2 |= byteClass[q[2]]
		m3 |= byteClass[q[3]]
	}
	for ; i < len(b); i++ {
		m |= byteClass[b[i]]
	}
	m |= m1 | m2 | m3
	if m&clsSpace != 0 && (b[0] == ' ' || b[len(b)-1] == ' ' || bytes.Index(b, doubleSpace) >= 0) {
		m |= clsWSRun
	}
	if len(b) >= 8 {
		m |= clsLong
	}
	return m
}

var doubleSpace = []byte("  ")

// detectorGate maps a detector to the byte classes of which a value must
// contain at least one for the detector to match (absent: no gate). Each
// entry follows from the detector's code: xss starts only at '<' or a quote;
// control_chars needs a C0 control or DEL; invalid_utf8 a byte ≥ 0x80;
// invalid_percent a '%'; html_tag a '<'; sql_open_call a '('.
// TestDetectorGates checks them.
var detectorGate = map[string]uint32{
	"xss":             clsLT | clsQuote,
	"control_chars":   clsNUL | clsCtl | clsCtlWS,
	"invalid_utf8":    clsHigh,
	"invalid_percent": clsPercent,
	"html_tag":        clsLT,
	"sql_open_call":   clsLParen,
}
