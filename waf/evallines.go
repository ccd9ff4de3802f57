package waf

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxEvalLineBytes bounds one input line of EvalLines (16 MiB).
const maxEvalLineBytes = 16 << 20

// evalLine is one corpus request line; headers are decoded separately to
// keep their order.
type evalLine struct {
	ID      string
	Method  string
	URI     string
	Version string
	Headers []Header
	Body    []byte
}

type evalOut struct {
	ID      string         `json:"id"`
	Action  string         `json:"action,omitempty"`
	Score   int            `json:"score"`
	Rules   []string       `json:"rules"`
	Matches []explainMatch `json:"matches,omitempty"`
	Error   string         `json:"error,omitempty"`
}

type explainMatch struct {
	Rule       string   `json:"rule"`
	Category   string   `json:"category"`
	Score      int      `json:"score"`
	Target     string   `json:"target"`
	Transforms []string `json:"transforms"`
	Fragment   string   `json:"fragment"`
}

// EvalLines is the body of `edge waf eval`: it reads JSON lines in the
// corpora format from in, builds an *http.Request and body per line, calls
// eval (the live pipeline's inspection function) and writes one JSON line
// per input line to out, in order: {"id","action","score","rules"} plus
// "matches" when explain is set. A malformed line yields {"id","error"} and
// evaluation continues. A summary goes to summary. The returned error is
// only for I/O failures.
func EvalLines(in io.Reader, out, summary io.Writer, eval func(*http.Request, []byte) Verdict, explain bool) error {
	br := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriter(out)
	var n, blocked, detected, allowed, bad int
	var readErr error
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			n++
			var o evalOut
			el, perr := parseEvalLine(line)
			if perr != nil {
				bad++
				o = evalOut{ID: el.ID, Error: "line " + strconv.Itoa(lineNo) + ": " + perr.Error()}
			} else {
				r := el.httpRequest()
				v := eval(r, el.Body)
				o = evalOut{ID: el.ID, Action: v.Action.String(), Score: v.Score, Rules: v.RuleIDs([]string{})}
				switch v.Action {
				case ActionBlock:
					blocked++
				case ActionDetect:
					detected++
				default:
					allowed++
				}
				if explain {
					for _, m := range v.Matches {
						o.Matches = append(o.Matches, explainMatch{m.RuleID, m.Category, m.Score, m.Target, m.Transforms, m.Fragment})
					}
				}
			}
			b, _ := json.Marshal(o)
			bw.Write(b)
			bw.WriteByte('\n')
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("waf: eval: %w", err)
	}
	io.WriteString(summary, "waf eval: "+strconv.Itoa(n)+" lines, "+strconv.Itoa(blocked)+" block, "+
		strconv.Itoa(detected)+" detect, "+strconv.Itoa(allowed)+" allow, "+strconv.Itoa(bad)+" errors\n")
	if readErr != nil {
		return fmt.Errorf("waf: eval: %w", readErr)
	}
	return nil
}

// readLine returns the next line without its newline; an over-long line is
// consumed and returned truncated (it then fails to parse as JSON).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(line)+len(chunk) <= maxEvalLineBytes {
			line = append(line, chunk...)
		}
		if err != nil {
			return line, err
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// RequestFromLine parses one line of the corpora format into the request
// and body EvalLines hands to its eval function.
func RequestFromLine(line []byte) (id string, r *http.Request, body []byte, err error) {
	el, err := parseEvalLine(line)
	if err != nil {
		return el.ID, nil, nil, fmt.Errorf("waf: %w", err)
	}
	return el.ID, el.httpRequest(), el.Body, nil
}

// parseEvalLine decodes one corpus line. Unknown fields are ignored.
func parseEvalLine(line []byte) (evalLine, error) {
	var el evalLine
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return el, fmt.Errorf("invalid JSON: %w", err)
	}
	str := func(k string) (string, error) {
		v, ok := raw[k]
		if !ok {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", errors.New("field " + k + ": want a string")
		}
		return s, nil
	}
	var err error
	if el.ID, err = str("id"); err != nil {
		return el, err
	}
	if el.Method, err = str("method"); err != nil {
		return el, err
	}
	if el.URI, err = str("uri"); err != nil {
		return el, err
	}
	if el.Version, err = str("version"); err != nil {
		return el, err
	}
	if el.Method == "" || el.URI == "" {
		return el, errors.New("method and uri are required")
	}
	if h, ok := raw["headers"]; ok {
		if el.Headers, err = orderedHeaders(h); err != nil {
			return el, err
		}
	}
	body, err := str("body")
	if err != nil {
		return el, err
	}
	b64, err := str("body_b64")
	if err != nil {
		return el, err
	}
	if b64 != "" {
		if body != "" {
			return el, errors.New("both body and body_b64")
		}
		dec, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return el, fmt.Errorf("body_b64: %w", err)
		}
		el.Body = dec
	} else {
		el.Body = []byte(body)
	}
	return el, nil
}

// orderedHeaders decodes a JSON object of string values keeping key order.
func orderedHeaders(data []byte) ([]Header, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("headers: want an object")
	}
	var hs []Header
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		v, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		vs, ok := v.(string)
		if !ok {
			return nil, errors.New("headers: value of " + strconv.Quote(k.(string)) + " is not a string")
		}
		hs = append(hs, Header{Name: k.(string), Value: vs})
	}
	return hs, nil
}

// httpRequest builds the request a server would have parsed from the line.
// URIs a strict parser rejects are still turned into a request: the path is
// everything before the first '?', the query everything after.
func (el *evalLine) httpRequest() *http.Request {
	r := &http.Request{Method: el.Method, RequestURI: el.URI, Header: make(http.Header), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if el.Version != "" {
		r.Proto = el.Version
		if maj, min, ok := http.ParseHTTPVersion(el.Version); ok {
			r.ProtoMajor, r.ProtoMinor = maj, min
		}
	}
	u, err := url.ParseRequestURI(el.URI)
	if err != nil {
		u = &url.URL{}
		p, q, _ := strings.Cut(el.URI, "?")
		u.Path, u.RawQuery = p, q
		if up, err := url.PathUnescape(p); err == nil {
			u.Path = up
		}
	}
	r.URL = u
	for _, h := range el.Headers {
		if strings.EqualFold(h.Name, "Host") {
			r.Host = h.Value
			continue
		}
		r.Header.Add(h.Name, h.Value)
	}
	if r.Host == "" && u.Host != "" {
		r.Host = u.Host
	}
	r.ContentLength = int64(len(el.Body))
	r.Body = http.NoBody
	return r
}
