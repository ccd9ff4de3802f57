package waf

import (
	"slices"
	"unicode/utf8"
)

// A transformFunc appends the transformed form of src to dst. Every transform
// is total (invalid encodings are left as they are, never an error) and
// non-growing (the appended part is never longer than src), except
// base64_scan, which appends at most 3*len(src)+4 bytes.
type transformFunc func(dst, src []byte) []byte

// transformGate maps a transform to the byte classes (gate.go) without which
// it returns its input unchanged (clsAlways: no such classes) and, for some,
// a finer cheap test run when one of those classes is present. A chain step
// whose gate says no shares its parent's bytes without running the
// transform. drops and adds bound the classes of the output: none of drops,
// none the input lacks but those of adds (clsAny: a decoder may produce any
// byte); scan plans follow that bound through chains. fold: trigger classes
// that only make the transform fold case — an input whose trigger classes
// are all in fold comes out lower-cased and otherwise unchanged. FuzzTransformGate
// checks all of it against the transforms. empty: classes without which
// the transform's output is empty (0: none such).
var transformGate = map[string]struct {
	trig        uint32
	need        func([]byte) bool
	drops, adds uint32
	fold        uint32
	empty       uint32
}{
	"url_decode":       {clsPercent, nil, 0, clsAny, 0, 0},
	"url_decode_once":  {clsPercent, nil, 0, clsAny, 0, 0},
	"html_entity":      {clsAmp, nil, 0, clsAny, 0, 0},
	"js_decode":        {clsBackslash, nil, 0, clsAny, 0, 0},
	"lowercase":        {clsUpper, nil, clsUpper, 0, clsUpper, 0},
	"compress_ws":      {clsWSRun | clsCtlWS | clsNUL, needCompressWS, 0, clsSpace | clsWSRun, 0, 0},
	"remove_ws":        {clsSpace | clsCtlWS, nil, clsSpace | clsCtlWS | clsWSRun, 0, 0, 0},
	"remove_nulls":     {clsNUL, nil, clsNUL, clsWSRun, 0, 0},
	"sql_comments":     {clsHash | clsSlash | clsStar | clsDash, needSQLComments, 0, clsAny, 0, 0},
	"path_normalize":   {clsBackslash | clsSlash | clsDot | clsHigh, needPathNormalize, 0, clsAny, 0, 0},
	"base64_decode":    {clsAlways, nil, 0, clsAny, 0, 0},
	"cmdline":          {clsBackslash | clsQuote | clsCaret | clsComma | clsLParen | clsUpper | clsWSRun | clsCtlWS, needCmdLine, 0, clsAny, clsUpper, 0},
	"remove_quotes":    {clsQuote, nil, clsQuote, clsWSRun, 0, 0},
	"utf8_overlong":    {clsHigh, nil, 0, clsAny, 0, 0},
	"trim":             {clsWSRun | clsCtlWS, needTrim, 0, 0, 0, 0},
	"remove_backslash": {clsBackslash, nil, clsBackslash, clsWSRun, 0, 0},
	"base64_scan":      {clsAlways, nil, 0, clsAny, 0, clsLong},
}

func needSQLComments(b []byte) bool {
	for i, c := range b {
		if c == '#' || (i+1 < len(b) && ((c == '/' && b[i+1] == '*') || (c == '*' && b[i+1] == '/') || (c == '-' && b[i+1] == '-'))) {
			return true
		}
	}
	return false
}

func needCompressWS(b []byte) bool {
	for i, c := range b {
		if c == 0 || (isSpace(c) && (c != ' ' || (i+1 < len(b) && isSpace(b[i+1])))) {
			return true
		}
	}
	return false
}

func needCmdLine(b []byte) bool {
	if len(b) > 0 && (isSpace(b[0]) || isSpace(b[len(b)-1])) {
		return true
	}
	for i, c := range b {
		switch {
		case c == '\\' || c == '\'' || c == '"' || c == '^' || c == ',' || c == '(' || ('A' <= c && c <= 'Z'):
			return true
		case isSpace(c) && (c != ' ' || (i+1 < len(b) && isSpace(b[i+1]))):
			return true
		}
	}
	return false
}

