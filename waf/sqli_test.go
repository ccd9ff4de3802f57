package waf

import "testing"

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
