package waf

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

// TestDetectSQLi pins the token patterns of the SQL analyser, including the
// shapes added for logic operators glued to '(', NOT GLOB/LIKE after a
// quote, quote-operator-identifier-comment, SET @var and a comparison cut
// off by "or--".
// detectorCase is one value and whether a detector must fire on it.
type detectorCase struct {
	in   string
	want bool
}

// checkDetector runs a detector on every case.
func checkDetector(t *testing.T, name string, fn detectorFunc, cases []detectorCase) {
	t.Helper()
	st := &evalState{}
	for _, c := range cases {
		if _, _, got := fn(st, nil, []byte(c.in)); got != c.want {
			t.Errorf("%s(%q): got %v, want %v", name, c.in, got, c.want)
		}
	}
}

func TestDetectSQLi(t *testing.T) {
	checkDetector(t, "detectSQLi", detectSQLi, []detectorCase{
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
	})
}

func TestDetectSQLOpenCall(t *testing.T) {
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
		{"", ""},
	} {
		s, e, ok := detectSQLOpenCall(nil, nil, []byte(c.in))
		got := ""
		if ok {
			got = c.in[s:e]
		}
		if got != c.want {
			t.Errorf("detectSQLOpenCall(%q): got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSQLOpenCallLongValue: the detector looks only at the value's end.
func TestSQLOpenCallLongValue(t *testing.T) {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a'
	}
	copy(b[len(b)-7:], " sleep(")
	if _, _, ok := detectSQLOpenCall(nil, nil, b); !ok {
		t.Fatal("got no match for a long value ending in sleep(, want match")
	}
	// A 1 MiB word before '(' is no function name, and is not scanned whole.
	b[len(b)-7] = 'a'
	if _, _, ok := detectSQLOpenCall(nil, nil, b); ok {
		t.Fatal("got match for a long word ending in sleep(, want none")
	}
	if n := testing.AllocsPerRun(100, func() { detectSQLOpenCall(nil, nil, b) }); n != 0 && !raceOn {
		t.Errorf("got %v allocs per call, want 0", n)
	}
}

// TestDetectSQLiAllocs: the '+' re-read uses a stack buffer.
func TestDetectSQLiAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation budget not measurable under -race")
	}
	st := &evalState{}
	b := []byte("x+y+'+or+'a'='a")
	detectSQLi(st, nil, b)
	if n := testing.AllocsPerRun(100, func() { detectSQLi(st, nil, b) }); n != 0 {
		t.Errorf("got %v allocs per call, want 0", n)
	}
}

// sqliCorporaDir holds the shared corpora (corpus_test.go's corporaDir,
// which is in the external test package).
const sqliCorporaDir = "../../shared/corpora/waf"

// sqliCorpusValues returns, deduplicated, every string field of every line
// of the shared corpora (nested ones too), the URI's path and query with
// their '&' and '=' pieces raw and decoded, and the same pieces of bodies
// and cookie-like header values; nil when the corpora are absent.
func sqliCorpusValues(tb testing.TB) []string {
	tb.Helper()
	sqliCorpus.once.Do(func() { sqliCorpus.vals = loadSQLiCorpusValues(tb) })
	return sqliCorpus.vals
}

// sqliCorpus is the corpus values, read once for the tests that use them.
var sqliCorpus struct {
	once sync.Once
	vals []string
}

func loadSQLiCorpusValues(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(sqliCorporaDir, "*.jsonl"))
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

// sqliDiff compares the analyser with its full analysis on v (without the
// sqlMayMatch fast path, which must never hide a match).
func sqliDiff(st *evalState, v []byte) (got, want [3]int, same bool) {
	s, e, ok := detectSQLi(st, nil, v)
	rs, re, rok := detectSQLiAll(st, v)
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

// sqliEdgeCases are values where an identifier token starts somewhere
// unusual (after "/*!50000", a lone '.', a digit, a '+' of "1e+", an
// unterminated string), long identifiers around the 48-byte cut, and the
// byte pairs sqlMayMatch looks for.
var sqliEdgeCases = []string{
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

// TestSQLiDifferential: on the edge cases, and on every corpus value in its
// own case and lower and upper-cased, the analyser gives the verdict and
// span of its full analysis: sqlMayMatch rules out only values nothing
// matches.
func TestSQLiDifferential(t *testing.T) {
	st := &evalState{}
	for _, v := range sqliEdgeCases {
		if got, want, same := sqliDiff(st, []byte(v)); !same {
			t.Errorf("detectSQLi(%q): got (start, end, match) %v, want %v", v, got, want)
		}
	}
	vals := sqliCorpusValues(t)
	if vals == nil {
		t.Skip("shared corpora not present")
	}
	n, matched, fast, diffs := 0, 0, 0, 0
	for _, s := range vals {
		for _, v := range [...]string{s, strings.ToLower(s), strings.ToUpper(s)} {
			n++
			if !sqlMayMatch([]byte(v)) {
				fast++
			}
			got, want, same := sqliDiff(st, []byte(v))
			matched += want[2]
			if !same {
				diffs++
				if diffs <= 20 {
					t.Errorf("detectSQLi(%q): got (start, end, match) %v, want %v", v, got, want)
				}
			}
		}
	}
	t.Logf("%d values (%d distinct corpus strings): %d matched, %d ruled out by sqlMayMatch, %d differences", n, len(vals), matched, fast, diffs)
}

// FuzzSQLiDifferential: sqlMayMatch never rules out a value the full
// analysis matches.
func FuzzSQLiDifferential(f *testing.F) {
	for _, c := range sqliBenchCases {
		f.Add(c.in)
	}
	for _, v := range sqliEdgeCases {
		f.Add(v)
	}
	// Under -fuzz every seed is first run for coverage (about 300 a second
	// here), so fuzzing starts from every 30th value; go test runs them all,
	// as TestSQLiDifferential does.
	step := 1
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		step = 30
	}
	for i, s := range sqliCorpusValues(f) {
		if len(s) <= 4096 && i%step == 0 {
			f.Add(s)
		}
	}
	st := &evalState{}
	f.Fuzz(func(t *testing.T, s string) {
		got, want, same := sqliDiff(st, []byte(s))
		if !same {
			t.Fatalf("detectSQLi(%q): got (start, end, match) %v, want %v", s, got, want)
		}
	})
}

// TestSQLiFastPathAllocs: benign values, on and off the fast path, cost no
// allocation.
func TestSQLiFastPathAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation budget not measurable under -race")
	}
	st := &evalState{}
	for _, c := range sqliBenchCases {
		b := []byte(c.in)
		detectSQLi(st, nil, b)
		if n := testing.AllocsPerRun(100, func() { detectSQLi(st, nil, b) }); n != 0 {
			t.Errorf("detectSQLi(%q): got %v allocs per call, want 0", c.in, n)
		}
	}
}