// needPathNormalize reports whether b has what path_normalize changes: a
// backslash, the lead byte of an overlong encoding, two slashes in a row,
// or a "." or ".." segment.
func needPathNormalize(b []byte) bool {
	for i, c := range b {
		switch c {
		case '\\', 0xC0, 0xC1, 0xE0, 0xF0:
			return true
		case '/':
			if i+1 < len(b) && b[i+1] == '/' {
				return true
			}
		case '.':
			if i > 0 && b[i-1] != '/' {
				continue
			}
			j := i + 1
			if j < len(b) && b[j] == '.' {
				j++
			}
			if j == len(b) || b[j] == '/' {
				return true
			}
		}
	}
	return false
}

func needTrim(b []byte) bool {
	return len(b) > 0 && (isSpace(b[0]) || isSpace(b[len(b)-1]))
}

// transforms maps rule-file transform names to their functions.
var transforms = map[string]transformFunc{
	"url_decode":       urlDecodeRepeat,
	"url_decode_once":  urlDecodeOnce,
	"html_entity":      htmlEntityDecode,
	"js_decode":        jsDecode,
	"lowercase":        lowercase,
	"compress_ws":      compressWhitespace,
	"remove_ws":        removeWhitespace,
	"remove_nulls":     removeNulls,
	"sql_comments":     removeSQLComments,
	"path_normalize":   normalizePath,
	"base64_decode":    base64Decode,
	"cmdline":          cmdLine,
	"remove_quotes":    removeQuotes,
	"utf8_overlong":    decodeOverlongUTF8,
	"trim":             trimSpace,
	"remove_backslash": removeBackslash,
	"base64_scan":      base64Scan,
}

