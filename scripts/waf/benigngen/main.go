package main

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "waf/testdata/benign", "output directory")
	n := flag.Int("n", 400, "lines per source")
	words := flag.String("words", "/usr/share/dict/american-english", "word list (one word a line)")
	seed := flag.Uint64("seed", 1, "random seed; the committed files use 1, other seeds give fresh material to tune on")
	flag.Parse()
	g, err := newGen(*words)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benigngen:", err)
		os.Exit(1)
	}
	for _, s := range sources {
		g.r = rand.New(rand.NewPCG(*seed, uint64(len(s.name))*7919))
		if err := write(filepath.Join(*out, s.name+".jsonl"), s.name, *n, func() request { return s.fn(g) }); err != nil {
			fmt.Fprintln(os.Stderr, "benigngen:", err)
			os.Exit(1)
		}
	}
}

var sources = []struct {
	name string
	fn   func(*gen) request
}{
	{"gen-forms", (*gen).form},
	{"gen-search", (*gen).search},
	{"gen-urls", (*gen).urlParams},
	{"gen-tokens", (*gen).tokens},
	{"gen-json", (*gen).jsonAPI},
	{"gen-headers", (*gen).headers},
}

type request struct {
	method, uri string
	headers     [][2]string
	body        string
}

func write(path, name string, n int, next func() request) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i := range n {
		r := next()
		var b strings.Builder
		js := func(s string) string { q, _ := json.Marshal(s); return string(q) }
		fmt.Fprintf(&b, `{"id":%s,"source":%s,"category":"other","expect":"allow","method":%s,"uri":%s,"headers":{`,
			js(fmt.Sprintf("%s#%d", name, i)), js(name+":scripts/waf/benigngen"), js(r.method), js(r.uri))
		hs := append([][2]string{{"Host", "shop.example.com"}, {"User-Agent", userAgents[i%len(userAgents)]}, {"Accept", "*/*"}}, r.headers...)
		if r.body != "" {
			hs = append(hs, [2]string{"Content-Length", fmt.Sprint(len(r.body))})
		}
		for j, h := range hs {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(js(h[0]) + ":" + js(h[1]))
		}
		b.WriteString(`},"body":` + js(r.body) + "}\n")
		w.WriteString(b.String())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

type gen struct {
	r                    *rand.Rand
	words, names, proper []string
}

func newGen(path string) (*gen, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g := &gen{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := sc.Text()
		if !isASCII(w) {
			continue
		}
		switch {
		case len(w) > 1 && w[0] >= 'A' && w[0] <= 'Z' && strings.Contains(w[:2], "'") || strings.HasPrefix(w, "Mc") || strings.HasPrefix(w, "Mac"):
			g.names = append(g.names, w) // O'Brien, D'Arcy, McDonald
		case w[0] >= 'A' && w[0] <= 'Z' && !strings.HasSuffix(w, "'s"):
			g.proper = append(g.proper, w)
		case len(w) <= 12:
			g.words = append(g.words, w) // includes don't, it's, children's
		}
	}
	if len(g.words) < 1000 || len(g.names) < 10 {
		return nil, fmt.Errorf("%s: too few words", path)
	}
	return g, sc.Err()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return s != ""
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) chance(p float64) bool   { return g.r.Float64() < p }
func (g *gen) num(lo, hi int) int      { return lo + g.r.IntN(hi-lo+1) }

var (
	firstNames = []string{"Mary", "Sean", "Aoife", "Jean-Luc", "D'Andre", "Ana María", "Zoë", "Siobhán", "Nguyen", "Ji-woo", "Mohammed", "Priya", "Anne-Marie", "O'Neal", "Lucía", "Bjørn", "John", "Li", "Fatima", "Dell", "Marc-André", "Chloé", "Tomás", "Shaquille"}
	surnames   = []string{"O'Brien", "O'Connor", "D'Angelo", "Dell'Acqua", "N'Diaye", "McDonald-Smith", "Van der Berg", "de la Cruz", "St. John", "Smith", "García Márquez", "Müller", "Al-Hassan", "Ng", "O'Sullivan", "D'Souza", "L'Estrange", "Fitzgerald", "Nakamura", "di Giorgio", "Le Blanc", "MacAllister", "Ó Súilleabháin", "Wolfe-Select", "Union", "Sleep", "Delete", "Drop", "Or", "And"}
	streets    = []string{"St. Mary's Road", "O'Connell Street", "Rue de l'Église", "King's Cross Rd", "Baker Street", "Avenue des Champs-Élysées", "1st Ave", "Martin Luther King Jr. Blvd", "Via dell'Orso", "Queen's Gate", "Union Square", "Select Ave", "Old Mill Lane", "Shepherd's Bush Green", "Chemin du Roy"}
	cities     = []string{"Coeur d'Alene", "Martha's Vineyard", "L'Aquila", "Val-d'Or", "Land O' Lakes", "St. John's", "Dublin", "Paris", "New York", "Köln", "Rio de Janeiro", "Winston-Salem", "Ho Chi Minh City", "Dun Laoghaire", "Sault Ste. Marie", "Lake Havasu City", "Union City", "Truth or Consequences"}
	units      = []string{"Apt #4B", "Suite 200", "Unit 3/12", "Flat 2, 1st floor", "P.O. Box 1234", "c/o Smith & Sons", "Bldg. C, Room 101", "#12-05", ""}
	companies  = []string{"Ben & Jerry's", "McDonald's", "AT&T", "Procter & Gamble", "O'Reilly Media", "Toys\"R\"Us", "Macy's", "Levi Strauss & Co.", "Marks & Spencer", "Dunkin'", "Yahoo!", "Re/Max", "C&A", "Select Comfort", "Union Pacific"}
	domains    = []string{"example.com", "example.org", "shop.example.net", "cdn.example.com", "www.example.co.uk", "blog.example.io", "api.example.dev", "news.example.de", "m.example.fr", "static.example.com.br", "login.example.com", "accounts.example.jp"}
	paths      = []string{"/", "/products/shoes", "/en-us/cart", "/blog/2024/05/it-s-time", "/search", "/u/@jane.doe", "/@mike_o/posts/123", "/wiki/O'Brien_(surname)", "/images/photo_01.jpg", "/docs/v2/api-reference", "/checkout/success", "/p/men's-shirts", "/category/kids/boys", "/a/b/c/index.html", "/static/js/app.min.js", "/user/settings/profile", "/oauth/callback", "/share"}
	tlds       = []string{"com", "org", "net", "io", "co.uk", "de"}
	userAgents = []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.165 Mobile Safari/537.36",
		"okhttp/4.12.0",
		"curl/8.5.0",
		"python-requests/2.32.3",
		"Go-http-client/2.0",
		"MyApp/3.4.1 (iPhone; iOS 17.5; Scale/3.00)",
	}
)

