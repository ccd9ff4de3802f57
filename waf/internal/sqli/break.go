package sqli

// sqlBreakTail reports whether the text after a quote can be the rest of
// an injection that breaks out of the application's string literal. The
// application's own closing quote follows the value, so a tail that
// changes the query must rebalance it — with another quote, a comment
// ("--", "#", "/*"), a ';' or a NUL — or at least hold SQL syntax (an
// operator, a parenthesis) beyond words. A tail of words, numbers and
// prose punctuation alone ("Val-d'Or 37791", "Palme d'Or winners") leaves
// the literal unterminated: the query fails instead of changing, so the
// value is prose with an apostrophe, not a breakout — unless its first word
// starts a statement or clause ("'alter a", "' union"), which prose after
// an apostrophe does not.
func sqlBreakTail(tail []byte) bool {
	if sqlBreakKeyword(tail) {
		return true
	}
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c >= 0x80:
		case c == ' ', c == '\t', c == '\r', c == '\n', c == '.', c == ',', c == ':', c == '?', c == '!', c == '_':
		case c == '-':
			if i+1 < len(tail) && tail[i+1] == '-' {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// sqlBreakKeyword reports whether the first word of tail (after blanks) is
// a keyword that starts a statement or clause.
func sqlBreakKeyword(tail []byte) bool {
	i := 0
	for i < len(tail) && (tail[i] == ' ' || tail[i] == '\t' || tail[i] == '\r' || tail[i] == '\n') {
		i++
	}
	j := i
	for j < len(tail) && j-i < 12 && isIdent(tail[j]) {
		j++
	}
	if j == i || j-i >= 12 {
		return false
	}
	kw, logic := keyword(lowerWord(tail[i:j]))
	if logic {
		return false
	}
	switch kw {
	case kwUnion, kwSelect, kwStmt, kwWaitfor, kwOrderGroup, kwHaving, kwInto, kwLimit, kwProcedure, kwWhere:
		return true
	}
	return false
}

// lowerWord returns w lower-cased in a fresh array (w is at most 12 bytes).
func lowerWord(w []byte) []byte {
	var buf [12]byte
	for i, c := range w {
		buf[i] = lower(c)
	}
	return buf[:len(w)]
}
