package sqli

// maxPlusCopy bounds the values re-read with '+' as a space.
const maxPlusCopy = 2048

// Scanner holds the token buffer an analysis reuses. Its zero value is
// ready to use; a Scanner serves one goroutine at a time.
type Scanner struct {
	toks []token
}

// Detect reports whether b holds SQL injection and, if so, the span that
// shows it: the full analysis. A value with '+' and no blank may be
// form-encoded where the caller did not form-decode it (cookie values,
// which PHP decodes with '+' as a space): it is analysed a second time with
// '+' read as a space. Callers on a hot path ask MayMatch first: when it
// reports false, Detect finds nothing.
func (s *Scanner) Detect(b []byte) (start, end int, ok bool) {
	if st, e, ok := s.detectOnce(b); ok {
		return st, e, true
	}
	if len(b) > maxPlusCopy || indexByte(b, '+') < 0 || indexByte(b, ' ') >= 0 {
		return 0, 0, false
	}
	var buf [maxPlusCopy]byte
	c := buf[:len(b)]
	for i, x := range b {
		if x == '+' {
			x = ' '
		}
		c[i] = x
	}
	return s.detectOnce(c)
}

// MayMatch reports whether some pattern could fire on b or on b with '+'
// read as a space. When it reports false, Detect finds nothing in
// either, so benign text costs one pass over its bytes and, for most words,
// one table lookup (startLens).
//
// It is exact, not a heuristic: every match starts from one of these tokens
// (see check) — a quote-break (checkBreak, scanned only after a ' or " in
// b); a logic word or a keyword for which kwStartsPattern holds
// (checkLogic, checkKeyword; ';' fires only before such a keyword); "||" or
// "&&"; a variable starting "@@"; an identifier naming a strong function or
// a catalogue (strongFunc, schemaWord). Quotes, "||", "&&" and "@@" are
// looked for as bytes. An identifier token is the whole run of isIdent
// bytes from its first byte, an isIdentStart byte, and MayMatch looks up
// every such run that does not continue an earlier one from an isIdentStart
// byte. That covers every identifier token of every scan: a scan starts at
// 0, after a quote or at a token start of its previous window, and a token
// that holds the first byte of such a run holds all of it (identifiers,
// numbers and variables run on through isIdent bytes; strings and comments
// end on a quote, "*/", a newline or digits of "/*!50000"; every other
// token is punctuation outside the run). Reading '+' as a space changes
// none of this: neither byte is an isIdent byte, a quote, '|', '&' or '@'.
func MayMatch(b []byte) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		k := byteClass[c]
		switch {
		case k&scIdentStart != 0:
			e := i + 1
			for e < len(b) && byteClass[b[e]]&scIdent != 0 {
				e++
			}
			if wordStarts(b[i:e]) {
				return true
			}
			i = e - 1
		case k&scQuote != 0:
			return true
		case k&scPair != 0:
			if i+1 < len(b) && b[i+1] == c {
				return true
			}
		}
	}
	return false
}

// Byte classes of MayMatch.
const (
	scIdentStart = 1 << iota // isIdentStart
	scIdent                  // isIdent
	scQuote                  // ' "
	scPair                   // | & @, which matter doubled
)

var byteClass = func() (t [256]byte) {
	for c := range 256 {
		b := byte(c)
		if isIdentStart(b) {
			t[c] |= scIdentStart
		}
		if isIdent(b) {
			t[c] |= scIdent
		}
		switch b {
		case '\'', '"':
			t[c] |= scQuote
		case '|', '&', '@':
			t[c] |= scPair
		}
	}
	return t
}()

// startLens[foldClass[c0]][foldClass[c1]] has bit min(n, 63) set when
// some identifier of n bytes starting with c0 c1 (c1 read as 0 when n is 1)
// can start a pattern (wordStarts); it rules out most words before they
// are lower-cased and looked up.
var startLens = func() (t [32][32]uint64) {
	all := ^uint64(0)
	for _, e := range words {
		if e.flags&swStarts != 0 {
			*startCell(&t, []byte(e.w)) |= 1 << len(e.w)
		}
		if e.flags&swStrong != 0 && len(e.w) == 48 {
			*startCell(&t, []byte(e.w)) |= all << 49
		}
	}
	for _, p := range schemaPrefixes {
		*startCell(&t, []byte(p)) |= all << len(p)
	}
	return t
}()

