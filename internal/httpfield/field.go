package httpfield

// ParseQ parses an RFC 9110 §12.4.2 qvalue, "0" ["." 0*3DIGIT] or "1" ["." 0*3("0")], into
// thousandths: "0.5" is 500, "1" is 1000. Anything else is not a qvalue.
func ParseQ(v string) (int, bool) {
	if v == "" || (v[0] != '0' && v[0] != '1') {
		return 0, false
	}
	q := int(v[0]-'0') * 1000
	if len(v) == 1 {
		return q, true
	}
	if v[1] != '.' || len(v) > 5 {
		return 0, false
	}
	scale := 100
	for i := 2; i < len(v); i++ {
		d := v[i]
		if d < '0' || d > '9' || (q == 1000 && d != '0') {
			return 0, false
		}
		q += int(d-'0') * scale
		scale /= 10
	}
	return q, true
}

// IsTokenChar reports whether c is an RFC 9110 §5.6.2 tchar.
func IsTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// IsToken reports whether s is a non-empty RFC 9110 §5.6.2 token.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !IsTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// TrimOWS removes RFC 9110 §5.6.3 optional white space (spaces and tabs) from both ends of s.
func TrimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// EqualFold reports whether s equals lower, a lower-case ASCII word, ignoring ASCII case.
func EqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
