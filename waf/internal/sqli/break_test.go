package sqli

import "testing"

func TestSQLBreakTail(t *testing.T) {
	tests := []struct {
		tail string
		want bool
	}{
		{"Or 37791", false},
		{"Or wine from Burgundy.", false},
		{"s shoes, size 10", false},
		{" or 1=1", true},
		{" or 'a'='a", true},
		{" or 1--", true},
		{" or 1#", true},
		{"alter a", true},
		{" union all select 1", true},
		{") or (1", true},
		{"; drop table x", true},
	}
	for _, tc := range tests {
		if got := sqlBreakTail([]byte(tc.tail)); got != tc.want {
			t.Errorf("sqlBreakTail(%q): got %v, want %v", tc.tail, got, tc.want)
		}
	}
}
