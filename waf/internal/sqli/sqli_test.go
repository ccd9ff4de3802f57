package sqli

import (
	"bufio"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestDetect pins the token patterns of the analyser, including the shapes
// added for logic operators glued to '(', NOT GLOB/LIKE after a quote,
// quote-operator-identifier-comment, SET @var and a comparison cut off by
// "or--".
func TestDetect(t *testing.T) {
	sc := &Scanner{}
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"1 UNION SELECT password FROM users", true},
		{"x' OR 1=1--", true},
		{"'or(id glob 1)--", true},
		{"\"xor(2>1)#", true},
		{"id'not glob-id--", true},
		{"name'not like name--", true},
		{"x'+email--", true},
		{"q\"|col#", true},
		{"1='x' or--", true},
		{"7='7' OR/* */", true},
		{" SET @sql_mode=''", true},
		{"set @@global.general_log=1", true},
		{"O'Reilly", false},
		{"rock and roll", false},
		{"Tom and Jerry -- the best", false},
		{"set @ noon", false},
		{"it's x + y -- maybe", false},
		{"or(more)", false},
		{"reset @home", false},
		{"price >= 100 and price <= 200", false},
		{"age > 18 AND age < 65", false},
		{"1 and id<=5", true},
		{"x' and name='a", true},
		{"id=1 and 1=1", true},
		// Form-encoded values ('+' for space), as in cookies.
		{"1'+or+'1'='1", true},
		{"-1+union+all+select+1,2--", true},
		{"a+b+c", false},
		{"dGVzdCtvcisxPTE+aGk=", false},
		// A word or number right after the quote makes it an apostrophe,
		// and two operands side by side end what a query can parse.
		{"6589 O'Connell Street, Val-d'Or 07083", false},
		{"'andre+or@outlook.com", false},
		{"Adaptor 5'11\"; crematoriums (cozily)", false},
		{"'Replace' 'migrating' tipplers", false},
		{"\"update wife", false},
		{"\"drop table users--", true},
		{"'alter a", true},
		{"x 'in&", false},
		{"x' in (select 1)", true},
		{"'glob 1;", true},
		{"x'; exec xp_cmdshell 'dir'", true},
		{"'; select 1", true},
		// "@@" starts a system variable only where SQL reads one.
		{"union@gmail.com", false},
		{"@@kexLwqkT0gz", false},
		{"@@version", true},
		{"1 union @@version", true},
		{"select @@hostname", true},
		{"1=@@xyz", true},
	} {
		if _, _, got := detect(sc, []byte(c.in)); got != c.want {
			t.Errorf("Detect(%q): got %v, want %v", c.in, got, c.want)
		}
	}
}

func TestOpenCall(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // matched span, "" for no match
	}{
		{"CAST(", "CAST("},
		{"x minute&&(", "minute&&("},
		{"LEFT')?$(", "LEFT')?$("},
		{"hour = (  ", "hour = ("},
		{"database (", "database ("},
		{"discount(", ""},
		{"Meeting (", ""},
		{"count(1)", ""},
		{"count", ""},
		{"(", ""},
		{"left!!!!!!!(", ""}, // seven separators: more than maxOpenCallSep
		{"round :-(", ""},    // an emoticon
		{"time :(", ""},
		{"localtimestamp (", "localtimestamp ("},
		{"x json_search(", "json_search("},
		{"pg_ls_dir(", "pg_ls_dir("},
		{"", ""},
	} {
		s, e, ok := OpenCall([]byte(c.in))
		got := ""
		if ok {
			got = c.in[s:e]
		}
		if got != c.want {
			t.Errorf("OpenCall(%q): got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestOpenCallLongValue: OpenCall looks only at the value's end.
func TestOpenCallLongValue(t *testing.T) {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a'
	}
	copy(b[len(b)-7:], " sleep(")
	if _, _, ok := OpenCall(b); !ok {
		t.Fatal("got no match for a long value ending in sleep(, want match")
	}
	// A 1 MiB word before '(' is no function name, and is not scanned whole.
	b[len(b)-7] = 'a'
	if _, _, ok := OpenCall(b); ok {
		t.Fatal("got match for a long word ending in sleep(, want none")
	}
	if n := testing.AllocsPerRun(100, func() { OpenCall(b) }); n != 0 && !raceOn {
		t.Errorf("got %v allocs per call, want 0", n)
	}
}

// TestDetectAllocs: the '+' re-read uses a stack buffer.
func TestDetectAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation budget not measurable under -race")
	}
	sc := &Scanner{}
	b := []byte("x+y+'+or+'a'='a")
	detect(sc, b)
	if n := testing.AllocsPerRun(100, func() { detect(sc, b) }); n != 0 {
		t.Errorf("got %v allocs per call, want 0", n)
	}
}