func (g *gen) first() string { return g.pick(firstNames) }
func (g *gen) last() string {
	if g.chance(0.35) {
		return g.pick(g.names)
	}
	return g.pick(surnames)
}

// text returns free text: sentences of words with the punctuation people
// type (apostrophes, quotes, parentheses, dashes, ampersands, numbers).
func (g *gen) text(min, max int) string {
	n := g.num(min, max)
	var b strings.Builder
	start := true
	for i := range n {
		w := g.pick(g.words)
		switch {
		case g.chance(0.05):
			w = g.pick(g.proper)
		case g.chance(0.03):
			w = fmt.Sprint(g.num(1, 2025))
		case g.chance(0.02):
			w = g.pick([]string{"don't", "it's", "we're", "I'm", "can't", "won't", "you'll", "they've", "o'clock", "rock 'n' roll", "5'11\"", "'90s", "ma'am", "y'all"})
		}
		if start {
			w = strings.ToUpper(w[:1]) + w[1:]
			start = false
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case g.chance(0.04):
			w = "\"" + w + "\""
		case g.chance(0.03):
			w = "(" + w + ")"
		case g.chance(0.02):
			w = "'" + w + "'"
		}
		b.WriteString(w)
		switch {
		case i == n-1:
			b.WriteString(g.pick([]string{".", "!", "?", "...", "", " :)", " :-("}))
		case g.chance(0.08):
			b.WriteString(g.pick([]string{",", ";", " -", " &", ":", " /"}))
		case g.chance(0.06):
			b.WriteString(g.pick([]string{".", "!", "?"}))
			start = true
		case g.chance(0.02):
			b.WriteString(g.pick([]string{"\n", "\r\n", "\n\n"}))
			start = true
		}
	}
	return b.String()
}

