package edge

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestProcessLogJournal: on the journal's stream the process log has no time= (the journal stamps
// lines itself); on any other stream, or when JOURNAL_STREAM names another file, it keeps it.
func TestProcessLogJournal(t *testing.T) {
	dir := t.TempDir()
	journal, err := os.Create(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer journal.Close()
	other, err := os.Create(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(journal.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	stream := strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(st.Ino, 10)

	tests := []struct {
		name     string
		env      string
		f        *os.File
		wantTime bool
	}{
		{"journal", stream, journal, false},
		{"no JOURNAL_STREAM", "", journal, true},
		{"stderr redirected elsewhere", stream, other, true},
		{"malformed", "12", journal, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("JOURNAL_STREAM", tc.env)
			start, _ := tc.f.Seek(0, 2)
			processLogger(tc.f, "info").Info("listening", "addr", "127.0.0.1:8443")
			b, _ := os.ReadFile(tc.f.Name())
			line := string(b[start:])
			if got := strings.Contains(line, "time="); got != tc.wantTime {
				t.Errorf("line %q: has time = %v, want %v", line, got, tc.wantTime)
			}
			if !strings.HasPrefix(strings.TrimPrefix(line, line[:strings.Index(line, "level=")]), "level=INFO msg=listening addr=127.0.0.1:8443") {
				t.Errorf("line %q lost its content", line)
			}
		})
	}
}