// startLen reports whether startLens lets the non-empty word w
// through.
func startLen(w []byte) bool {
	return *startCell(&startLens, w)&(1<<min(len(w), 63)) != 0
}

// startCell returns the cell of startLens for the non-empty word w.
func startCell(t *[32][32]uint64, w []byte) *uint64 {
	c1 := byte(0)
	if len(w) > 1 {
		c1 = foldClass[w[1]]
	}
	return &t[foldClass[w[0]]][c1]
}

// foldClass maps identifier bytes to 1..30 for startLens, folding
// case; other bytes map to 31.
var foldClass = func() (t [256]byte) {
	for c := range 256 {
		b := lower(byte(c))
		switch {
		case 'a' <= b && b <= 'z':
			t[c] = b - 'a' + 1
		case b == '_':
			t[c] = 27
		case b == '.':
			t[c] = 28
		case b == '$':
			t[c] = 29
		case '0' <= b && b <= '9':
			t[c] = 30
		default:
			t[c] = 31
		}
	}
	return t
}()

// wordStarts reports whether the identifier w (a whole run of isIdent
// bytes) can start a pattern: what check sees of it is its first 48 bytes
// lower-cased, looked up as a keyword only when it has at most 48 bytes
// (tokenize), by schemaWord and strongFunc whatever its length
// (matcher.word).
func wordStarts(w []byte) bool {
	if !startLen(w) {
		return false
	}
	var buf [48]byte
	m := min(len(w), len(buf))
	for k := range m {
		buf[k] = lower(w[k])
	}
	word := buf[:m]
	if schemaWord(word) {
		return true
	}
	e := lookupWord(word)
	if len(w) > len(buf) {
		return e.flags&swStrong != 0
	}
	return e.flags&swStarts != 0
}

// detectOnce analyses b as it is, then as if it continued a string
// literal the application opened (after its first ' and after its first ").
func (s *Scanner) detectOnce(b []byte) (int, int, bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	if st, e, ok := s.scan(b, 0, false); ok {
		return st, e, true
	}
	for _, q := range [...]byte{'\'', '"'} {
		if i := indexByte(b, q); i >= 0 && sqlBreakTail(b[i+1:]) {
			if st, e, ok := s.scan(b, i+1, true); ok {
				if st > i {
					st = i
				}
				return st, e, true
			}
		}
	}
	return 0, 0, false
}

// scan tokenizes b[off:] in windows of maxTokens and checks the patterns.
// brk means the text starts right after a quote that closed an
// application string literal.
func (s *Scanner) scan(b []byte, off int, brk bool) (int, int, bool) {
	if cap(s.toks) < maxTokens {
		s.toks = make([]token, 0, maxTokens)
	}
	first := true
	for off < len(b) {
		toks, n := tokenize(b[off:], s.toks[:0])
		m := matcher{b: b[off:], t: toks}
		if brk && first {
			m.quote = b[off-1]
		}
		if st, e, ok := m.check(brk && first); ok {
			return off + st, off + e, true
		}
		if off+n >= len(b) || len(toks) < 32 {
			return 0, 0, false
		}
		// Continue with an overlap of 16 tokens.
		off += toks[len(toks)-16].start
		first = false
	}
	return 0, 0, false
}

type matcher struct {
	b     []byte
	quote byte // the quote a breakout scan starts after, or 0
	t     []token
	w     [48]byte
}

// word returns the lower-cased text of token i (truncated to 48 bytes).
func (m *matcher) word(i int) []byte {
	tk := m.t[i]
	n := 0
	for k := tk.start; k < tk.end && n < len(m.w); k++ {
		m.w[n] = lower(m.b[k])
		n++
	}
	return m.w[:n]
}

// nx returns the index of the next non-comment token after i.
func (m *matcher) nx(i int) int {
	for i++; i < len(m.t) && m.t[i].kind == tkCmt; i++ {
	}
	return i
}

func (m *matcher) pv(i int) int {
	for i--; i >= 0 && m.t[i].kind == tkCmt; i-- {
	}
	return i
}

func (m *matcher) is(i int, kind byte) bool { return i >= 0 && i < len(m.t) && m.t[i].kind == kind }

func (m *matcher) key(i int, kw byte) bool {
	return i >= 0 && i < len(m.t) && m.t[i].kind == tkKey && m.t[i].kw == kw
}

