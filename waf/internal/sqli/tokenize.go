package sqli

import (
	"encoding/binary"
	"strings"
)

// The tokenizer: SQL keywords and functions by class (one open-addressing
// table, words), and tokenize, which splits a value into tokens in place.

// maxTokens is the window of tokens the patterns see at once (scan).
const maxTokens = 256

type token struct {
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

// keywords lists the keywords by class. "and", "or" and "xor" are logic
// operators (class kwNone).
var keywords = [...]struct {
	kw    byte
	words string
}{
	{kwNone, "and or xor"},
	{kwUnion, "union"},
	{kwSelect, "select"},
	{kwFrom, "from"},
	{kwStmt, "insert update delete drop create alter exec execute declare shutdown truncate grant replace rename call load handler"},
	{kwCompare, "like rlike regexp is in between sounds div mod ilike glob match similar"},
	{kwNot, "not"},
	{kwOrderGroup, "order group"},
	{kwBy, "by"},
	{kwHaving, "having"},
	{kwInto, "into"},
	{kwWaitfor, "waitfor"},
	{kwLiteral, "null true false"},
	{kwCase, "case"},
	{kwWhen, "when"},
	{kwLimit, "limit offset"},
	{kwAllDistinct, "all distinct top"},
	{kwWhere, "where"},
	{kwTable, "table database procedure function schema view trigger user"},
	{kwSet, "set"},
	{kwValues, "values"},
	{kwOutfile, "outfile dumpfile"},
}

// dangerousFuncs are SQL functions that have little use outside attacks:
// delays, file access, error-based extraction, OS command execution.
const dangerousFuncs = "sleep benchmark pg_sleep load_file extractvalue updatexml xp_cmdshell " +
	"sp_executesql sp_oacreate sp_makewebtask name_const group_concat make_set " +
	"gtid_subset json_keys exp utl_inaddr.get_host_address utl_http.request " +
	"dbms_pipe.receive_message ctxsys.drithsx.sn dbms_xmlgen.getxml xmltype randomblob " +
	"sqlite_version pg_read_file lo_import dblink openrowset opendatasource " +
	"concat_ws char chr nchar ascii substring substr mid hex unhex ord " +
	"version database user current_user system_user session_user schema " +
	"cast convert count if ifnull iif elt floor rand length len " +
	"concat updatexml_ polygon multipoint geometrycollection linestring " +
	"db_name user_name host_name suser_name is_srvrolemember has_dbaccess @@version " +
	"row_count found_rows last_insert_id connection_id uuid md5 sha1 encode decode " +
	"to_char generate_series current_database quote_ident pg_user sysdate getdate " +
	"waitfor instr locate position lpad rpad reverse soundex unicode bin oct"

// strongFuncs is the subset of dangerousFuncs that alone indicates an attack.
const strongFuncs = "sleep benchmark pg_sleep load_file extractvalue updatexml xp_cmdshell " +
	"sp_executesql sp_oacreate sp_makewebtask name_const make_set gtid_subset " +
	"utl_inaddr.get_host_address utl_http.request dbms_pipe.receive_message ctxsys.drithsx.sn " +
	"dbms_xmlgen.getxml pg_read_file lo_import randomblob openrowset opendatasource " +
	"group_concat is_srvrolemember has_dbaccess sqlite_version"

// wordInfo is what the analyser knows of one lower-case identifier.
type wordInfo struct {
	key   uint64 // wordKey(w)
	w     string
	kw    byte // keyword class
	flags byte
}

// wordInfo flags.
const (
	swLogic     = 1 << iota // and, or, xor
	swDangerous             // in dangerousFuncs
	swStrong                // in strongFuncs
	swStarts                // can start a pattern without a quote: see MayMatch
)

// wordBits sizes the open-addressing table of words (160 words in
// 512 slots).
const wordBits = 9

// words is built once at load time from the lists above.
var words = buildWords()

func buildWords() (t [1 << wordBits]wordInfo) {
	add := func(w string, kw, flags byte) {
		k := wordKey([]byte(w))
		h := wordHash(k)
		for t[h].w != "" && t[h].w != w {
			h = (h + 1) & (1<<wordBits - 1)
		}
		e := &t[h]
		if e.w != "" && kw != kwNone && e.kw != kwNone {
			panic("waf: SQL keyword listed twice: " + w)
		}
		e.key, e.w = k, w
		e.kw |= kw
		e.flags |= flags
		if e.flags&(swLogic|swStrong) != 0 || kwStartsPattern(e.kw) {
			e.flags |= swStarts
		}
	}
	for _, c := range keywords {
		for _, w := range strings.Fields(c.words) {
			var f byte
			if c.kw == kwNone {
				f = swLogic
			}
			add(w, c.kw, f)
		}
	}
	for _, w := range strings.Fields(dangerousFuncs) {
		add(w, kwNone, swDangerous)
	}
	for _, w := range strings.Fields(strongFuncs) {
		add(w, kwNone, swStrong)
	}
	return t
}

// wordKey packs the first 8 bytes of w, little-endian.
func wordKey(w []byte) uint64 {
	if len(w) >= 8 {
		return binary.LittleEndian.Uint64(w)
	}
	var k uint64
	for i := len(w) - 1; i >= 0; i-- {
		k = k<<8 | uint64(w[i])
	}
	return k
}

// wordHash mixes a word's key.
func wordHash(key uint64) uint64 {
	return (key * 0x9e3779b97f4a7c15) >> (64 - wordBits)
}

// lookupWord returns the entry of the lower-case word w, or the zero
// wordInfo. Words of up to 8 bytes compare by key alone.
func lookupWord(w []byte) *wordInfo {
	return lookupWordKey(wordKey(w), w)
}

// lookupWordKey is lookupWord with the word's key computed.
func lookupWordKey(k uint64, w []byte) *wordInfo {
	for h := wordHash(k); ; h = (h + 1) & (1<<wordBits - 1) {
		e := &words[h]
		if e.key == k && len(e.w) == len(w) && (len(w) <= 8 || e.w[8:] == string(w[8:])) {
			return e
		}
		if e.w == "" {
			return &noWord
		}
	}
}

var noWord wordInfo

// keyword returns the keyword class of the lower-case word w and whether
// it is a logic operator.
func keyword(w []byte) (byte, bool) {
	e := lookupWord(w)
	return e.kw, e.flags&swLogic != 0
}

// dangerousFunc reports whether w is in dangerousFuncs.
func dangerousFunc(w []byte) bool { return lookupWord(w).flags&swDangerous != 0 }

// strongFunc reports whether w is in strongFuncs.
func strongFunc(w []byte) bool { return lookupWord(w).flags&swStrong != 0 }

// schemaPrefixes name database catalogues; "dual" counts only as a whole
// word.
var schemaPrefixes = [...]string{"information_schema", "sysobjects", "syscolumns", "sysdatabases", "mysql.user",
	"mysql.db", "pg_catalog", "pg_shadow", "pg_user", "pg_tables", "sqlite_master", "sqlite_schema", "msysobjects",
	"all_tables", "user_tables", "all_users", "sys.tables", "sys.objects", "sys.databases", "sys.sql_logins",
	"master..", "dual", "sys.user$", "dba_users", "v$version", "mssysobjects", "sysusers"}

// schemaByFirst groups schemaPrefixes by their first byte.
var schemaByFirst = func() (t [256][]string) {
	for _, p := range schemaPrefixes {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

// schemaWord reports identifiers naming database catalogues.
func schemaWord(w []byte) bool {
	if len(w) == 0 {
		return false
	}
	for _, p := range schemaByFirst[w[0]] {
		// Every prefix has at least 4 bytes: comparing w[1] first is cheap.
		if len(w) >= len(p) && w[1] == p[1] && string(w[:len(p)]) == p && (p != "dual" || len(w) == 4) {
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

// tokenize appends up to cap(toks) tokens of b and returns them and the
// offset where tokenizing stopped.
func tokenize(b []byte, toks []token) ([]token, int) {
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
				toks = append(toks, token{kind: tkCmt, start: start, end: i})
				continue
			}
			e := indexPair(b, i+2, '*', '/')
			if e < 0 {
				i = len(b)
			} else {
				i = e + 2
			}
			toks = append(toks, token{kind: tkCmt, start: start, end: i})
			continue
		case c == '*' && i+1 < len(b) && b[i+1] == '/':
			i += 2
			toks = append(toks, token{kind: tkCmt, start: start, end: i})
			continue
		case (c == '-' && i+1 < len(b) && b[i+1] == '-') || c == '#':
			e := indexByteFrom(b, i, '\n')
			if e < 0 {
				e = len(b)
			}
			i = e
			toks = append(toks, token{kind: tkCmt, start: start, end: i})
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
			toks = append(toks, token{kind: k, start: start, end: i})
			continue
		case '0' <= c && c <= '9' || (c == '.' && i+1 < len(b) && '0' <= b[i+1] && b[i+1] <= '9'):
			i++
			for i < len(b) && (isIdent(b[i]) || ((b[i] == '-' || b[i] == '+') && (lower(b[i-1]) == 'e'))) {
				i++
			}
			toks = append(toks, token{kind: tkNumber, start: start, end: i})
			continue
		case c == '@':
			i++
			for i < len(b) && (isIdent(b[i]) || b[i] == '@') {
				i++
			}
			toks = append(toks, token{kind: tkVar, start: start, end: i})
			continue
		case isIdentStart(c):
			for i < len(b) && isIdent(b[i]) {
				i++
			}
			var kw byte
			var logic bool
			if i-start <= len(w) {
				// The keyword lookup (keyword) with the key
				// (wordKey) packed while lower-casing.
				var key uint64
				for k := start; k < i; k++ {
					c := lower(b[k])
					w[k-start] = c
					if k-start < 8 {
						key |= uint64(c) << (8 * (k - start))
					}
				}
				e := lookupWordKey(key, w[:i-start])
				kw, logic = e.kw, e.flags&swLogic != 0
			}
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
			toks = append(toks, token{kind: kind, kw: kw, start: start, end: i})
			continue
		case c == '(':
			i++
			toks = append(toks, token{kind: tkLParen, start: start, end: i})
			continue
		case c == ')':
			i++
			toks = append(toks, token{kind: tkRParen, start: start, end: i})
			continue
		case c == ',':
			i++
			toks = append(toks, token{kind: tkComma, start: start, end: i})
			continue
		case c == ';':
			i++
			toks = append(toks, token{kind: tkSemi, start: start, end: i})
			continue
		case c == '|' && i+1 < len(b) && b[i+1] == '|', c == '&' && i+1 < len(b) && b[i+1] == '&':
			i += 2
			toks = append(toks, token{kind: tkLogic, start: start, end: i})
			continue
		case c == '=' || c == '<' || c == '>' || c == '!' || c == '|' || c == '&' || c == '+' || c == '-' || c == '*' || c == '/' || c == '%' || c == '^' || c == '~' || c == ':':
			i++
			for i < len(b) && i-start < 3 && (b[i] == '=' || b[i] == '<' || b[i] == '>') {
				i++
			}
			toks = append(toks, token{kind: tkOp, start: start, end: i})
			continue
		default:
			i++
			toks = append(toks, token{kind: tkOther, start: start, end: i})
		}
	}
	return toks, i
}
