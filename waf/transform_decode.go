package waf

// htmlNamed holds the HTML named character references that matter for
// attack payloads, keyed by lower-case name.
var htmlNamed = map[string]byte{
	"lt": '<', "gt": '>', "amp": '&', "quot": '"', "apos": '\'', "nbsp": ' ',
	"colon": ':', "tab": '\t', "newline": '\n', "lpar": '(', "rpar": ')',
	"sol": '/', "bsol": '\\', "semi": ';', "comma": ',', "period": '.',
	"excl": '!', "equals": '=', "plus": '+', "num": '#', "percnt": '%',
	"dollar": '$', "lsqb": '[', "rsqb": ']', "lbrack": '[', "rbrack": ']',
	"lcub": '{', "rcub": '}', "lbrace": '{', "rbrace": '}', "grave": '`',
	"quest": '?', "ast": '*', "vert": '|', "hat": '^', "lowbar": '_',
}

// htmlEntityDecode decodes numeric (&#60; &#x3c;, semicolon optional,
// leading zeros allowed) and the named references in htmlNamed. Anything
// else is copied verbatim.
func htmlEntityDecode(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '&' || i+2 >= len(src) {
			dst = append(dst, c)
			continue
		}
		if src[i+1] == '#' {
			j := i + 2
			hex := false
			if j < len(src) && (src[j] == 'x' || src[j] == 'X') {
				hex = true
				j++
			}
			var r rune
			digits := 0
			for j < len(src) {
				var d byte
				var ok bool
				if hex {
					d, ok = unhex(src[j])
				} else if src[j] >= '0' && src[j] <= '9' {
					d, ok = src[j]-'0', true
				}
				if !ok {
					break
				}
				if r < 0x110000 {
					if hex {
						r = r<<4 | rune(d)
					} else {
						r = r*10 + rune(d)
					}
				}
				digits++
				j++
			}
			if digits == 0 {
				dst = append(dst, c)
				continue
			}
			if j < len(src) && src[j] == ';' {
				j++
			}
			// The reference is at least 3 bytes ("&#N"); a rune needs at
			// most 4 and anything invalid becomes U+FFFD (3 bytes).
			dst = appendRuneBounded(dst, r, j-i)
			i = j - 1
			continue
		}
		// Named reference: letters then ';' (optional for the four legacy names).
		j := i + 1
		for j < len(src) && j-i <= 8 && (('a' <= src[j] && src[j] <= 'z') || ('A' <= src[j] && src[j] <= 'Z')) {
			j++
		}
		if j == i+1 {
			dst = append(dst, c)
			continue
		}
		var name [8]byte
		n := 0
		for k := i + 1; k < j && n < len(name); k++ {
			name[n] = lower(src[k])
			n++
		}
		b, ok := htmlNamed[string(name[:n])]
		if !ok {
			dst = append(dst, c)
			continue
		}
		if j < len(src) && src[j] == ';' {
			j++
		} else if !(n <= 4 && (string(name[:n]) == "lt" || string(name[:n]) == "gt" || string(name[:n]) == "amp" || string(name[:n]) == "quot")) {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, b)
		i = j - 1
	}
	return dst
}

// jsDecode decodes JavaScript and JSON escapes: \uXXXX, \u{X...}, \xNN, octal
// \NNN and the single-character escapes. Unknown escapes drop the backslash,
// as JavaScript does.
func jsDecode(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' || i+1 >= len(src) {
			dst = append(dst, c)
			continue
		}
		n := src[i+1]
		switch n {
		case 'u':
			if i+5 < len(src) {
				var r rune
				ok := true
				for k := 2; k < 6; k++ {
					h, hok := unhex(src[i+k])
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
			if i+3 < len(src) && src[i+2] == '{' {
				j := i + 3
				var r rune
				for j < len(src) && j < i+10 {
					h, ok := unhex(src[j])
					if !ok {
						break
					}
					r = r<<4 | rune(h)
					j++
				}
				if j < len(src) && src[j] == '}' && j > i+3 {
					dst = appendRuneBounded(dst, r, j+1-i)
					i = j
					continue
				}
			}
			dst = append(dst, 'u')
			i++
		case 'x':
			if i+3 < len(src) {
				if h, ok := unhex(src[i+2]); ok {
					if l, ok := unhex(src[i+3]); ok {
						dst = append(dst, h<<4|l)
						i += 3
						continue
					}
				}
			}
			dst = append(dst, 'x')
			i++
		case 'n':
			dst = append(dst, '\n')
			i++
		case 'r':
			dst = append(dst, '\r')
			i++
		case 't':
			dst = append(dst, '\t')
			i++
		case 'b', 'f', 'v':
			dst = append(dst, ' ')
			i++
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := 0
			j := i + 1
			for j < len(src) && j < i+4 && src[j] >= '0' && src[j] <= '7' {
				v = v*8 + int(src[j]-'0')
				j++
			}
			if v > 0xFF {
				v &= 0xFF
			}
			dst = append(dst, byte(v))
			i = j - 1
		default:
			dst = append(dst, n)
			i++
		}
	}
	return dst
}