func (m *matcher) opText(i int, s string) bool {
	return m.is(i, tkOp) && string(m.b[m.t[i].start:m.t[i].end]) == s
}

func (m *matcher) span(i, j int) (int, int, bool) {
	if j >= len(m.t) {
		j = len(m.t) - 1
	}
	if j < i {
		j = i
	}
	return m.t[i].start, m.t[j].end, true
}

// matchParen returns the index of the ')' closing the '(' at i, or len.
func (m *matcher) matchParen(i int) int {
	d := 0
	for j := i; j < len(m.t); j++ {
		switch m.t[j].kind {
		case tkLParen:
			d++
		case tkRParen:
			d--
			if d == 0 {
				return j
			}
		}
	}
	return len(m.t) - 1
}

func (m *matcher) comparison(i int) bool {
	if m.key(i, kwCompare) {
		return true
	}
	if !m.is(i, tkOp) {
		return false
	}
	switch string(m.b[m.t[i].start:m.t[i].end]) {
	case "=", "<", ">", "<=", ">=", "!=", "<>", "<=>", "==", "!<", "!>":
		return true
	}
	return false
}

func (m *matcher) check(brk bool) (int, int, bool) {
	t := m.t
	if len(t) == 0 {
		return 0, 0, false
	}
	if brk {
		if !m.breakStarts() {
			return 0, 0, false
		}
		if s, e, ok := m.checkBreak(); ok {
			return s, e, ok
		}
	}
	reach := m.reach()
	for i := 0; i < len(t); i++ {
		if i == reach {
			// The query fails before this token: what follows is read as
			// a value of its own, not as the continuation of a breakout.
			brk = false
		}
		switch t[i].kind {
		case tkKey:
			if s, e, ok := m.checkKeyword(i, brk); ok {
				return s, e, ok
			}
		case tkLogic:
			if s, e, ok := m.checkLogic(i, brk, i < reach); ok {
				return s, e, ok
			}
		case tkSemi:
			j := m.nx(i)
			if j < len(t) && t[j].kind == tkKey {
				switch t[j].kw {
				case kwStmt, kwSelect, kwWaitfor, kwSet, kwUnion:
					return m.span(i, j)
				}
			}
			if m.is(j, tkWord) && string(m.word(j)) == "shutdown" {
				return m.span(i, j)
			}
		case tkFunc:
			w := m.word(i)
			if strongFunc(w) {
				return m.span(i, m.nx(i))
			}
			if schemaWord(w) {
				return m.span(i, i)
			}
		case tkVar:
			if m.sysVar(i) && (knownSysVar(m.word(i)[2:]) || m.sqlNeighbour(i)) {
				return m.span(i, i)
			}
		case tkWord:
			w := m.word(i)
			if schemaWord(w) && (string(w) != "dual" || m.key(m.pv(i), kwFrom)) {
				return m.span(i, i)
			}
		}
	}
	return 0, 0, false
}