// corporaDir holds the shared corpora, found beside the repository.
const corporaDir = "../../../../shared/corpora/waf"

// corpusValues returns, deduplicated, every string field of every line
// of the shared corpora (nested ones too), the URI's path and query with
// their '&' and '=' pieces raw and decoded, and the same pieces of bodies
// and cookie-like header values; nil when the corpora are absent.
func corpusValues(tb testing.TB) []string {
	tb.Helper()
	corpus.once.Do(func() { corpus.vals = loadCorpusValues(tb) })
	return corpus.vals
}

// corpus is the corpus values, read once for the tests that use them.
var corpus struct {
	once sync.Once
	vals []string
}

func loadCorpusValues(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(corporaDir, "*.jsonl"))
	if len(files) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	addDecoded := func(s string) {
		add(s)
		if d, err := url.QueryUnescape(s); err == nil {
			add(d)
		}
		if d, err := url.PathUnescape(s); err == nil {
			add(d)
		}
	}
	addPieces := func(s, sep string) {
		for _, kv := range strings.Split(s, sep) {
			addDecoded(kv)
			k, v, _ := strings.Cut(kv, "=")
			addDecoded(strings.TrimSpace(k))
			addDecoded(v)
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			add(v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			walk(line)
			if u, ok := line["uri"].(string); ok {
				path, query, _ := strings.Cut(u, "?")
				addDecoded(path)
				addDecoded(query)
				addPieces(query, "&")
			}
			if h, ok := line["headers"].(map[string]any); ok {
				for _, v := range h {
					if s, ok := v.(string); ok {
						addPieces(s, ";")
					}
				}
			}
			if body, ok := line["body"].(string); ok {
				addDecoded(body)
				addPieces(body, "&")
				var j any
				if json.Unmarshal([]byte(body), &j) == nil {
					walk(j)
				}
			}
		}
		if err := sc.Err(); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		fh.Close()
	}
	return out
}

// detect is the analysis as the WAF runs it: the MayMatch fast path, then
// Detect.
func detect(sc *Scanner, b []byte) (int, int, bool) {
	if !MayMatch(b) {
		return 0, 0, false
	}
	return sc.Detect(b)
}

