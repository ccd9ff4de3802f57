// Command placement measures how well the rule set generalises across
// request locations: it takes every single-argument payload of the corpora
// (a GET with one query argument, or a form POST with one field), moves the
// decoded value into other places — form body, JSON (flat and nested),
// multipart field, cookie (percent- or form-encoded), custom header,
// User-Agent — and prints the share
// blocked per category and place. Benign lines are moved the same way, so
// the false-positive column shows what each place costs. Attack payloads
// count only when they are blocked in the query string, so each column is
// the share that stays blocked after the move.
//
//	go run ./scripts/waf/placement [-corpora ../shared/corpora/waf] [-misses cat:place]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"edge/waf"
	"edge/waf/quality"
)

type line struct {
	ID       string            `json:"id"`
	Category string            `json:"category"`
	Expect   string            `json:"expect"`
	Method   string            `json:"method"`
	URI      string            `json:"uri"`
	Headers  map[string]string `json:"headers"`
	Body     string            `json:"body"`
}

// payload returns the decoded value of a line's only argument.
func payload(l line) (string, bool) {
	var raw string
	switch {
	case l.Method == "GET" && l.Body == "":
		_, q, ok := strings.Cut(l.URI, "?")
		if !ok {
			return "", false
		}
		raw = q
	case l.Method == "POST" && strings.HasPrefix(strings.ToLower(l.Headers["Content-Type"]), "application/x-www-form-urlencoded"):
		_, q, _ := strings.Cut(l.URI, "?")
		if q != "" {
			return "", false
		}
		raw = l.Body
	default:
		return "", false
	}
	if strings.Count(raw, "&") > 0 || !strings.Contains(raw, "=") {
		return "", false
	}
	_, v, _ := strings.Cut(raw, "=")
	d, err := url.QueryUnescape(v)
	if err != nil || d == "" {
		return "", false
	}
	return d, true
}

var places = []string{"query", "form", "json", "json-nested", "multipart", "cookie", "cookie-form", "header", "user-agent"}

func build(place, v string) *http.Request {
	mk := func(method, target, ctype, body string) *http.Request {
		r, _ := http.NewRequest(method, "http://example.com"+target, strings.NewReader(body))
		r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
		r.Header.Set("Accept", "text/html,application/xhtml+xml")
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		return r
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
		r := mk("GET", "/", "", "")
		r.Header.Set("Cookie", "sid=abc123; q="+cookieEscape(v))
		return r
	case "cookie-form":
		// Form encoding ('+' for space), as PHP's setcookie and many
		// clients write cookie values and PHP's $_COOKIE decodes them.
		r := mk("GET", "/", "", "")
		r.Header.Set("Cookie", "sid=abc123; q="+url.QueryEscape(v))
		return r
	case "header":
		r := mk("GET", "/", "", "")
		r.Header.Set("X-Data", noCRLF(v))
		return r
	case "user-agent":
		r := mk("GET", "/", "", "")
		r.Header.Set("User-Agent", noCRLF(v))
		return r
	}
	panic(place)
}

func main() {
	corpora := flag.String("corpora", "../shared/corpora/waf", "corpora directory")
	rules := flag.String("rules", "rules/waf", "rule directory")
	misses := flag.String("misses", "", "print the payloads of category:place that were not blocked (benign: blocked)")
	flag.Parse()
	eval, err := quality.Load(*rules, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	type key struct{ file, cat string }
	n := map[key]int{}
	blocked := map[key]map[string]int{}
	for _, f := range []string{"crs", "attacks", "benign"} {
		fh, err := os.Open(filepath.Join(*corpora, f+".jsonl"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var l line
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			want := "block"
			if f == "benign" {
				want = "allow"
			}
			v, ok := payload(l)
			if l.Expect != want || !ok {
				continue
			}
			k := key{f, l.Category}
			if blocked[k] == nil {
				blocked[k] = map[string]int{}
			}
			if f != "benign" {
				r := build("query", v)
				body, _ := readAll(r)
				if eval(r, body).Action != waf.ActionBlock {
					continue // only payloads caught in the query string are moved
				}
			}
			n[k]++
			for _, pl := range places {
				r := build(pl, v)
				body, _ := readAll(r)
				vd := eval(r, body)
				if vd.Action == waf.ActionBlock {
					blocked[k][pl]++
				}
				if *misses == l.Category+":"+pl && (vd.Action == waf.ActionBlock) != (want == "block") {
					fmt.Fprintf(os.Stderr, "%s\t%v\t%q\n", l.ID, vd.RuleIDs(nil), v)
				}
			}
		}
		fh.Close()
	}
	keys := make([]key, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].file != keys[j].file {
			return keys[i].file < keys[j].file
		}
		return keys[i].cat < keys[j].cat
	})
	fmt.Print("| corpus | category | payloads |")
	for _, pl := range places {
		fmt.Printf(" %s |", pl)
	}
	fmt.Print("\n|---|---|---:|")
	for range places {
		fmt.Print("---:|")
	}
	fmt.Println()
	for _, k := range keys {
		fmt.Printf("| %s | %s | %d |", k.file, k.cat, n[k])
		for _, pl := range places {
			fmt.Printf(" %.1f |", quality.Pct(blocked[k][pl], n[k]))
		}
		fmt.Println()
	}
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

func readAll(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}