// checkBreak looks at the tokens right after the quote.
func (m *matcher) checkBreak() (int, int, bool) {
	t := m.t
	if t[0].kind == tkCmt {
		return m.span(0, 0)
	}
	i := 0
	for i < len(t) && (t[i].kind == tkRParen || t[i].kind == tkCmt) {
		i++
	}
	if i >= len(t) {
		return 0, 0, false
	}
	j := m.nx(i)
	switch t[i].kind {
	case tkLogic:
		if j < len(t) {
			return m.span(i, j)
		}
	case tkSemi:
		// A statement after the breakout ("'; exec", "'; select @x");
		// prose after a quoted word goes on with a word ("\"; then").
		if j < len(t) && (t[j].kind == tkKey || t[j].kind == tkVar || t[j].kind == tkFunc && dangerousFunc(m.word(j))) {
			return m.span(i, j)
		}
	case tkKey:
		if e := t[i].end; e < len(m.b) && (m.b[e] == '\'' || m.b[e] == '"') {
			// "'Replace' the": a quoted word, not a clause.
			return 0, 0, false
		}
		switch t[i].kw {
		case kwStmt:
			// After a double quote a statement needs its grammar ("\" drop
			// table", "\" insert into"): "\"update wife" is a quoted
			// phrase, which prose writes in double quotes.
			if m.quote == '"' {
				return m.checkKeyword(i, true)
			}
			if j < len(t) {
				return m.span(i, j)
			}
		case kwCompare:
			// "' like 'a", "' in (", "'glob 1": the operator needs its
			// right operand.
			if string(m.word(i)) == "in" {
				if m.is(j, tkLParen) {
					return m.span(i, j)
				}
				return 0, 0, false
			}
			if m.operand(j) >= 0 || m.key(j, kwNot) || m.opText(j, "-") {
				return m.span(i, j)
			}
		case kwUnion, kwSelect, kwOrderGroup, kwHaving, kwInto, kwWaitfor, kwLimit, kwProcedure, kwWhere:
			if j < len(t) || t[i].kw == kwUnion {
				return m.span(i, j)
			}
		case kwNot:
			if m.is(j, tkLogic) || m.is(j, tkNumber) || m.is(j, tkLParen) || m.key(j, kwCompare) {
				return m.span(i, j)
			}
		}
	case tkOp:
		if j < len(t) && (m.comparison(i) || m.opText(i, "+") || m.opText(i, "|")) {
			switch t[j].kind {
			case tkString, tkNumber, tkFunc, tkVar, tkLParen:
				return m.span(i, j)
			case tkWord:
				// "x'+email--": an operand closed by a comment.
				if k := j + 1; k < len(t) && t[k].kind == tkCmt {
					return m.span(i, k)
				}
			}
		}
	}
	return 0, 0, false
}

// kwStartsPattern reports whether checkKeyword has a case for keyword class
// kw; MayMatch relies on it.
func kwStartsPattern(kw byte) bool {
	switch kw {
	case kwUnion, kwSelect, kwStmt, kwWaitfor, kwSet, kwInto, kwOrderGroup, kwHaving, kwCase:
		return true
	}
	return false
}

func (m *matcher) checkKeyword(i int, brk bool) (int, int, bool) {
	t := m.t
	j := m.nx(i)
	switch t[i].kw {
	case kwUnion:
		for m.key(j, kwAllDistinct) || m.is(j, tkLParen) {
			j = m.nx(j)
		}
		if m.key(j, kwSelect) || m.is(j, tkVar) && m.sysVar(j) {
			return m.span(i, j)
		}
	case kwSelect:
		if j >= len(t) {
			return 0, 0, false
		}
		switch t[j].kind {
		case tkNumber, tkVar, tkFunc, tkString, tkLParen:
			return m.span(i, j)
		case tkOp:
			if m.opText(j, "*") {
				return m.span(i, j)
			}
		case tkKey:
			switch t[j].kw {
			case kwAllDistinct, kwLiteral, kwCase, kwTable:
				return m.span(i, j)
			}
		case tkWord:
			// "select a, b" is a select list only where a query can go on:
			// after '(', ';', an operator or a logic word, not in prose
			// ("please select size, colour").
			k := m.nx(j)
			p := m.pv(i)
			if m.key(k, kwFrom) || m.key(k, kwInto) || m.is(k, tkComma) && (m.is(p, tkLParen) || m.is(p, tkSemi) || m.is(p, tkOp) || m.is(p, tkLogic)) {
				return m.span(i, k)
			}
		}
	case kwStmt:
		w := m.word(i)
		switch string(w) {
		case "drop", "create", "alter", "truncate", "rename":
			if m.key(j, kwTable) {
				return m.span(i, j)
			}
		case "insert", "replace":
			if m.key(j, kwInto) {
				return m.span(i, j)
			}
		case "delete":
			if m.key(j, kwFrom) {
				return m.span(i, j)
			}
		case "update":
			if m.is(j, tkWord) && m.key(m.nx(j), kwSet) {
				return m.span(i, m.nx(j))
			}
		case "exec", "execute":
			if j < len(t) && (t[j].kind == tkWord || t[j].kind == tkFunc) {
				jw := m.word(j)
				if len(jw) > 3 && (string(jw[:3]) == "xp_" || string(jw[:3]) == "sp_" || (len(jw) > 7 && string(jw[:7]) == "master.")) {
					return m.span(i, j)
				}
			}
			if m.is(j, tkLParen) || m.is(j, tkVar) {
				return m.span(i, j)
			}
		case "declare":
			if m.is(j, tkVar) {
				return m.span(i, j)
			}
		}
	case kwWaitfor:
		if m.is(j, tkWord) {
			w := m.word(j)
			if string(w) == "delay" || string(w) == "time" {
				return m.span(i, j)
			}
		}
	case kwSet:
		// "SET @x=": assignment to a user or system variable.
		if m.is(j, tkVar) && t[j].end-t[j].start > 1 {
			return m.span(i, j)
		}
	case kwInto:
		if m.key(j, kwOutfile) {
			return m.span(i, j)
		}
	case kwOrderGroup:
		if m.key(j, kwBy) {
			k := m.nx(j)
			if m.is(k, tkNumber) || (m.is(k, tkFunc) && dangerousFunc(m.word(k))) {
				e := m.nx(k)
				p := m.pv(i)
				if brk || p < 0 || m.is(p, tkNumber) || m.is(p, tkString) || m.is(p, tkRParen) || e >= len(t) || m.is(e, tkCmt) || m.is(e, tkComma) {
					return m.span(i, k)
				}
			}
		}
	case kwHaving:
		k := m.nx(j)
		if j < len(t) && (t[j].kind == tkNumber || t[j].kind == tkString || t[j].kind == tkWord) && m.comparison(k) {
			return m.span(i, k)
		}
	case kwCase:
		if m.key(j, kwWhen) {
			return m.span(i, j)
		}
	}
	return 0, 0, false
}

