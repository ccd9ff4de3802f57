package waf

// ASCII helpers. Request bytes are matched ASCII case-insensitively
// throughout (rule literals, header names, exclusion targets): these are the
// byte-level primitives every step shares, allocation-free and independent
// of Unicode tables.

// lower returns c with A–Z mapped to a–z.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 32
	}
	return c
}

// equalFoldBS reports whether b and s are equal up to ASCII case.
func equalFoldBS(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// equalFoldBytes reports whether a and b (of equal length) are equal up to
// ASCII case.
func equalFoldBytes(a, b []byte) bool {
	for i := range a {
		if a[i] != b[i] && lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// lowerInto appends src lower-cased (ASCII) to dst, stopping when dst is
// full: a caller passes a fixed buffer and gets at most its capacity.
func lowerInto(dst, src []byte) []byte {
	for _, c := range src {
		if len(dst) == cap(dst) {
			break
		}
		dst = append(dst, lower(c))
	}
	return dst
}

// isASCIILetter reports whether c is an ASCII letter.
func isASCIILetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// isSpace reports whether c is ASCII white space (space, \t, \n, \v, \f,
// \r).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// unhex returns the value of the hex digit c, and false when c is none.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// indexByte returns the index of the first c in b, or -1.
func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// indexByteFrom returns the index of the first c in b at or after from, or
// -1.
func indexByteFrom(b []byte, from int, c byte) int {
	for i := from; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// indexPair returns the index of the first byte pair a, c in b at or after
// from, or -1.
func indexPair(b []byte, from int, a, c byte) int {
	for i := from; i+1 < len(b); i++ {
		if b[i] == a && b[i+1] == c {
			return i
		}
	}
	return -1
}

// indexFold returns the first index of lit (lower-case) in b, comparing
// ASCII case-insensitively, or -1.
func indexFold(b, lit []byte) int {
	if len(lit) == 0 {
		return 0
	}
	first := lit[0]
	for i := 0; i+len(lit) <= len(b); i++ {
		if lower(b[i]) != first {
			continue
		}
		j := 1
		for j < len(lit) && lower(b[i+j]) == lit[j] {
			j++
		}
		if j == len(lit) {
			return i
		}
	}
	return -1
}

// indexFoldASCII returns the index in s of the first match of the lower-case ASCII needle, ignoring
// ASCII case, or -1.
func indexFoldASCII(s, needle string) int {
	for i := 0; i+len(needle) <= len(s); i++ {
		j := 0
		for j < len(needle) && lower(s[i+j]) == needle[j] {
			j++
		}
		if j == len(needle) {
			return i
		}
	}
	return -1
}

// containsFold reports whether s contains the lower-case sub, comparing
// ASCII case-insensitively.
func containsFold(s, sub string) bool {
	return indexFold(bytesOf(s), bytesOf(sub)) >= 0
}
