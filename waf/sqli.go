package waf

// SQL injection analyser: a small SQL tokenizer plus token-sequence patterns
// (a UNION/SELECT, a boolean tautology after a logic operator, a query
// stacked after ';', a call to a time-delay or file function, a quote that
// breaks out of a string followed by SQL). The value is analysed as-is and
// as if it continued a string literal opened by the application (after its
// first ' and after its first "), like libinjection's contexts.

const maxSQLTokens = 256

type sqlTok struct {
	kind  byte // see below
	kw    byte // keyword class for kind 'k'
	start int
	end   int
}

// Token kinds.
const (
	tkString = 's'
	tkNumber = 'n'
	tkWord   = 'b' // identifier that is no keyword
	tkFunc   = 'f' // identifier followed by '('
	tkVar    = 'v'
	tkOp     = 'o'
	tkLogic  = '&' // and or xor && ||
	tkKey    = 'k'
	tkLParen = '('
	tkRParen = ')'
	tkComma  = ','
	tkSemi   = ';'
	tkCmt    = 'c'
	tkOther  = 'x'
)

// Keyword classes.
const (
	kwNone byte = iota
	kwUnion
	kwSelect
	kwFrom
	kwStmt    // insert update delete drop create alter exec declare shutdown truncate grant
	kwCompare // like rlike regexp is in between sounds div mod
	kwNot
	kwOrderGroup
	kwBy
	kwHaving
	kwInto
	kwWaitfor
	kwLiteral // null true false
	kwCase
	kwWhen
	kwLimit
	kwAllDistinct
	kwWhere
	kwTable
	kwSet
	kwValues
	kwOutfile
	kwProcedure
)

func sqlKeyword(w []byte) (byte, bool) {
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

// dangerousFunc reports SQL functions that have little use outside attacks:
// delays, file access, error-based extraction, OS command execution.
func dangerousFunc(w []byte) bool {
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

// strongFunc is the subset of dangerousFunc that alone indicates an attack.
func strongFunc(w []byte) bool {
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

// schemaWord reports identifiers naming database catalogues.
func schemaWord(w []byte) bool {
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

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdent(c byte) bool {
	return isIdentStart(c) || ('0' <= c && c <= '9') || c == '.'
}

// sqlTokenize appends up to cap(toks) tokens of b and returns them and the
// offset where tokenizing stopped.
func sqlTokenize(b []byte, toks []sqlTok) ([]sqlTok, int) {
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
				toks = append(toks, sqlTok{kind: tkCmt, start: start, end: i})
				continue
			}
			e := indexPair(b, i+2, '*', '/')
			if e < 0 {
				i = len(b)
			} else {
				i = e + 2
			}
			toks = append(toks, sqlTok{kind: tkCmt, start: start, end: i})
			continue
		case c == '*' && i+1 < len(b) && b[i+1] == '/':
			i += 2
			toks = append(toks, sqlTok{kind: tkCmt, start: start, end: i})
			continue
		case (c == '-' && i+1 < len(b) && b[i+1] == '-') || c == '#':
			e := indexByteFrom(b, i, '\n')
			if e < 0 {
				e = len(b)
			}
			i = e
			toks = append(toks, sqlTok{kind: tkCmt, start: start, end: i})
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
			toks = append(toks, sqlTok{kind: k, start: start, end: i})
			continue
		case '0' <= c && c <= '9' || (c == '.' && i+1 < len(b) && '0' <= b[i+1] && b[i+1] <= '9'):
			i++
			for i < len(b) && (isIdent(b[i]) || ((b[i] == '-' || b[i] == '+') && (lower(b[i-1]) == 'e'))) {
				i++
			}
			toks = append(toks, sqlTok{kind: tkNumber, start: start, end: i})
			continue
		case c == '@':
			i++
			for i < len(b) && (isIdent(b[i]) || b[i] == '@') {
				i++
			}
			toks = append(toks, sqlTok{kind: tkVar, start: start, end: i})
			continue
		case isIdentStart(c):
			for i < len(b) && isIdent(b[i]) {
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
			kw, logic := sqlKeyword(word)
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
			toks = append(toks, sqlTok{kind: kind, kw: kw, start: start, end: i})
			continue
		case c == '(':
			i++
			toks = append(toks, sqlTok{kind: tkLParen, start: start, end: i})
			continue
		case c == ')':
			i++
			toks = append(toks, sqlTok{kind: tkRParen, start: start, end: i})
			continue
		case c == ',':
			i++
			toks = append(toks, sqlTok{kind: tkComma, start: start, end: i})
			continue
		case c == ';':
			i++
			toks = append(toks, sqlTok{kind: tkSemi, start: start, end: i})
			continue
		case c == '|' && i+1 < len(b) && b[i+1] == '|', c == '&' && i+1 < len(b) && b[i+1] == '&':
			i += 2
			toks = append(toks, sqlTok{kind: tkLogic, start: start, end: i})
			continue
		case c == '=' || c == '<' || c == '>' || c == '!' || c == '|' || c == '&' || c == '+' || c == '-' || c == '*' || c == '/' || c == '%' || c == '^' || c == '~' || c == ':':
			i++
			for i < len(b) && i-start < 3 && (b[i] == '=' || b[i] == '<' || b[i] == '>') {
				i++
			}
			toks = append(toks, sqlTok{kind: tkOp, start: start, end: i})
			continue
		default:
			i++
			toks = append(toks, sqlTok{kind: tkOther, start: start, end: i})
		}
	}
	return toks, i
}