func (g *gen) email(first, last string) string {
	clean := func(s string) string {
		s = strings.ToLower(s)
		var b strings.Builder
		for _, c := range s {
			if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '\'' && g.chance(0.3) {
				b.WriteRune(c)
			}
		}
		return b.String()
	}
	sep := g.pick([]string{".", "_", "", "-", "+"})
	return clean(first) + sep + clean(last) + g.pick([]string{"", fmt.Sprint(g.num(1, 99))}) + "@" + g.pick([]string{"gmail.com", "example.com", "mail.example.org", "outlook.com", "uni.example.ac.uk"})
}

func (g *gen) phone() string {
	return g.pick([]string{
		fmt.Sprintf("+1 (%03d) %03d-%04d", g.num(200, 999), g.num(200, 999), g.num(0, 9999)),
		fmt.Sprintf("+44 20 %04d %04d", g.num(0, 9999), g.num(0, 9999)),
		fmt.Sprintf("0%d-%d-%d", g.num(10, 99), g.num(1000, 9999), g.num(1000, 9999)),
		fmt.Sprintf("%03d.%03d.%04d ext. %d", g.num(200, 999), g.num(200, 999), g.num(0, 9999), g.num(1, 999)),
	})
}

func (g *gen) password() string {
	syms := "!@#$%^&*._-?+="
	var b strings.Builder
	for range g.num(8, 16) {
		switch g.r.IntN(6) {
		case 0:
			b.WriteByte(syms[g.r.IntN(len(syms))])
		case 1:
			b.WriteByte(byte('0' + g.r.IntN(10)))
		case 2:
			b.WriteByte(byte('A' + g.r.IntN(26)))
		default:
			b.WriteByte(byte('a' + g.r.IntN(26)))
		}
	}
	if g.chance(0.2) {
		return strings.Join([]string{g.pick(g.words), g.pick(g.words), g.pick(g.words), g.pick(g.words)}, g.pick([]string{" ", "-", "."}))
	}
	return b.String()
}

func (g *gen) address() (street, city, zip string) {
	street = fmt.Sprintf("%d %s", g.num(1, 9999), g.pick(streets))
	if u := g.pick(units); u != "" && g.chance(0.5) {
		street += ", " + u
	}
	zip = g.pick([]string{fmt.Sprintf("%05d", g.num(501, 99950)), fmt.Sprintf("%05d-%04d", g.num(501, 99950), g.num(0, 9999)), "SW1A 1AA", "EC1V 9HX", "H0H 0H0", fmt.Sprintf("%d", g.num(1000, 9999))})
	return street, g.pick(cities), zip
}

// link returns an absolute URL as sites pass them in parameters: redirect
// targets, shared links, image sources, referrers, callbacks.
func (g *gen) link() string {
	scheme := g.pick([]string{"https", "https", "https", "http"})
	host := g.pick(domains)
	if g.chance(0.1) {
		host = strings.ToLower(g.pick(g.proper)) + "." + g.pick(tlds)
	}
	if g.chance(0.05) {
		host += fmt.Sprintf(":%d", g.pick2([]int{8080, 8443, 3000}))
	}
	p := g.pick(paths)
	u := scheme + "://" + host + p
	if g.chance(0.5) {
		q := url.Values{}
		for range g.num(1, 4) {
			q.Set(g.pick([]string{"id", "ref", "utm_source", "utm_campaign", "page", "lang", "q", "v", "s", "color", "size"}), g.value())
		}
		u += "?" + q.Encode()
	}
	if g.chance(0.15) {
		u += "#" + g.pick([]string{"top", "section-2", "!/home", "comments", "reviews"})
	}
	return u
}

func (g *gen) pick2(xs []int) int { return xs[g.r.IntN(len(xs))] }

