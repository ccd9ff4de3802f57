package fingerprint

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// MaxLineBytes bounds one input line of RunLines; a longer line yields an
// error line (a ClientHello is at most a few KiB, 1 MiB of hex is plenty).
const MaxLineBytes = 1 << 20

// lineIn is one input line of RunLines.
type lineIn struct {
	ID           json.RawMessage `json:"id"`
	Transport    string          `json:"transport"`
	HandshakeHex *string         `json:"handshake_hex"`
	RecordHex    *string         `json:"record_hex"`
}

// lineOut is one output line of RunLines: either the fingerprints or Error.
type lineOut struct {
	ID      json.RawMessage `json:"id"`
	JA3     string          `json:"ja3,omitempty"`
	JA3Hash string          `json:"ja3_hash,omitempty"`
	JA4     string          `json:"ja4,omitempty"`
	JA4R    string          `json:"ja4_r,omitempty"`
	JA4O    string          `json:"ja4_o,omitempty"`
	JA4RO   string          `json:"ja4_ro,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// RunLines is the body of `edge fingerprint`. It reads JSON lines, each with
// "id", "transport" ("tcp" or "quic", any case, default "tcp") and either
// "handshake_hex" (the ClientHello handshake message with its 4-byte header)
// or "record_hex" (the TLS records carrying it; when both are present
// handshake_hex is used, other fields are ignored), and writes exactly one JSON
// line per input line, in order: "id", "ja3", "ja3_hash", "ja4", "ja4_r",
// "ja4_o", "ja4_ro", or "id" and "error". A bad line never stops the run;
// only a read or write error does. Lines longer than MaxLineBytes yield an
// error line. Blank lines are echoed as error lines too, to keep the
// one-to-one mapping.
func RunLines(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriter(out)
	var line []byte
	for {
		var tooLong bool
		var err error
		line, tooLong, err = readLine(r, line[:0])
		if err == io.EOF && len(line) == 0 && !tooLong {
			break
		}
		if err != nil && err != io.EOF {
			w.Flush()
			return err
		}
		var o lineOut
		if tooLong {
			o = lineOut{ID: idOf(line), Error: "fingerprint: line longer than 1 MiB"}
		} else {
			o = processLine(line)
		}
		b, merr := json.Marshal(o)
		if merr != nil { // not reachable: every field is a string or raw JSON already validated
			b = []byte(`{"error":"fingerprint: cannot encode result"}`)
		}
		b = append(b, '\n')
		if _, werr := w.Write(b); werr != nil {
			return werr
		}
		if err == io.EOF {
			break
		}
	}
	return w.Flush()
}

// readLine reads one line without its terminator into buf. A line longer than
// MaxLineBytes is consumed to its end; only its first MaxLineBytes bytes are
// kept, and tooLong is set.
func readLine(r *bufio.Reader, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		frag, e := r.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes+1 {
			tooLong = true
			if room := MaxLineBytes - len(buf); room > 0 {
				buf = append(buf, frag[:room]...)
			}
		} else {
			buf = append(buf, frag...)
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		if n := len(buf); e == nil && n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
		}
		if n := len(buf); n > 0 && buf[n-1] == '\r' {
			buf = buf[:n-1]
		}
		return buf, tooLong, e
	}
}

// idOf extracts the id of a line that is too long to decode, when the id
// comes first; otherwise it returns null.
func idOf(line []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return json.RawMessage("null")
	}
	if t, err := dec.Token(); err != nil || t != "id" {
		return json.RawMessage("null")
	}
	var id json.RawMessage
	if err := dec.Decode(&id); err != nil {
		return json.RawMessage("null")
	}
	return id
}

func processLine(line []byte) (o lineOut) {
	// The parser is fuzzed and must not panic; this keeps the one-line-out
	// promise even if it ever did.
	defer func() {
		if recover() != nil {
			o = lineOut{ID: json.RawMessage("null"), Error: "fingerprint: internal error"}
		}
	}()
	var in lineIn
	if err := json.Unmarshal(line, &in); err != nil {
		return lineOut{ID: json.RawMessage("null"), Error: "fingerprint: line is not a JSON object"}
	}
	if len(in.ID) == 0 {
		in.ID = json.RawMessage("null")
	}
	fp, err := fingerprintLine(&in)
	if err != nil {
		return lineOut{ID: in.ID, Error: err.Error()}
	}
	return lineOut{ID: in.ID, JA3: fp.JA3, JA3Hash: fp.JA3Hash, JA4: fp.JA4, JA4R: fp.JA4R, JA4O: fp.JA4O, JA4RO: fp.JA4RO}
}

func fingerprintLine(in *lineIn) (Fingerprints, error) {
	var tr Transport
	switch {
	case in.Transport == "" || strings.EqualFold(in.Transport, "tcp"):
		tr = TCP
	case strings.EqualFold(in.Transport, "quic"):
		tr = QUIC
	default:
		return Fingerprints{}, errors.New(`fingerprint: transport must be "tcp" or "quic"`)
	}
	var msg []byte
	switch {
	case in.HandshakeHex != nil: // preferred when both are given

		b, err := hex.DecodeString(*in.HandshakeHex)
		if err != nil {
			return Fingerprints{}, errors.New("fingerprint: handshake_hex is not hex")
		}
		msg = b
	case in.RecordHex != nil:
		b, err := hex.DecodeString(*in.RecordHex)
		if err != nil {
			return Fingerprints{}, errors.New("fingerprint: record_hex is not hex")
		}
		if msg, err = HandshakeFromRecords(b); err != nil {
			return Fingerprints{}, err
		}
	default:
		return Fingerprints{}, errors.New("fingerprint: handshake_hex or record_hex is required")
	}
	h, err := ParseClientHello(msg)
	if err != nil {
		return Fingerprints{}, err
	}
	return Compute(&h, tr), nil
}
