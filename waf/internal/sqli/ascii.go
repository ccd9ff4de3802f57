package sqli

// lower returns c with A–Z mapped to a–z.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 32
	}
	return c
}

// isSpace reports whether c is ASCII white space (space, \t, \n, \v, \f,
// \r).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
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
