package sqli

// OpenCall reports whether b ends with a SQL function name and an opening
// parenthesis, with at most maxOpenCallSep punctuation bytes (and any
// blanks) between them, and if so their span — an injection cut off right
// after the call ("CAST(", "minute&&(", "left')?$("), used to probe which
// functions the database accepts. It looks only at the end of b, so its
// cost does not depend on b's length.
func OpenCall(b []byte) (start, end int, ok bool) {
	e := len(b)
	for e > 0 && isSpace(b[e-1]) {
		e--
	}
	if e == 0 || b[e-1] != '(' {
		return 0, 0, false
	}
	i := e - 1
	for sep := 0; i > 0; i-- {
		c := b[i-1]
		if isSpace(c) {
			continue
		}
		if isWordByte(c) || c == '(' || sep == maxOpenCallSep {
			break
		}
		sep++
	}
	we := i
	for i > 0 && isWordByte(b[i-1]) && we-i <= 24 {
		i--
	}
	if we-i < 2 || we-i > 24 {
		return 0, 0, false
	}
	var w [24]byte
	for k := i; k < we; k++ {
		w[k-i] = lower(b[k])
	}
	if !openCallFunc(w[:we-i]) {
		return 0, 0, false
	}
	return i, e, true
}

// maxOpenCallSep bounds the punctuation between the name and '('.
const maxOpenCallSep = 6

func isWordByte(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// openCallFunc reports SQL function names (MySQL, PostgreSQL, MSSQL,
// Oracle, SQLite) whose bare call is a common injection probe.
func openCallFunc(w []byte) bool {
	switch string(w) {
	case "if", "iif", "format", "elt", "cast", "convert", "char", "nchar", "chr", "count", "date", "concat",
		"concat_ws", "coalesce", "substr", "substring", "mid", "ascii", "ord", "hex", "unhex", "md5", "sha1",
		"sha2", "pow", "power", "rand", "rtrim", "ltrim", "trim", "sin", "cos", "sign", "strcmp", "sysdate",
		"now", "database", "user", "current_user", "version", "sleep", "benchmark", "xmltype", "load_file",
		"group_concat", "json_extract", "ifnull", "nullif", "isnull", "length", "lower", "upper", "replace",
		"reverse", "instr", "locate", "floor", "ceil", "round", "abs", "exp", "log", "ln", "sqrt", "greatest",
		"least", "field", "find_in_set", "make_set", "export_set", "uuid", "schema", "row_count", "time",
		"timestamp", "curdate", "curtime", "year", "quarter", "month", "monthname", "week", "weekday", "day",
		"dayname", "hour", "minute", "second", "left", "right", "values", "password", "old_password", "crc32",
		"compress", "uncompress", "aes_encrypt", "aes_decrypt", "get_lock", "pg_sleep", "extractvalue",
		"updatexml", "db_name", "user_name", "system_user", "session_user", "last_insert_id":
		return true
	}
	return false
}