// diff compares the analyser with its full analysis on v (without the
// MayMatch fast path, which must never hide a match).
func diff(sc *Scanner, v []byte) (got, want [3]int, same bool) {
	s, e, ok := detect(sc, v)
	rs, re, rok := sc.Detect(v)
	got = [3]int{s, e, b2i(ok)}
	want = [3]int{rs, re, b2i(rok)}
	return got, want, got == want
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// edgeCases are values where an identifier token starts somewhere
// unusual (after "/*!50000", a lone '.', a digit, a '+' of "1e+", an
// unterminated string), long identifiers around the 48-byte cut, and the
// byte pairs MayMatch looks for.
var edgeCases = []string{
	"/*!50000union*/ select 1", "/*!50000select*/ 1", "x/*!12345union all select 1", ".union select 1",
	"( .union select 1", "4union select 1", "1e+union+select+1", "1e-union select 1", "`a`union select 1",
	"1+and+1=1", "1 and 1=1", "1&&1=1", "1||1=1", "a|b&c@d", "@@version", "x=@@version", "set @@x=1",
	"1;shutdown", "1;select 1", "1; drop table x", "information_schema.tables", "from dual", "DUAL",
	"sleep(5)", "SLEEP (5)", "pg_sleep(5)", "utl_inaddr.get_host_address(1)", "v$version", "master..sysdatabases",
	"a.information_schema", "9information_schema", strings.Repeat("a", 47) + " or 1=1",
	"information_schema" + strings.Repeat("x", 40), "information_schema" + strings.Repeat("x", 60),
	strings.Repeat("x", 49) + " union select 1", "union" + strings.Repeat("x", 60) + " select 1",
	"order by 1--", "group by 1,2", "having 1=1", "case when 1", "into outfile '/x'", "waitfor delay '0:0:5'",
	"x'", "x\"", "'", "\"", "a'b", "1'+or+'1'='1", "O'Reilly", "rock and roll", "+", "++", "a+b",
}

// TestDifferential: on the edge cases, and on every corpus value in its
// own case and lower and upper-cased, the analyser gives the verdict and
// span of its full analysis: MayMatch rules out only values nothing
// matches.
func TestDifferential(t *testing.T) {
	sc := &Scanner{}
	for _, v := range edgeCases {
		if got, want, same := diff(sc, []byte(v)); !same {
			t.Errorf("Detect(%q): got (start, end, match) %v, want %v", v, got, want)
		}
	}
	vals := corpusValues(t)
	if vals == nil {
		t.Skip("shared corpora not present")
	}
	n, matched, fast, diffs := 0, 0, 0, 0
	for _, s := range vals {
		for _, v := range [...]string{s, strings.ToLower(s), strings.ToUpper(s)} {
			n++
			if !MayMatch([]byte(v)) {
				fast++
			}
			got, want, same := diff(sc, []byte(v))
			matched += want[2]
			if !same {
				diffs++
				if diffs <= 20 {
					t.Errorf("Detect(%q): got (start, end, match) %v, want %v", v, got, want)
				}
			}
		}
	}
	t.Logf("%d values (%d distinct corpus strings): %d matched, %d ruled out by MayMatch, %d differences", n, len(vals), matched, fast, diffs)
}

// FuzzDifferential: MayMatch never rules out a value the full
// analysis matches.
func FuzzDifferential(f *testing.F) {
	for _, c := range benchCases {
		f.Add(c.in)
	}
	for _, v := range edgeCases {
		f.Add(v)
	}
	// Under -fuzz every seed is first run for coverage (about 300 a second
	// here), so fuzzing starts from every 30th value; go test runs them all,
	// as TestDifferential does.
	step := 1
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		step = 30
	}
	for i, s := range corpusValues(f) {
		if len(s) <= 4096 && i%step == 0 {
			f.Add(s)
		}
	}
	sc := &Scanner{}
	f.Fuzz(func(t *testing.T, s string) {
		got, want, same := diff(sc, []byte(s))
		if !same {
			t.Fatalf("Detect(%q): got (start, end, match) %v, want %v", s, got, want)
		}
	})
}

// TestFastPathAllocs: benign values, on and off the fast path, cost no
// allocation.
func TestFastPathAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation budget not measurable under -race")
	}
	sc := &Scanner{}
	for _, c := range benchCases {
		b := []byte(c.in)
		detect(sc, b)
		if n := testing.AllocsPerRun(100, func() { detect(sc, b) }); n != 0 {
			t.Errorf("Detect(%q): got %v allocs per call, want 0", c.in, n)
		}
	}
}

// FuzzOpenCall: a match is a span of the value that starts with a
// catalogue function name and ends with the value's last '(' (before
// trailing blanks), and a value with no '(' never matches.
func FuzzOpenCall(f *testing.F) {
	for _, s := range []string{"CAST(", "x minute&&(", "LEFT')?$(", "round :-(", "localtimestamp (  ", "discount(", "(", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		st, e, ok := OpenCall(b)
		if !ok {
			return
		}
		if st < 0 || st >= e || e > len(b) || b[e-1] != '(' {
			t.Fatalf("OpenCall(%q): span [%d,%d) is not a call", s, st, e)
		}
		for _, c := range b[e:] {
			if !isSpace(c) {
				t.Fatalf("OpenCall(%q): %q follows the span", s, b[e:])
			}
		}
		w := st
		for w < e && isWordByte(b[w]) {
			w++
		}
		if !openCallFunc([]byte(strings.ToLower(s[st:w]))) {
			t.Fatalf("OpenCall(%q): %q is no catalogue function", s, s[st:w])
		}
		if st > 0 && isWordByte(b[st-1]) {
			t.Fatalf("OpenCall(%q): the name starts inside a word", s)
		}
	})
}