// urlDecodeOnce decodes %XX and %uXXXX once; '+' is left alone (form decoding
// of arguments happens at extraction). Invalid escapes are copied verbatim.
func urlDecodeOnce(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		if i+2 < len(src)+0 && i+2 <= len(src)-1 {
			if h, ok := unhex(src[i+1]); ok {
				if l, ok := unhex(src[i+2]); ok {
					dst = append(dst, h<<4|l)
					i += 2
					continue
				}
			}
		}
		if i+5 < len(src) && (src[i+1] == 'u' || src[i+1] == 'U') {
			var r rune
			ok := true
			for j := 2; j < 6; j++ {
				h, hok := unhex(src[i+j])
				if !hok {
					ok = false
					break
				}
				r = r<<4 | rune(h)
			}
			if ok {
				dst = appendRuneBounded(dst, r, 6)
				i += 5
				continue
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// appendRuneBounded appends r as UTF-8; full-width ASCII forms (U+FF01–FF5E),
// which IIS maps to ASCII, become their ASCII letter. It never appends more
// than max bytes (max ≥ 3).
func appendRuneBounded(dst []byte, r rune, max int) []byte {
	if r >= 0xFF01 && r <= 0xFF5E {
		return append(dst, byte(r-0xFF01+0x21))
	}
	if r < 0x80 {
		return append(dst, byte(r))
	}
	if !utf8.ValidRune(r) || utf8.RuneLen(r) > max {
		r = utf8.RuneError
	}
	return utf8.AppendRune(dst, r)
}

// urlDecodeRepeat decodes until the value is stable, at most
// maxURLDecodeRounds times.
func urlDecodeRepeat(dst, src []byte) []byte {
	start := len(dst)
	if indexByte(src, '%') < 0 {
		return append(dst, src...)
	}
	dst = urlDecodeOnce(dst, src)
	for round := 1; round < maxURLDecodeRounds; round++ {
		cur := dst[start:]
		if indexByte(cur, '%') < 0 {
			break
		}
		n := len(dst)
		dst = urlDecodeOnce(dst, cur)
		if len(dst)-n == len(cur) {
			dst = dst[:n]
			break
		}
		// Move the new result down over the previous one.
		m := copy(dst[start:], dst[n:])
		dst = dst[:start+m]
	}
	return dst
}

func lowercase(dst, src []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(src))[:n+len(src)]
	out := dst[n:]
	for i, c := range src {
		out[i] = lowerByte[c]
	}
	return dst
}

// lowerByte maps A–Z to a–z and every other byte to itself.
var lowerByte = func() (t [256]byte) {
	for c := range t {
		t[c] = lower(byte(c))
	}
	return t
}()

// compressWhitespace turns every run of whitespace (and NUL) into one space.
func compressWhitespace(dst, src []byte) []byte {
	inSpace := false
	for _, c := range src {
		if isSpace(c) || c == 0 {
			if !inSpace {
				dst = append(dst, ' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		dst = append(dst, c)
	}
	return dst
}

func removeWhitespace(dst, src []byte) []byte {
	// Every byte is written and the end moves past the non-blank ones:
	// no branch on the data.
	n := len(dst)
	dst = slices.Grow(dst, len(src))[:n+len(src)]
	out := dst[n:]
	w := 0
	for _, c := range src {
		out[w] = c
		w += int(keepByte[c])
	}
	return dst[:n+w]
}

// keepByte is 0 for the whitespace bytes (isSpace), else 1.
var keepByte = func() (t [256]uint8) {
	for c := range t {
		if !isSpace(byte(c)) {
			t[c] = 1
		}
	}
	return t
}()

func removeNulls(dst, src []byte) []byte {
	for _, c := range src {
		if c != 0 {
			dst = append(dst, c)
		}
	}
	return dst
}

func trimSpace(dst, src []byte) []byte {
	i, j := 0, len(src)
	for i < j && isSpace(src[i]) {
		i++
	}
	for j > i && isSpace(src[j-1]) {
		j--
	}
	return append(dst, src[i:j]...)
}

func removeQuotes(dst, src []byte) []byte {
	for _, c := range src {
		if c != '\'' && c != '"' && c != '`' {
			dst = append(dst, c)
		}
	}
	return dst
}

func removeBackslash(dst, src []byte) []byte {
	for _, c := range src {
		if c != '\\' {
			dst = append(dst, c)
		}
	}
	return dst
}

// cmdLine normalises a shell command line for matching: it deletes the
// characters shells ignore inside words (\ ' " ^), turns runs of whitespace
// and commas into single spaces, removes spaces before "(", and lower-cases.
func cmdLine(dst, src []byte) []byte {
	space := false
	for _, c := range src {
		switch {
		case c == '\\' || c == '\'' || c == '"' || c == '^':
			continue
		case isSpace(c) || c == ',':
			space = true
			continue
		case c == '(':
			space = false
		}
		if space {
			dst = append(dst, ' ')
			space = false
		}
		dst = append(dst, lower(c))
	}
	return dst
}

// removeSQLComments replaces /* ... */ comments (including MySQL's
// /*!50000 ... */ version comments, whose content is kept) with a space and
// deletes "--" and "#" comments to the end of the line. An unterminated /*
// comment runs to the end of the value.
func removeSQLComments(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			if i+2 < len(src) && src[i+2] == '!' {
				// Version comment: keep its content, drop the marker and digits.
				j := i + 3
				for j < len(src) && j < i+8 && src[j] >= '0' && src[j] <= '9' {
					j++
				}
				dst = append(dst, ' ')
				i = j - 1
				continue
			}
			end := indexPair(src, i+2, '*', '/')
			dst = append(dst, ' ')
			if end < 0 {
				return dst
			}
			i = end + 1
		case c == '*' && i+1 < len(src) && src[i+1] == '/':
			dst = append(dst, ' ')
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-', c == '#':
			end := indexByteFrom(src, i, '\n')
			dst = append(dst, ' ')
			if end < 0 {
				return dst
			}
			i = end - 1 // keep the newline
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// decodeOverlongUTF8 maps the overlong encodings of ASCII characters
// (C0/C1 xx, E0 80 xx, F0 80 80 xx) to the character and keeps every other
// byte.
func decodeOverlongUTF8(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if (c == 0xC0 || c == 0xC1) && i+1 < len(src) && src[i+1]&0xC0 == 0x80 {
			dst = append(dst, (c&0x1F)<<6|src[i+1]&0x3F)
			i++
			continue
		}
		if c == 0xE0 && i+2 < len(src) && src[i+1]&0xE0 == 0x80 && src[i+2]&0xC0 == 0x80 {
			r := rune(src[i+1]&0x3F)<<6 | rune(src[i+2]&0x3F)
			if r < 0x80 {
				dst = append(dst, byte(r))
				i += 2
				continue
			}
		}
		if c == 0xF0 && i+3 < len(src) && src[i+1] == 0x80 && src[i+2]&0xC0 == 0x80 && src[i+3]&0xC0 == 0x80 {
			r := rune(src[i+2]&0x3F)<<6 | rune(src[i+3]&0x3F)
			if r < 0x80 {
				dst = append(dst, byte(r))
				i += 3
				continue
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// normalizePath turns backslashes into slashes, decodes overlong UTF-8
// dots and slashes, collapses repeated slashes and resolves "." and ".."
// segments without ever going above the root (a leading "../" stays, so
// traversal attempts remain visible).
func normalizePath(dst, src []byte) []byte {
	start := len(dst)
	dst = decodeOverlongUTF8(dst, src)
	p := dst[start:]
	for i, c := range p {
		if c == '\\' {
			p[i] = '/'
		}
	}
	// Resolve segments in place: w is the write index within p.
	w := 0
	r := 0
	n := len(p)
	rooted := n > 0 && p[0] == '/'
	if rooted {
		w, r = 1, 1
	}
	minW := w // never pop below this (keeps leading ../)
	for r < n {
		switch {
		case p[r] == '/':
			r++ // collapse //
		case p[r] == '.' && (r+1 == n || p[r+1] == '/'):
			r++
		case p[r] == '.' && r+1 < n && p[r+1] == '.' && (r+2 == n || p[r+2] == '/'):
			r += 2
			if w > minW {
				w--
				for w > minW && p[w-1] != '/' {
					w--
				}
			} else {
				// Keep an unresolvable "..".
				p[w], p[w+1] = '.', '.'
				w += 2
				if r < n {
					p[w] = '/'
					w++
				}
				minW = w
			}
		default:
			for r < n && p[r] != '/' {
				p[w] = p[r]
				w++
				r++
			}
			if r < n {
				p[w] = '/'
				w++
				r++
			}
		}
	}
	return dst[:start+w]
}

// base64Decode decodes standard or URL-safe base64 (padding optional,
// whitespace skipped). A value that is not base64 is appended unchanged.
func base64Decode(dst, src []byte) []byte {
	start := len(dst)
	var acc uint32
	bits := 0
	valid := 0
	for _, c := range src {
		var v byte
		switch {
		case 'A' <= c && c <= 'Z':
			v = c - 'A'
		case 'a' <= c && c <= 'z':
			v = c - 'a' + 26
		case '0' <= c && c <= '9':
			v = c - '0' + 52
		case c == '+' || c == '-':
			v = 62
		case c == '/' || c == '_':
			v = 63
		case c == '=' || isSpace(c):
			continue
		default:
			return append(dst[:start], src...)
		}
		valid++
		acc = acc<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			dst = append(dst, byte(acc>>bits))
		}
	}
	if valid < 4 {
		return append(dst[:start], src...)
	}
	return dst
}

// base64Scan decodes every run of at least 8 base64 characters at each of
// the four possible alignments, so a base64 fragment cut out of a longer
// encoding still decodes to readable text, and keeps the text: each run of
// at least minB64Text printable ASCII bytes (tab and line breaks included)
// of a decoding, followed by '\n'. Binary bytes, and the shorter text runs
// that random bytes decode to by chance, are dropped, so ordinary words
// that happen to be base64 ("ordinary", "fieldname") yield nothing to
// inspect while an encoded payload — or the class names inside an encoded
// Java object — yields its text. Other bytes of src are dropped.
func base64Scan(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		if b64Value[src[i]] < 0 {
			i++
			continue
		}
		j := i
		for j < len(src) && b64Value[src[j]] >= 0 {
			j++
		}
		if j-i >= 8 {
			for skip, text := 0, textAlignments(src[i:j]); text != 0; skip, text = skip+1, text>>1 {
				if text&1 == 0 {
					continue
				}
				// Decoded after dst's end, the text moved down over it:
				// keepText writes a byte only where it has read one.
				start := len(dst)
				dec := base64Bits(dst, src[i+skip:j])
				dst = keepText(dec[:start], dec[start:])
			}
		}
		i = j
	}
	return dst
}

// textAlignments returns the alignments (bit skip: decoding from run[skip:])
// whose decoding of run, a run of base64 characters, has a run of at least
// minB64Text text bytes: base64Scan decodes only those. It reads run as one
// bit stream, four characters (24 bits, three bytes of each alignment) at
// a time: the byte the decoding from run[skip:] produces k-th starts at bit
// 6*skip+8*k, so alignment skip owns the bytes starting at the even
// positions p ≡ 6*skip (mod 8), p ≥ 6*skip. Per alignment a history word
// gets one bit per byte (text or not), and four ones in a row anywhere mark
// the alignment; nothing in the loop branches on the data.
func textAlignments(run []byte) uint8 {
	if !maybeText(run) {
		return 0
	}
	var w uint64                      // the stream's latest bits, the last read lowest
	var h0, h1, h2, h3 uint32         // per alignment: text bits, the latest lowest
	var any0, any1, any2, any3 uint32 // per alignment: four in a row seen
	for i := 0; i < len(run); i += 4 {
		m := min(4, len(run)-i)
		w = b64Block(w, run[i:i+m])
		// Relative to the block's start r, the bytes ending in it start at
		// r = -6, -4, …, 16, at shift 16-r in w; r ≡ 0, 6, 4, 2 (mod 8) are
		// alignments 0, 1, 2, 3.
		t := func(shift uint) uint32 { return uint32(textBit[byte(w>>shift)]) }
		n0 := t(16)<<2 | t(8)<<1 | t(0)
		n1 := t(18)<<2 | t(10)<<1 | t(2)
		n2 := t(20)<<2 | t(12)<<1 | t(4)
		n3 := t(22)<<2 | t(14)<<1 | t(6)
		if i == 0 { // bytes before an alignment's first character
			n1 &^= 4
			n2 &^= 6
			n3 = 0
		}
		if m < 4 { // bytes past the run's end
			end := b64Valid[m]
			n0, n1, n2, n3 = n0&end[0], n1&end[1], n2&end[2], n3&end[3]
		}
		h0, h1, h2, h3 = h0<<3|n0, h1<<3|n1, h2<<3|n2, h3<<3|n3
		any0 |= h0 & (h0 >> 1) & (h0 >> 2) & (h0 >> 3)
		any1 |= h1 & (h1 >> 1) & (h1 >> 2) & (h1 >> 3)
		any2 |= h2 & (h2 >> 1) & (h2 >> 2) & (h2 >> 3)
		any3 |= h3 & (h3 >> 1) & (h3 >> 2) & (h3 >> 3)
	}
	nz := func(x uint32) uint8 { return uint8((uint64(x) + 0xFFFFFFFF) >> 32) }
	return nz(any0) | nz(any1)<<1 | nz(any2)<<2 | nz(any3)<<3
}

// maybeText reports whether some alignment's decoding of run, a run of
// base64 characters, has four bytes in a row that may be text, looking at
// their five top bits only: text is 0x20–0x7E, tab and line breaks, so its
// top bit is clear and the next two are not both clear unless the byte is
// in 0x08–0x0F (bits 4 and 3: 0 and 1). The byte starting at shift s of
// the stream word (as in textAlignments) has its bit k at s+k, so the
// tests of a block's 12 bytes sit at the even positions of a combination
// of w's shifts, each alignment's 8 apart, and a block's newest byte 8
// below the next block's oldest once the history moves up 24 bits a block.
// Bytes no alignment decodes are left out: in the first block those
// before an alignment's first character (firstBlockOut), in a short last
// block those ending past the run (s < 24-6m). A cheap filter, no table
// but base64's: most words that happen to be base64 fail it, and
// textAlignments then decodes nothing.
func maybeText(run []byte) bool {
	var w, h, four uint64
	for i := 0; i < len(run); i += 4 {
		block := run[i:min(i+4, len(run))]
		w = b64Block(w, block)
		t := ^(w >> 7) & (w>>6 | w>>5 | ^(w>>4)&(w>>3)) & 0x555555
		if i == 0 {
			t &^= firstBlockOut
		}
		t &= ^uint64(0) << (24 - 6*len(block))
		h = h<<24 | t
		four |= h & (h >> 8) & (h >> 16) & (h >> 24)
	}
	return four != 0
}

// firstBlockOut are the shifts, in a run's first block, of the bytes that
// start before their alignment's first character (at bit 6*skip): r = -2
// for alignment 1, r = -4 and 4 for 2, r = -6, 2 and 10 for 3 (s = 16-r),
// as textAlignments clears them.
const firstBlockOut = 1<<18 | 1<<20 | 1<<12 | 1<<22 | 1<<14 | 1<<6

// b64Block returns the stream word w with block, at most four base64
// characters, read into its low 24 bits (6 each; a short last block as if
// zero characters followed it).
func b64Block(w uint64, block []byte) uint64 {
	for _, c := range block {
		w = w<<6 | uint64(b64Value[c]&63)
	}
	return w << (6 * uint(4-len(block)))
}

// b64Valid is, for a last block of m < 4 characters, per alignment the
// bytes (as in textAlignments' n0…n3) that end within its 6*m bits: a byte
// starting at r ends within them when r+8 ≤ 6*m.
var b64Valid = func() (v [4][4]uint32) {
	for m := 1; m < 4; m++ {
		for a, rs := range [4][3]int{{0, 8, 16}, {-2, 6, 14}, {-4, 4, 12}, {-6, 2, 10}} {
			for k, r := range rs {
				if r+8 <= 6*m {
					v[m][a] |= 4 >> k
				}
			}
		}
	}
	return v
}()

// textBit is 1 for printable ASCII, tab and line breaks, else 0.
var textBit = func() (t [256]uint8) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = 1
	}
	t['\t'], t['\n'], t['\r'] = 1, 1, 1
	return t
}()

// minB64Text is the shortest decoded text base64Scan keeps: no literal a
// base64_scan rule needs is shorter, and a random 4-byte run is all text
// about once in fifty.
const minB64Text = 4

// keepText appends to dst each run of at least minB64Text text bytes of
// src, followed by '\n'.
func keepText(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		if textBit[src[i]] == 0 {
			i++
			continue
		}
		j := i
		for j < len(src) && textBit[src[j]] != 0 {
			j++
		}
		run := src[i:j]
		i = j + 1 // src[j] is not text: the '\n' below may overwrite it
		if len(run) >= minB64Text {
			dst = append(dst, run...)
			dst = append(dst, '\n')
		}
	}
	return dst
}

// b64Value maps a byte of either base64 alphabet (standard and URL-safe)
// to its 6-bit value, and every other byte to -1.
var b64Value = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" {
		t[c] = int8(i)
	}
	t['+'], t['-'], t['/'], t['_'] = 62, 62, 63, 63
	return t
}()

// base64Bits decodes base64 characters (no padding or validation).
func base64Bits(dst, src []byte) []byte {
	var acc uint32
	bits := 0
	for _, c := range src {
		v := b64Value[c]
		if v < 0 {
			v = 63
		}
		acc = acc<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			dst = append(dst, byte(acc>>bits))
		}
	}
	return dst
}