func (g *gen) value() string {
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprint(g.num(1, 100000))
	case 1:
		return g.pick(g.words)
	case 2:
		return g.pick([]string{"newsletter", "google", "facebook", "spring_sale", "en-US", "fr_CA", "XL", "navy blue", "price_desc"})
	case 3:
		return g.hexID(g.num(6, 16))
	case 4:
		return g.words2()
	}
	return strings.ToLower(g.pick(g.proper))
}

func (g *gen) words2() string { return g.pick(g.words) + " " + g.pick(g.words) }

func (g *gen) hexID(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return hex.EncodeToString(b)[:n]
}

func (g *gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

func (g *gen) uuid() string {
	h := hex.EncodeToString(g.bytes(16))
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

// jwt returns a token of three base64url parts: a JOSE header, claims and
// random signature bytes (RFC 7519 §3).
func (g *gen) jwt() string {
	first, last := g.first(), g.last()
	hdr, _ := json.Marshal(map[string]string{"alg": g.pick([]string{"HS256", "RS256", "ES256"}), "typ": "JWT", "kid": g.hexID(8)})
	claims, _ := json.Marshal(map[string]any{
		"sub": g.uuid(), "name": first + " " + last, "email": g.email(first, last), "iat": 1700000000 + g.num(0, 50000000),
		"exp": 1760000000 + g.num(0, 50000000), "iss": "https://" + g.pick(domains) + "/", "aud": g.pick([]string{"api", "web", "mobile"}),
		"scope": g.pick([]string{"openid profile email", "read:orders write:orders", "admin"}),
	})
	e := base64.RawURLEncoding.EncodeToString
	return e(hdr) + "." + e(claims) + "." + e(g.bytes(g.pick2([]int{32, 64, 256})))
}

func (g *gen) b64(n int) string {
	switch g.r.IntN(3) {
	case 0:
		return base64.StdEncoding.EncodeToString(g.bytes(n))
	case 1:
		return base64.URLEncoding.EncodeToString(g.bytes(n))
	}
	return base64.RawURLEncoding.EncodeToString(g.bytes(n))
}

func form(path string, v url.Values, extra ...[2]string) request {
	return request{method: "POST", uri: path, body: v.Encode(), headers: append([][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, extra...)}
}

func (g *gen) form() request {
	first, last := g.first(), g.last()
	street, city, zip := g.address()
	v := url.Values{}
	switch g.r.IntN(4) {
	case 0: // sign-up
		v.Set("first_name", first)
		v.Set("last_name", last)
		v.Set("email", g.email(first, last))
		v.Set("password", g.password())
		v.Set("company", g.pick(companies))
		v.Set("terms", "on")
		return form("/account/register", v)
	case 1: // checkout address
		v.Set("billing[name]", first+" "+last)
		v.Set("billing[street]", street)
		v.Set("billing[city]", city)
		v.Set("billing[zip]", zip)
		v.Set("billing[phone]", g.phone())
		v.Set("shipping_same", g.pick([]string{"1", "0", "true"}))
		v.Set("notes", g.text(0, 20))
		return form("/checkout/address", v)
	case 2: // contact or review form
		v.Set("name", first+" "+last)
		v.Set("email", g.email(first, last))
		v.Set("subject", g.text(2, 8))
		v.Set("message", g.text(5, 80))
		v.Set("rating", fmt.Sprint(g.num(1, 5)))
		return form("/contact", v)
	}
	// An ASP.NET-style post back: a base64 view state beside the fields.
	v.Set("__VIEWSTATE", base64.StdEncoding.EncodeToString(g.bytes(g.num(40, 400))))
	v.Set("__EVENTVALIDATION", base64.StdEncoding.EncodeToString(g.bytes(g.num(20, 80))))
	v.Set("ctl00$Main$txtName", first+" "+last)
	v.Set("ctl00$Main$txtAddress", street+", "+city+" "+zip)
	v.Set("ctl00$Main$btnSave", "Save")
	return form("/Profile.aspx", v)
}

func (g *gen) search() request {
	q := url.Values{}
	var terms string
	switch g.r.IntN(7) {
	case 0:
		terms = g.words2()
	case 1:
		terms = "\"" + g.words2() + "\""
	case 2:
		terms = g.pick(g.words) + " " + g.pick([]string{"OR", "or", "and", "AND", "-", "+", "not"}) + " " + g.pick(g.words)
	case 3:
		terms = g.pick([]string{"site:", "inurl:", "intitle:", "filetype:"}) + g.pick([]string{"example.com", "pdf", "o'reilly", g.pick(g.words)}) + " " + g.pick(g.words)
	case 4:
		terms = g.text(2, 10)
	case 5:
		terms = g.pick(g.names) + " " + g.pick([]string{"family history", "genealogy", "obituary", "wikipedia", "net worth"})
	default:
		terms = g.pick([]string{"men's shoes size 10", "kids' toys under $20", "1/2\" copper pipe", "2x4 lumber 8'", "c++ tutorial", "c# vs java", "select comfort bed", "union jack flag", "drop leaf table", "sleep number 5", "order by phone", "where is my order?", "50% off", "#hashtag", "a & b", "what's new", "rock & roll hall of fame", "t-shirt (xl)", "1' long cable", "6\" ruler", "o'neill wetsuit", "l'oreal shampoo", "dunkin' donuts near me", "women's 5'4\" petite jeans", "script writing classes", "alert sound settings", "exec summary template", "cat 5e cable", "wget vs curl", "ls 400 engine", "bin collection days", "php developer jobs", "etc passwd meaning"})
	}
	q.Set(g.pick([]string{"q", "query", "search", "keywords", "s", "term"}), terms)
	if g.chance(0.5) {
		q.Set("page", fmt.Sprint(g.num(1, 40)))
	}
	if g.chance(0.4) {
		q.Set("sort", g.pick([]string{"price_asc", "price_desc", "relevance", "-created_at", "name,asc", "rating:desc"}))
	}
	if g.chance(0.3) {
		q.Set("filter["+g.pick([]string{"brand", "color", "size"})+"]", g.pick([]string{"Levi's", "O'Neill", "navy blue", "XL", "10.5", "Ben & Jerry's", "Dr. Martens"}))
	}
	if g.chance(0.2) {
		q.Set("price", fmt.Sprintf("%d-%d", g.num(0, 50), g.num(51, 500)))
	}
	if g.chance(0.3) {
		q.Set("utm_source", g.pick([]string{"google", "newsletter", "facebook", "t.co"}))
		q.Set("utm_campaign", g.pick([]string{"spring_sale_2024", "black-friday", "brand|exact", "retarget (v2)"}))
	}
	return request{method: "GET", uri: g.pick([]string{"/search", "/products", "/api/v1/search", "/"}) + "?" + q.Encode()}
}

func (g *gen) urlParams() request {
	q := url.Values{}
	switch g.r.IntN(6) {
	case 0:
		q.Set(g.pick([]string{"redirect", "redirect_uri", "next", "return_to", "returnUrl", "continue", "url", "goto", "target"}), g.link())
	case 1: // share and embed links
		q.Set("u", g.link())
		q.Set("title", g.text(2, 8))
		if g.chance(0.5) {
			q.Set("via", g.pick([]string{"jane_doe", "@example", "O'Brien"}))
		}
	case 2: // analytics beacons: page and referrer URLs
		q.Set("v", "2")
		q.Set("tid", "G-"+strings.ToUpper(g.hexID(10)))
		q.Set("cid", fmt.Sprintf("%d.%d", g.num(100000000, 999999999), 1700000000+g.num(0, 9999999)))
		q.Set("dl", g.link())
		q.Set("dr", g.link())
		q.Set("dt", g.text(2, 6))
		q.Set("sr", g.pick([]string{"1920x1080", "390x844", "1366x768"}))
	case 3: // OAuth authorisation request (RFC 6749 §4.1.1)
		q.Set("response_type", "code")
		q.Set("client_id", g.hexID(20))
		q.Set("redirect_uri", "https://"+g.pick(domains)+"/oauth/callback")
		q.Set("scope", g.pick([]string{"openid profile email", "read write", "user:email repo"}))
		q.Set("state", g.b64(16))
		q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(g.bytes(32)))
		q.Set("code_challenge_method", "S256")
	case 4: // image proxies and feeds
		q.Set(g.pick([]string{"src", "image", "img", "feed", "file", "path", "page", "template", "include", "document"}), g.link())
		q.Set("w", fmt.Sprint(g.num(50, 1200)))
	default: // a URL wrapped in another (double-encoded by the outer query)
		inner := url.Values{}
		inner.Set("url", g.link())
		q.Set("next", "https://"+g.pick(domains)+"/login?"+inner.Encode())
		if g.chance(0.4) {
			q.Set("email", g.email(g.first(), g.last()))
		}
	}
	return request{method: "GET", uri: g.pick([]string{"/out", "/share", "/collect", "/authorize", "/img", "/login"}) + "?" + q.Encode()}
}

func (g *gen) tokens() request {
	switch g.r.IntN(5) {
	case 0: // OAuth callback
		q := url.Values{}
		q.Set("code", g.b64(g.num(16, 48)))
		q.Set("state", g.b64(16))
		return request{method: "GET", uri: "/oauth/callback?" + q.Encode()}
	case 1: // bearer token API call
		q := url.Values{}
		q.Set("cursor", base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"id":%d,"ts":"2024-%02d-%02dT10:00:00Z"}`, g.num(1, 99999), g.num(1, 12), g.num(1, 28)))))
		q.Set("limit", fmt.Sprint(g.pick2([]int{10, 20, 50, 100})))
		return request{method: "GET", uri: "/api/v2/orders?" + q.Encode(), headers: [][2]string{{"Authorization", "Bearer " + g.jwt()}}}
	case 2: // token exchange form (RFC 6749 §4.1.3)
		v := url.Values{}
		v.Set("grant_type", g.pick([]string{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"}))
		v.Set("code", g.b64(32))
		v.Set("assertion", g.jwt())
		v.Set("client_secret", g.b64(g.num(24, 48)))
		return form("/oauth/token", v)
	case 3: // id_token in a form post (OpenID Connect form_post response mode)
		v := url.Values{}
		v.Set("id_token", g.jwt())
		v.Set("state", g.b64(g.num(12, 32)))
		return form("/auth/oidc/callback", v)
	}
	// Signed and encoded data in query parameters: upload signatures, data URIs.
	q := url.Values{}
	q.Set("X-Amz-Signature", g.hexID(64))
	q.Set("X-Amz-Credential", "AKIA"+strings.ToUpper(g.hexID(16))+"/20240101/us-east-1/s3/aws4_request")
	q.Set("policy", base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"expiration":"2024-12-01T12:00:00.000Z","conditions":[{"bucket":"uploads"},["starts-with","$key","user/%d/"]]}`, g.num(1, 9999)))))
	q.Set("sig", g.b64(g.num(20, 64)))
	return request{method: "GET", uri: "/upload/sign?" + q.Encode()}
}