// operand skips one operand starting at i and returns the index of its last
// token, or -1 when t[i] is no operand.
func (m *matcher) operand(i int) int {
	if i >= len(m.t) {
		return -1
	}
	switch m.t[i].kind {
	case tkNumber, tkString, tkWord, tkVar:
		return i
	case tkKey:
		if m.t[i].kw == kwLiteral {
			return i
		}
	case tkFunc:
		j := m.nx(i)
		if m.is(j, tkLParen) {
			return m.matchParen(j)
		}
		return i
	case tkLParen:
		return m.matchParen(i)
	}
	return -1
}

// checkLogic looks for "<logic> [not] operand cmp operand", "<logic>
// dangerous-function(...)", "<logic> (select ...)" and "<logic> 1--".
//
// near reports that the query parses up to i (reach): only then does a
// number, string or ')' before the operator, or the value's start, make
// "<logic> 1" a condition appended to the query.
func (m *matcher) checkLogic(i int, brk, near bool) (int, int, bool) {
	t := m.t
	j := m.nx(i)
	for m.key(j, kwNot) || m.opText(j, "!") || m.opText(j, "-") || m.opText(j, "~") {
		j = m.nx(j)
	}
	p := m.pv(i)
	if j >= len(t) {
		// "1='1' or--": a comparison, then a logic operator cut off by a
		// comment.
		if i+1 < len(t) && t[i+1].kind == tkCmt && (m.is(p, tkString) || m.is(p, tkNumber)) && m.comparison(m.pv(p)) {
			return m.span(m.pv(p), i+1)
		}
		return 0, 0, false
	}
	ctx := near && (brk || p < 0 || m.is(p, tkNumber) || m.is(p, tkString) || m.is(p, tkRParen))
	switch t[j].kind {
	case tkFunc:
		if dangerousFunc(m.word(j)) {
			return m.span(i, j)
		}
	case tkLParen:
		k := m.nx(j)
		for m.is(k, tkLParen) {
			k = m.nx(k)
		}
		if m.key(k, kwSelect) {
			return m.span(i, k)
		}
		if m.is(k, tkFunc) && dangerousFunc(m.word(k)) {
			return m.span(i, k)
		}
	case tkKey:
		if t[j].kw == kwSelect || t[j].kw == kwCase {
			if ctx {
				return m.span(i, j)
			}
		}
	}
	a := m.operand(j)
	if a < 0 {
		return 0, 0, false
	}
	k := m.nx(a)
	if brk && t[j].kind == tkLParen && (k >= len(t) || t[k].kind == tkCmt) {
		// "' or(id glob 1)--": a parenthesised condition closed by a comment.
		return m.span(i, a)
	}
	if k >= len(t) || t[k].kind == tkCmt || t[k].kind == tkSemi {
		// "<logic> 1" at the end of the value or before a comment.
		if ctx && (t[j].kind == tkNumber || t[j].kind == tkKey || t[j].kind == tkVar || (t[j].kind == tkString && brk)) {
			if k < len(t) || m.pv(i) >= 0 || brk {
				return m.span(i, a)
			}
		}
		return 0, 0, false
	}
	if !m.comparison(k) {
		if m.is(k, tkLogic) && ctx && t[j].kind == tkNumber {
			return m.span(i, k)
		}
		return 0, 0, false
	}
	l := m.nx(k)
	for m.key(l, kwNot) || m.opText(l, "-") {
		l = m.nx(l)
	}
	if l >= len(t) {
		return 0, 0, false
	}
	if m.key(l, kwSelect) {
		return m.span(i, l)
	}
	b := m.operand(l)
	if b < 0 {
		return 0, 0, false
	}
	if t[j].kind == tkWord && t[l].kind == tkWord && !ctx {
		// Prose such as "rock and roll = fun": only an identity counts.
		if string(m.b[t[j].start:t[j].end]) != string(m.b[t[l].start:t[l].end]) {
			return 0, 0, false
		}
	}
	if !brk && t[j].kind == tkWord && m.fieldComparison(p) {
		// "price >= 100 and price <= 200": a filter over named fields, not
		// a condition appended to a value.
		return 0, 0, false
	}
	return m.span(i, b)
}

