package edge

import (
	"strconv"
	"time"
	"unicode/utf8"

	"edge/waf"
)

// jsonLine builds one access-log line: a JSON object whose fields are appended in order, then a
// newline. It replaces slog's JSON handler on the request path (a record, an Attr slice and a
// reflection-based encoding of the WAF matches per request); the output is the same object. Every
// string is escaped: control characters, quotes and backslashes, U+2028/U+2029, and invalid UTF-8
// (as U+FFFD), so client data cannot break or forge a line.
type jsonLine struct{ b []byte }

// begin starts the object with the time field.
func (l *jsonLine) begin(t time.Time) {
	l.b = append(l.b[:0], `{"time":"`...)
	l.b = t.AppendFormat(l.b, time.RFC3339Nano)
	l.b = append(l.b, '"')
}

func (l *jsonLine) key(k string) {
	l.b = append(l.b, ',', '"')
	l.b = append(l.b, k...)
	l.b = append(l.b, '"', ':')
}

func (l *jsonLine) str(k, v string) {
	l.key(k)
	l.b = appendJSONString(l.b, v)
}

func (l *jsonLine) int(k string, v int64) {
	l.key(k)
	l.b = strconv.AppendInt(l.b, v, 10)
}

func (l *jsonLine) uint(k string, v uint64) {
	l.key(k)
	l.b = strconv.AppendUint(l.b, v, 10)
}

// ms writes a duration as milliseconds with microsecond precision.
func (l *jsonLine) ms(k string, d time.Duration) {
	l.key(k)
	l.b = strconv.AppendFloat(l.b, float64(d.Microseconds())/1000, 'f', -1, 64)
}

func (l *jsonLine) boolean(k string, v bool) {
	l.key(k)
	l.b = strconv.AppendBool(l.b, v)
}

func (l *jsonLine) strs(k string, vs []string) {
	l.key(k)
	l.b = appendJSONStrings(l.b, vs)
}

// matches writes the WAF's matches as objects named like the fields of waf.Match.
func (l *jsonLine) matches(k string, ms []waf.Match) {
	l.key(k)
	l.b = append(l.b, '[')
	for i := range ms {
		m := &ms[i]
		if i > 0 {
			l.b = append(l.b, ',')
		}
		l.b = append(l.b, `{"RuleID":`...)
		l.b = appendJSONString(l.b, m.RuleID)
		l.b = append(l.b, `,"Category":`...)
		l.b = appendJSONString(l.b, m.Category)
		l.b = append(l.b, `,"Score":`...)
		l.b = strconv.AppendInt(l.b, int64(m.Score), 10)
		l.b = append(l.b, `,"Paranoia":`...)
		l.b = strconv.AppendInt(l.b, int64(m.Paranoia), 10)
		l.b = append(l.b, `,"Target":`...)
		l.b = appendJSONString(l.b, m.Target)
		l.b = append(l.b, `,"Transforms":`...)
		l.b = appendJSONStrings(l.b, m.Transforms)
		l.b = append(l.b, `,"Fragment":`...)
		l.b = appendJSONString(l.b, m.Fragment)
		l.b = append(l.b, '}')
	}
	l.b = append(l.b, ']')
}

func (l *jsonLine) end() { l.b = append(l.b, '}', '\n') }

// appendJSONStrings appends vs as a JSON array, null when nil.
func appendJSONStrings(b []byte, vs []string) []byte {
	if vs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v)
	}
	return append(b, ']')
}

// jsonPlain marks the ASCII bytes a JSON string holds as they are.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a quoted JSON string (RFC 8259 §7).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[done:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			done = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, s[done:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but line terminators to JavaScript and to some log shippers.
			b = append(b, s[done:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		done = i
	}
	b = append(b, s[done:]...)
	return append(b, '"')
}