func (g *gen) jsonAPI() request {
	first, last := g.first(), g.last()
	street, city, zip := g.address()
	var body any
	path := "/api/v1/"
	switch g.r.IntN(5) {
	case 0:
		path += "users"
		body = map[string]any{"user": map[string]any{"firstName": first, "lastName": last, "email": g.email(first, last),
			"address": map[string]any{"line1": street, "city": city, "postalCode": zip, "country": g.pick([]string{"US", "IE", "FR", "GB"})},
			"phone":   g.phone(), "marketingOptIn": g.chance(0.5), "tags": []string{g.pick(g.words), g.pick(g.words)}}}
	case 1:
		path += "orders"
		items := []any{}
		for range g.num(1, 4) {
			items = append(items, map[string]any{"sku": strings.ToUpper(g.hexID(8)), "name": g.pick([]string{"Men's Oxford Shirt", "Kids' 12\" Bike", "O'Neill Hoodie (L)", "USB-C cable 6'", "Ben & Jerry's Pint", "Select Grade Maple"}), "qty": g.num(1, 5), "price": float64(g.num(100, 99999)) / 100})
		}
		body = map[string]any{"items": items, "coupon": g.pick([]string{"", "SPRING24", "FREE-SHIP"}), "giftMessage": g.text(0, 25), "shipTo": first + " " + last}
	case 2:
		path += "comments"
		body = map[string]any{"postId": g.num(1, 99999), "author": first + " " + last, "body": g.text(3, 120), "replyTo": nil}
	case 3:
		path = "/graphql"
		body = map[string]any{"query": g.pick([]string{"query GetUser($id: ID!) { user(id: $id) { name email orders(first: 10) { edges { node { id total } } } } }",
			"mutation Update($input: ProfileInput!) { updateProfile(input: $input) { ok errors { field message } } }",
			"{ products(search: \"men's shoes\", first: 20) { id name price } }"}),
			"variables": map[string]any{"id": g.uuid(), "input": map[string]any{"displayName": first + " " + last, "bio": g.text(0, 30)}}}
	default:
		path += "events"
		body = []any{map[string]any{"type": "page_view", "url": g.link(), "referrer": g.link(), "ts": 1700000000000 + g.num(0, 99999999), "session": g.uuid()},
			map[string]any{"type": "search", "query": g.words2(), "results": g.num(0, 500)}}
	}
	b, _ := json.Marshal(body)
	return request{method: g.pick([]string{"POST", "POST", "PUT", "PATCH"}), uri: path, body: string(b), headers: [][2]string{{"Content-Type", "application/json"}}}
}

