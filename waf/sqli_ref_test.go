package waf

// Reference copy of the SQL analyser as of commit eb5a00e, before the
// benign-text fast path: the oracle of the differential tests. Do not edit: it shares only
// the token-kind and keyword-class constants with the live analyser.
//
// SQL injection analyser: a small SQL tokenizer plus token-sequence patterns
// (a UNION/SELECT, a boolean tautology after a logic operator, a query
// stacked after ';', a call to a time-delay or file function, a quote that
// breaks out of a string followed by SQL). The value is analysed as-is and
// as if it continued a string literal opened by the application (after its
// first ' and after its first "), like libinjection's contexts.

const maxSQLTokensRef = 256

// sqlRefState holds the reference analyser's token buffer.
type sqlRefState struct {
	sqlToks []sqlTokRef
}

type sqlTokRef struct {
	kind  byte // see below
	kw    byte // keyword class for kind 'k'
	start int
	end   int
}

func sqlKeywordRef(w []byte) (byte, bool) {
	switch string(w) {
	case "and", "or", "xor":
		return 0, true
	case "union":
		return kwUnion, false
	case "select":
		return kwSelect, false
	case "from":
		return kwFrom, false
	case "insert", "update", "delete", "drop", "create", "alter", "exec", "execute", "declare", "shutdown", "truncate", "grant", "replace", "rename", "call", "load", "handler":
		return kwStmt, false
	case "like", "rlike", "regexp", "is", "in", "between", "sounds", "div", "mod", "ilike", "glob", "match", "similar":
		return kwCompare, false
	case "not":
		return kwNot, false
	case "order", "group":
		return kwOrderGroup, false
	case "by":
		return kwBy, false
	case "having":
		return kwHaving, false
	case "into":
		return kwInto, false
	case "waitfor":
		return kwWaitfor, false
	case "null", "true", "false":
		return kwLiteral, false
	case "case":
		return kwCase, false
	case "when":
		return kwWhen, false
	case "limit", "offset":
		return kwLimit, false
	case "all", "distinct", "top":
		return kwAllDistinct, false
	case "where":
		return kwWhere, false
	case "table", "database", "procedure", "function", "schema", "view", "trigger", "user":
		return kwTable, false
	case "set":
		return kwSet, false
	case "values":
		return kwValues, false
	case "outfile", "dumpfile":
		return kwOutfile, false
	}
	return kwNone, false
}

// dangerousFuncRef reports SQL functions that have little use outside attacks:
// delays, file access, error-based extraction, OS command execution.
func dangerousFuncRef(w []byte) bool {
	switch string(w) {
	case "sleep", "benchmark", "pg_sleep", "load_file", "extractvalue", "updatexml", "xp_cmdshell",
		"sp_executesql", "sp_oacreate", "sp_makewebtask", "name_const", "group_concat", "make_set",
		"gtid_subset", "json_keys", "exp", "utl_inaddr.get_host_address", "utl_http.request",
		"dbms_pipe.receive_message", "ctxsys.drithsx.sn", "dbms_xmlgen.getxml", "xmltype", "randomblob",
		"sqlite_version", "pg_read_file", "lo_import", "dblink", "openrowset", "opendatasource",
		"concat_ws", "char", "chr", "nchar", "ascii", "substring", "substr", "mid", "hex", "unhex", "ord",
		"version", "database", "user", "current_user", "system_user", "session_user", "schema",
		"cast", "convert", "count", "if", "ifnull", "iif", "elt", "floor", "rand", "length", "len",
		"concat", "updatexml_", "polygon", "multipoint", "geometrycollection", "linestring",
		"db_name", "user_name", "host_name", "suser_name", "is_srvrolemember", "has_dbaccess", "@@version",
		"row_count", "found_rows", "last_insert_id", "connection_id", "uuid", "md5", "sha1", "encode", "decode",
		"to_char", "generate_series", "current_database", "quote_ident", "pg_user", "sysdate", "getdate",
		"waitfor", "instr", "locate", "position", "lpad", "rpad", "reverse", "soundex", "unicode", "bin", "oct":
		return true
	}
	return false
}

