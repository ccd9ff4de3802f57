package sqli

import "strings"

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
		if c == ':' {
			// "round :-(", "time :(": an emoticon, which SQL has no
			// place for before a call.
			return 0, 0, false
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

// openCallFunc reports SQL function names whose bare call is an injection
// probe: the built-in functions of MySQL, PostgreSQL, MSSQL, Oracle and
// SQLite (string, numeric, date, conversion, JSON, XML, system and
// information functions), by their manuals' function indexes. Some are
// English words too ("left", "point"): the detector needs the value to end
// with the call left open, which prose does not.
func openCallFunc(w []byte) bool {
	_, ok := openCallFuncs[string(w)]
	return ok
}

var openCallFuncs = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, f := range strings.Fields(openCallList) {
		m[f] = struct{}{}
	}
	return m
}()

const openCallList = `
if iif ifnull nullif isnull coalesce nvl nvl2 decode greatest least elt field find_in_set interval
cast convert try_cast try_convert parse try_parse to_char to_number to_date to_timestamp to_clob to_nchar
char nchar chr ascii ord unicode hex unhex bin oct conv base64 to_base64 from_base64 encode
concat concat_ws group_concat string_agg listagg substr substring substring_index mid left right
instr locate position strpos charindex patindex length len char_length character_length octet_length
bit_length lower upper lcase ucase initcap replace translate reverse repeat replicate space lpad rpad
ltrim rtrim trim btrim soundex difference quote quote_ident quote_literal quotename stuff insert export_set
make_set format format_bytes regexp_replace regexp_substr regexp_like regexp_instr split_part strcmp
md5 sha sha1 sha2 crc32 compress uncompress aes_encrypt aes_decrypt des_encrypt des_decrypt encrypt
password old_password random_bytes hashbytes checksum binary_checksum pg_sleep sleep benchmark
abs acos asin atan atan2 ceil ceiling cos cot degrees exp floor ln log log10 log2 mod pi pow power
radians rand random round sign sin sqrt tan truncate trunc
now sysdate curdate curtime current_date current_time current_timestamp localtime localtimestamp
getdate getutcdate sysdatetime utc_date utc_time utc_timestamp unix_timestamp from_unixtime date
time timestamp datetime julianday strftime date_add date_sub adddate subdate addtime subtime datediff
timediff timestampdiff timestampadd dateadd datepart datename date_format time_format str_to_date
extract year quarter month monthname week weekday weekofyear yearweek day dayname dayofmonth
dayofweek dayofyear hour minute second microsecond last_day makedate maketime period_add period_diff
to_days from_days sec_to_time time_to_sec age date_part date_trunc
database schema user current_user session_user system_user suser_name suser_sname user_name db_name
db_id host_name host_id object_id object_name schema_name col_name col_length type_name version
connection_id last_insert_id row_count found_rows uuid uuid_short sys_guid sys_context userenv
current_database current_schema current_setting inet_server_addr inet_client_addr pg_backend_pid
has_dbaccess is_srvrolemember is_member permissions serverproperty databasepropertyex
count sum avg min max std stddev variance bit_and bit_or bit_xor json_arrayagg json_objectagg
json_extract json_unquote json_keys json_search json_array json_object json_contains json_length
json_value json_query json_set json_insert json_replace json_remove json_type json_valid
jsonb_extract_path jsonb_build_object json_build_object row_to_json array_agg array_to_string
extractvalue updatexml xmltype xmlagg xmlelement xmlquery xmlserialize xpath load_file
get_lock release_lock is_free_lock is_used_lock master_pos_wait name_const gtid_subset
geometrycollection multipoint multilinestring multipolygon polygon linestring point st_geomfromtext
values charset collation coercibility row_number rank dense_rank ntile lag lead first_value last_value
pg_read_file pg_ls_dir pg_read_binary_file lo_import lo_export lo_get dblink utl_inaddr utl_http
randomblob zeroblob sqlite_version typeof last_insert_rowid changes total_changes printf glob like
likelihood unlikely hex_encode openrowset opendatasource openquery openxml
`