func (g *gen) headers() request {
	cart, _ := json.Marshal(map[string]any{"items": []any{map[string]any{"id": g.num(1, 9999), "q": g.num(1, 3)}}, "note": g.text(0, 6)})
	cookies := []string{
		fmt.Sprintf("_ga=GA1.2.%d.%d", g.num(100000000, 999999999), 1700000000+g.num(0, 9999999)),
		"_gid=GA1.2." + fmt.Sprint(g.num(100000000, 999999999)),
		"session=" + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"user_id":%d,"csrf":"%s"}`, g.num(1, 99999), g.hexID(16)))) + "." + g.b64(6) + "." + g.b64(20),
		"_app_session=" + url.QueryEscape(base64.StdEncoding.EncodeToString(g.bytes(g.num(40, 120)))) + "--" + g.hexID(40),
		"cart=" + url.QueryEscape(string(cart)),
		"consent=" + url.QueryEscape(`{"necessary":true,"analytics":`+fmt.Sprint(g.chance(0.5))+`,"ts":"2024-06-01T12:00:00Z"}`),
		"lang=" + g.pick([]string{"en-US", "fr", "de-CH", "pt_BR"}),
		"last_search=" + url.QueryEscape(g.words2()),
		"display_name=" + url.QueryEscape(g.first()+" "+g.last()),
		"XSRF-TOKEN=" + url.QueryEscape(g.b64(32)),
		"remember_me=" + g.b64(48),
	}
	g.r.Shuffle(len(cookies), func(i, j int) { cookies[i], cookies[j] = cookies[j], cookies[i] })
	h := [][2]string{
		{"Accept-Language", g.pick([]string{"en-US,en;q=0.9", "fr-CA,fr;q=0.8,en;q=0.5", "de"})},
		{"Cookie", strings.Join(cookies[:g.num(2, len(cookies))], "; ")},
		{"Referer", g.link()},
	}
	if g.chance(0.5) {
		h = append(h, [2]string{"X-Request-ID", g.uuid()})
	}
	if g.chance(0.3) {
		h = append(h, [2]string{"If-None-Match", "W/\"" + g.hexID(16) + "\""})
	}
	if g.chance(0.3) {
		h = append(h, [2]string{"X-Forwarded-For", fmt.Sprintf("203.0.113.%d, 198.51.100.%d", g.num(1, 254), g.num(1, 254))})
	}
	if g.chance(0.3) {
		h = append(h, [2]string{"X-Client-Info", fmt.Sprintf(`{"app":"shop","version":"%d.%d.%d","device":"%s"}`, g.num(1, 9), g.num(0, 20), g.num(0, 99), g.pick([]string{"iPhone15,2", "Pixel 8", "SM-S918B"}))})
	}
	return request{method: "GET", uri: g.pick(paths), headers: h}
}