// strongFuncRef is the subset of dangerousFuncRef that alone indicates an attack.
func strongFuncRef(w []byte) bool {
	switch string(w) {
	case "sleep", "benchmark", "pg_sleep", "load_file", "extractvalue", "updatexml", "xp_cmdshell",
		"sp_executesql", "sp_oacreate", "sp_makewebtask", "name_const", "make_set", "gtid_subset",
		"utl_inaddr.get_host_address", "utl_http.request", "dbms_pipe.receive_message", "ctxsys.drithsx.sn",
		"dbms_xmlgen.getxml", "pg_read_file", "lo_import", "randomblob", "openrowset", "opendatasource",
		"group_concat", "is_srvrolemember", "has_dbaccess", "sqlite_version":
		return true
	}
	return false
}

// schemaWordRef reports identifiers naming database catalogues.
func schemaWordRef(w []byte) bool {
	for _, p := range [...]string{"information_schema", "sysobjects", "syscolumns", "sysdatabases", "mysql.user",
		"mysql.db", "pg_catalog", "pg_shadow", "pg_user", "pg_tables", "sqlite_master", "sqlite_schema", "msysobjects",
		"all_tables", "user_tables", "all_users", "sys.tables", "sys.objects", "sys.databases", "sys.sql_logins",
		"master..", "dual", "sys.user$", "dba_users", "v$version", "mssysobjects", "sysusers"} {
		if len(w) >= len(p) && string(w[:len(p)]) == p {
			if p == "dual" && len(w) != 4 {
				continue
			}
			return true
		}
	}
	return false
}