// fieldComparison reports whether token p is the right operand of a
// comparison whose left operand is an identifier ("price >= 100").
func (m *matcher) fieldComparison(p int) bool {
	if !m.is(p, tkNumber) && !m.is(p, tkString) {
		return false
	}
	q := m.pv(p)
	return m.comparison(q) && m.is(m.pv(q), tkWord)
}

// breakStarts reports whether the first token after the quote can follow a
// closed string literal in an expression: an operator, a logic word, a
// keyword, a parenthesis, a comma, a ';', a comment or a function call. A
// word or a number right after the literal ("O'Connell Street", "5'11")
// is a syntax error, so the quote is an apostrophe, not a breakout.
func (m *matcher) breakStarts() bool {
	switch m.t[0].kind {
	case tkWord, tkNumber:
		return false
	}
	return true
}

// reach returns the index of the first token a query holding the value
// cannot reach: the second of two operands side by side (word, number or
// string: "6589 O'Connell", "Street, Portland Or"), where it fails to
// parse.
func (m *matcher) reach() int {
	for i := 1; i < len(m.t); i++ {
		if operandKind(m.t[i-1].kind) && operandKind(m.t[i].kind) {
			return i
		}
	}
	return len(m.t)
}

func operandKind(k byte) bool { return k == tkWord || k == tkNumber || k == tkString }

// sysVar reports whether token i is a system variable ("@@version").
func (m *matcher) sysVar(i int) bool {
	tk := m.t[i]
	return tk.end-tk.start > 3 && m.b[tk.start+1] == '@'
}

// sqlNeighbour reports whether token i stands next to SQL syntax — an
// operator, a parenthesis, a comma, a ';', a keyword or a logic word — as a
// system variable read by a query does ("select @@x", "1=@@x", "(@@x)"),
// unlike a password or handle that starts with "@@".
func (m *matcher) sqlNeighbour(i int) bool {
	for _, j := range [2]int{m.pv(i), m.nx(i)} {
		if j < 0 || j >= len(m.t) {
			continue
		}
		switch m.t[j].kind {
		case tkOp, tkLParen, tkRParen, tkComma, tkSemi, tkKey, tkLogic:
			return true
		}
	}
	return false
}

// knownSysVar reports whether w (lower case, without "@@") names a system
// variable of MySQL or MSSQL that injections read, or starts with a scope
// prefix ("global.", "session.").
func knownSysVar(w []byte) bool {
	for _, p := range [...]string{"global.", "session.", "local.", "version", "character_set", "collation", "innodb", "log_", "have_", "secure_file", "sql_"} {
		if len(w) >= len(p) && string(w[:len(p)]) == p {
			return true
		}
	}
	switch string(w) {
	case "datadir", "basedir", "hostname", "port", "tmpdir", "plugin_dir", "servername", "servicename", "spid",
		"language", "identity", "rowcount", "error", "trancount", "microsoftversion", "max_allowed_packet",
		"autocommit", "general_log", "general_log_file", "slow_query_log", "server_id", "lc_time_names",
		"pid_file", "socket", "license", "time_zone", "system_time_zone", "warning_count", "error_count":
		return true
	}
	return false
}
