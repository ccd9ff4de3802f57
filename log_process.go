package edge

import (
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processLogger is the process log: text on w, at log.level and above. When w is the systemd
// journal's stream (stderr under a unit), the time is left out: the journal stamps every line
// itself, and a second timestamp in the message only makes `journalctl` lines longer.
func processLogger(w io.Writer, level string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevels[level]}
	if f, ok := w.(*os.File); ok && isJournalStream(f, os.Getenv("JOURNAL_STREAM")) {
		opts.ReplaceAttr = dropTime
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// dropTime removes the record's time attribute.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// isJournalStream reports whether f is the stream systemd connected to the journal: $JOURNAL_STREAM
// holds its device and inode numbers as "DEV:INODE" (systemd.exec(5)), which a redirected stderr —
// a file, a pipe to another logger — does not match.
func isJournalStream(f *os.File, env string) bool {
	devS, inoS, ok := strings.Cut(env, ":")
	if !ok {
		return false
	}
	dev, err1 := strconv.ParseUint(devS, 10, 64)
	ino, err2 := strconv.ParseUint(inoS, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return uint64(st.Dev) == dev && uint64(st.Ino) == ino
}