func isIdentStartRef(c byte) bool {
	return c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentRef(c byte) bool {
	return isIdentStartRef(c) || ('0' <= c && c <= '9') || c == '.'
}

// sqlTokenizeRef appends up to cap(toks) tokens of b and returns them and the
// offset where tokenizing stopped.
func sqlTokenizeRef(b []byte, toks []sqlTokRef) ([]sqlTokRef, int) {
	i := 0
	var w [48]byte
	for i < len(b) && len(toks) < cap(toks) {
		c := b[i]
		start := i
		switch {
		case isSpace(c) || c == 0 || c == 0xa0:
			i++
			continue
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			if i+2 < len(b) && b[i+2] == '!' {
				i += 3
				for i < len(b) && b[i] >= '0' && b[i] <= '9' {
					i++
				}
				toks = append(toks, sqlTokRef{kind: tkCmt, start: start, end: i})
				continue
			}
			e := indexPair(b, i+2, '*', '/')
			if e < 0 {
				i = len(b)
			} else {
				i = e + 2
			}
			toks = append(toks, sqlTokRef{kind: tkCmt, start: start, end: i})
			continue
		case c == '*' && i+1 < len(b) && b[i+1] == '/':
			i += 2
			toks = append(toks, sqlTokRef{kind: tkCmt, start: start, end: i})
			continue
		case (c == '-' && i+1 < len(b) && b[i+1] == '-') || c == '#':
			e := indexByteFrom(b, i, '\n')
			if e < 0 {
				e = len(b)
			}
			i = e
			toks = append(toks, sqlTokRef{kind: tkCmt, start: start, end: i})
			continue
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(b) {
				if b[j] == '\\' {
					j += 2
					continue
				}
				if b[j] == c {
					if j+1 < len(b) && b[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(b) {
				i = len(b)
			} else {
				i = j + 1
			}
			k := byte(tkString)
			if c == '`' {
				k = tkWord
			}
			toks = append(toks, sqlTokRef{kind: k, start: start, end: i})
			continue
		case '0' <= c && c <= '9' || (c == '.' && i+1 < len(b) && '0' <= b[i+1] && b[i+1] <= '9'):
			i++
			for i < len(b) && (isIdentRef(b[i]) || ((b[i] == '-' || b[i] == '+') && (lower(b[i-1]) == 'e'))) {
				i++
			}
			toks = append(toks, sqlTokRef{kind: tkNumber, start: start, end: i})
			continue
		case c == '@':
			i++
			for i < len(b) && (isIdentRef(b[i]) || b[i] == '@') {
				i++
			}
			toks = append(toks, sqlTokRef{kind: tkVar, start: start, end: i})
			continue
		case isIdentStartRef(c):
			for i < len(b) && isIdentRef(b[i]) {
				i++
			}
			n := 0
			for k := start; k < i && n < len(w); k++ {
				w[n] = lower(b[k])
				n++
			}
			word := w[:n]
			if i-start > len(w) {
				word = w[:0]
			}
			kw, logic := sqlKeywordRef(word)
			kind := byte(tkWord)
			switch {
			case logic:
				kind = tkLogic
			case kw != kwNone:
				kind = tkKey
			}
			// An identifier followed by '(' is a function call.
			j := i
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			// "or(" stays a logic operator: "' or(1=1)--".
			if j < len(b) && b[j] == '(' && kind != tkLogic && (kind == tkWord || kw == kwNone) {
				kind = tkFunc
			}
			toks = append(toks, sqlTokRef{kind: kind, kw: kw, start: start, end: i})
			continue
		case c == '(':
			i++
			toks = append(toks, sqlTokRef{kind: tkLParen, start: start, end: i})
			continue
		case c == ')':
			i++
			toks = append(toks, sqlTokRef{kind: tkRParen, start: start, end: i})
			continue
		case c == ',':
			i++
			toks = append(toks, sqlTokRef{kind: tkComma, start: start, end: i})
			continue
		case c == ';':
			i++
			toks = append(toks, sqlTokRef{kind: tkSemi, start: start, end: i})
			continue
		case c == '|' && i+1 < len(b) && b[i+1] == '|', c == '&' && i+1 < len(b) && b[i+1] == '&':
			i += 2
			toks = append(toks, sqlTokRef{kind: tkLogic, start: start, end: i})
			continue
		case c == '=' || c == '<' || c == '>' || c == '!' || c == '|' || c == '&' || c == '+' || c == '-' || c == '*' || c == '/' || c == '%' || c == '^' || c == '~' || c == ':':
			i++
			for i < len(b) && i-start < 3 && (b[i] == '=' || b[i] == '<' || b[i] == '>') {
				i++
			}
			toks = append(toks, sqlTokRef{kind: tkOp, start: start, end: i})
			continue
		default:
			i++
			toks = append(toks, sqlTokRef{kind: tkOther, start: start, end: i})
		}
	}
	return toks, i
}

// maxPlusCopyRef bounds the values re-read with '+' as a space.
const maxPlusCopyRef = 2048

// detectSQLiRef is the "sqli" detector. A value with '+' and no blank may be
// form-encoded where extraction did not form-decode it (cookie values,
// which PHP decodes with '+' as a space): it is analysed a second time with
// '+' read as a space.
func detectSQLiRef(st *sqlRefState, r *Rule, b []byte) (int, int, bool) {
	if s, e, ok := detectSQLiOnceRef(st, b); ok {
		return s, e, true
	}
	if len(b) > maxPlusCopyRef || indexByte(b, '+') < 0 || indexByte(b, ' ') >= 0 {
		return 0, 0, false
	}
	var buf [maxPlusCopyRef]byte
	c := buf[:len(b)]
	for i, x := range b {
		if x == '+' {
			x = ' '
		}
		c[i] = x
	}
	return detectSQLiOnceRef(st, c)
}

func detectSQLiOnceRef(st *sqlRefState, b []byte) (int, int, bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	if s, e, ok := st.sqlScan(b, 0, false); ok {
		return s, e, true
	}
	for _, q := range [...]byte{'\'', '"'} {
		if i := indexByte(b, q); i >= 0 {
			if s, e, ok := st.sqlScan(b, i+1, true); ok {
				if s > i {
					s = i
				}
				return s, e, true
			}
		}
	}
	return 0, 0, false
}

// sqlScan tokenizes b[off:] in windows of maxSQLTokensRef and checks the
// patterns. brk means the text starts right after a quote that closed an
// application string literal.
func (st *sqlRefState) sqlScan(b []byte, off int, brk bool) (int, int, bool) {
	if cap(st.sqlToks) < maxSQLTokensRef {
		st.sqlToks = make([]sqlTokRef, 0, maxSQLTokensRef)
	}
	first := true
	for off < len(b) {
		toks, n := sqlTokenizeRef(b[off:], st.sqlToks[:0])
		m := sqlMatcherRef{b: b[off:], t: toks}
		if s, e, ok := m.check(brk && first); ok {
			return off + s, off + e, true
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

type sqlMatcherRef struct {
	b []byte
	t []sqlTokRef
	w [48]byte
}

// word returns the lower-cased text of token i (truncated to 48 bytes).
func (m *sqlMatcherRef) word(i int) []byte {
	tk := m.t[i]
	n := 0
	for k := tk.start; k < tk.end && n < len(m.w); k++ {
		m.w[n] = lower(m.b[k])
		n++
	}
	return m.w[:n]
}

// nx returns the index of the next non-comment token after i.
func (m *sqlMatcherRef) nx(i int) int {
	for i++; i < len(m.t) && m.t[i].kind == tkCmt; i++ {
	}
	return i
}

func (m *sqlMatcherRef) pv(i int) int {
	for i--; i >= 0 && m.t[i].kind == tkCmt; i-- {
	}
	return i
}

func (m *sqlMatcherRef) is(i int, kind byte) bool {
	return i >= 0 && i < len(m.t) && m.t[i].kind == kind
}

func (m *sqlMatcherRef) key(i int, kw byte) bool {
	return i >= 0 && i < len(m.t) && m.t[i].kind == tkKey && m.t[i].kw == kw
}

func (m *sqlMatcherRef) opText(i int, s string) bool {
	return m.is(i, tkOp) && string(m.b[m.t[i].start:m.t[i].end]) == s
}

func (m *sqlMatcherRef) span(i, j int) (int, int, bool) {
	if j >= len(m.t) {
		j = len(m.t) - 1
	}
	if j < i {
		j = i
	}
	return m.t[i].start, m.t[j].end, true
}

// matchParen returns the index of the ')' closing the '(' at i, or len.
func (m *sqlMatcherRef) matchParen(i int) int {
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

func (m *sqlMatcherRef) comparison(i int) bool {
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

func (m *sqlMatcherRef) check(brk bool) (int, int, bool) {
	t := m.t
	if len(t) == 0 {
		return 0, 0, false
	}
	if brk {
		if s, e, ok := m.checkBreak(); ok {
			return s, e, ok
		}
	}
	for i := 0; i < len(t); i++ {
		switch t[i].kind {
		case tkKey:
			if s, e, ok := m.checkKeyword(i, brk); ok {
				return s, e, ok
			}
		case tkLogic:
			if s, e, ok := m.checkLogic(i, brk); ok {
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
			if strongFuncRef(w) {
				return m.span(i, m.nx(i))
			}
			if schemaWordRef(w) {
				return m.span(i, i)
			}
		case tkVar:
			w := m.word(i)
			if len(w) > 3 && w[1] == '@' {
				return m.span(i, i)
			}
		case tkWord:
			w := m.word(i)
			if schemaWordRef(w) && (string(w) != "dual" || m.key(m.pv(i), kwFrom)) {
				return m.span(i, i)
			}
		}
	}
	return 0, 0, false
}

// checkBreak looks at the tokens right after the quote.
func (m *sqlMatcherRef) checkBreak() (int, int, bool) {
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
	case tkLogic, tkSemi:
		if j < len(t) {
			return m.span(i, j)
		}
	case tkKey:
		switch t[i].kw {
		case kwUnion, kwSelect, kwOrderGroup, kwHaving, kwInto, kwWaitfor, kwStmt, kwLimit, kwProcedure, kwCompare, kwWhere:
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

func (m *sqlMatcherRef) checkKeyword(i int, brk bool) (int, int, bool) {
	t := m.t
	j := m.nx(i)
	switch t[i].kw {
	case kwUnion:
		for m.key(j, kwAllDistinct) || m.is(j, tkLParen) {
			j = m.nx(j)
		}
		if m.key(j, kwSelect) || m.is(j, tkVar) {
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
			k := m.nx(j)
			if m.is(k, tkComma) || m.key(k, kwFrom) || m.key(k, kwInto) {
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
			if m.is(k, tkNumber) || (m.is(k, tkFunc) && dangerousFuncRef(m.word(k))) {
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
func (m *sqlMatcherRef) operand(i int) int {
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
func (m *sqlMatcherRef) checkLogic(i int, brk bool) (int, int, bool) {
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
	ctx := brk || p < 0 || m.is(p, tkNumber) || m.is(p, tkString) || m.is(p, tkRParen)
	switch t[j].kind {
	case tkFunc:
		if dangerousFuncRef(m.word(j)) {
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
		if m.is(k, tkFunc) && dangerousFuncRef(m.word(k)) {
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
func (m *sqlMatcherRef) fieldComparison(p int) bool {
	if !m.is(p, tkNumber) && !m.is(p, tkString) {
		return false
	}
	q := m.pv(p)
	return m.comparison(q) && m.is(m.pv(q), tkWord)
}
