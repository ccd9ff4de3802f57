package quality

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"edge/waf"
)

// Places are the request locations a payload is moved to, the query string
// first: the one the corpora use.
var Places = []string{"query", "form", "json", "json-nested", "multipart", "cookie", "cookie-form", "header", "user-agent"}

// PlaceRow is one (file, category) line of the placement table: the
// payloads moved and, per place, how many were blocked there.
type PlaceRow struct {
	File, Category string
	Payloads       int
	Blocked        map[string]int
}

// PlaceMiss is a moved payload whose verdict is wrong at a place (an
// attack allowed, a benign value blocked).
type PlaceMiss struct {
	File, ID, Category, Place, Value string
	Part                             Part
	Verdict                          waf.Verdict
}

// Placements measures how the rule set generalises across request
// locations: it takes every single-argument line of the corpora (a GET with
// one query argument, or a form POST with one field, with the file's
// expectation), moves the decoded value to each of Places and evaluates it
// there. Attack payloads count only when the query string blocks them, so
// each figure is the share that stays blocked after the move; benign values
// all count, so their figures are false positives per place.
func Placements(dir string, eval func(*http.Request, []byte) waf.Verdict, onMiss func(PlaceMiss)) ([]PlaceRow, error) {
	type key struct{ file, cat string }
	rows := map[key]*PlaceRow{}
	for _, f := range Files {
		err := eachLine(dir, f, func(m meta, _ []byte, r *http.Request, body []byte) {
			v, ok := singleArg(r, body)
			if !ok {
				return
			}
			if f != "benign" && evalAt(eval, "query", v).Action != waf.ActionBlock {
				return // only payloads caught in the query string are moved
			}
			k := key{f, m.Category}
			row := rows[k]
			if row == nil {
				row = &PlaceRow{File: f, Category: m.Category, Blocked: map[string]int{}}
				rows[k] = row
			}
			row.Payloads++
			for _, pl := range Places {
				vd := evalAt(eval, pl, v)
				if vd.Action == waf.ActionBlock {
					row.Blocked[pl]++
				}
				if onMiss != nil && (vd.Action == waf.ActionBlock) != (f != "benign") {
					onMiss(PlaceMiss{File: f, ID: m.ID, Category: m.Category, Place: pl, Value: v, Part: PartOf(m.ID), Verdict: vd})
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]PlaceRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Category < out[j].Category
	})
	return out, nil
}

// PlacementMarkdown renders rows as a table of % blocked per place.
func PlacementMarkdown(rows []PlaceRow) string {
	var b strings.Builder
	b.WriteString("| corpus | category | payloads |")
	for _, pl := range Places {
		fmt.Fprintf(&b, " %s |", pl)
	}
	b.WriteString("\n|---|---|---:|")
	for range Places {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d |", r.File, r.Category, r.Payloads)
		for _, pl := range Places {
			fmt.Fprintf(&b, " %.1f |", Pct(r.Blocked[pl], r.Payloads))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// singleArg returns the decoded value of a request's only argument: a GET
// with one query argument, or a form POST with one field and no query.
func singleArg(r *http.Request, body []byte) (string, bool) {
	var raw string
	switch {
	case r.Method == "GET" && len(body) == 0:
		raw = r.URL.RawQuery
	case r.Method == "POST" && strings.HasPrefix(strings.ToLower(r.Header.Get("Content-Type")), "application/x-www-form-urlencoded"):
		if r.URL.RawQuery != "" {
			return "", false
		}
		raw = string(body)
	default:
		return "", false
	}
	if strings.Contains(raw, "&") || !strings.Contains(raw, "=") {
		return "", false
	}
	_, v, _ := strings.Cut(raw, "=")
	d, err := url.QueryUnescape(v)
	if err != nil || d == "" {
		return "", false
	}
	return d, true
}

func evalAt(eval func(*http.Request, []byte) waf.Verdict, place, v string) waf.Verdict {
	r, body := Build(place, v)
	return eval(r, body)
}

// Build returns a request carrying v at place (one of Places) and its body.
// Header places replace CR and LF by spaces (a header cannot carry them).
func Build(place, v string) (*http.Request, []byte) {
	mk := func(method, target, ctype, body string) (*http.Request, []byte) {
		r, _ := http.NewRequest(method, "http://example.com"+target, strings.NewReader(body))
		r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
		r.Header.Set("Accept", "text/html,application/xhtml+xml")
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		return r, []byte(body)
	}
	noCRLF := strings.NewReplacer("\r", " ", "\n", " ").Replace
	switch place {
	case "query":
		return mk("GET", "/search?q="+url.QueryEscape(v), "", "")
	case "form":
		return mk("POST", "/submit", "application/x-www-form-urlencoded", "q="+url.QueryEscape(v))
	case "json":
		b, _ := json.Marshal(map[string]string{"q": v})
		return mk("POST", "/api", "application/json", string(b))
	case "json-nested":
		b, _ := json.Marshal(map[string]any{"data": map[string]any{"items": []any{1, v}}})
		return mk("POST", "/api", "application/json", string(b))
	case "multipart":
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		w.WriteField("q", v)
		w.Close()
		return mk("POST", "/upload", w.FormDataContentType(), buf.String())
	case "cookie":
		r, b := mk("GET", "/", "", "")
		r.Header.Set("Cookie", "sid=abc123; q="+cookieEscape(v))
		return r, b
	case "cookie-form":
		// Form encoding ('+' for space), as PHP's setcookie and many
		// clients write cookie values and PHP's $_COOKIE decodes them.
		r, b := mk("GET", "/", "", "")
		r.Header.Set("Cookie", "sid=abc123; q="+url.QueryEscape(v))
		return r, b
	case "header":
		r, b := mk("GET", "/", "", "")
		r.Header.Set("X-Data", noCRLF(v))
		return r, b
	case "user-agent":
		r, b := mk("GET", "/", "", "")
		r.Header.Set("User-Agent", noCRLF(v))
		return r, b
	}
	panic("quality: unknown place " + place)
}

// cookieEscape percent-encodes what a cookie value cannot carry (RFC 6265
// cookie-octet), leaving everything else as the client would send it.
func cookieEscape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
