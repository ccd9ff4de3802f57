package routes

import (
	"cmp"
	"net/textproto"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Compile validates rs and builds the route table. backendExists reports whether a
// `[backends.NAME]` pool exists (nil skips that check). It returns every problem found, each as
// "routes[i].key: message"; the table is nil when there are errors.
func Compile(rs []Route, backendExists func(string) bool) (*Table, []string) {
	var errs []string
	t := &Table{exact: map[string]*bucket{}, wild: map[string]*bucket{}}
	firstByName := map[string]int{}
	for i := range rs {
		key := "routes[" + strconv.Itoa(i) + "]"
		c, hosts, es := compileRoute(&rs[i], i, key, backendExists)
		errs = append(errs, es...)
		if rs[i].Name != "" {
			if j, dup := firstByName[rs[i].Name]; dup {
				errs = append(errs, key+".name: duplicate route name "+quote(rs[i].Name)+
					" (first at routes["+strconv.Itoa(j)+"])")
			} else {
				firstByName[rs[i].Name] = i
			}
		}
		if len(es) > 0 {
			continue
		}
		c.Hosts = hosts
		t.routes = append(t.routes, c)
		if len(hosts) == 0 {
			t.any = t.any.add(c)
			continue
		}
		for _, h := range hosts {
			if suffix, ok := strings.CutPrefix(h, "*."); ok {
				t.wild[suffix] = t.wild[suffix].add(c)
			} else {
				t.exact[h] = t.exact[h].add(c)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, b := range t.exact {
		b.sort()
	}
	for _, b := range t.wild {
		b.sort()
	}
	t.any.sort()
	return t, nil
}

func (b *bucket) add(c *Compiled) *bucket {
	if b == nil {
		b = &bucket{exact: map[string][]*Compiled{}}
	}
	switch c.pathKind {
	case pathExact:
		b.exact[c.path] = append(b.exact[c.path], c)
	case pathPrefix:
		b.prefix = append(b.prefix, c)
	case pathRegex:
		b.regex = append(b.regex, c)
	default:
		b.all = append(b.all, c)
	}
	return b
}

// sort puts each list in priority order: longer prefix, then more conditions, then configuration
// order.
func (b *bucket) sort() {
	if b == nil {
		return
	}
	byConds := func(x, y *Compiled) int {
		return cmp.Or(cmp.Compare(y.specificity, x.specificity), cmp.Compare(x.Index, y.Index))
	}
	for _, l := range b.exact {
		slices.SortStableFunc(l, byConds)
	}
	slices.SortStableFunc(b.prefix, func(x, y *Compiled) int {
		return cmp.Or(cmp.Compare(len(y.path), len(x.path)), byConds(x, y))
	})
	slices.SortStableFunc(b.regex, byConds)
	slices.SortStableFunc(b.all, byConds)
}

// compileRoute validates one route; hosts are canonical exact hosts and "*.suffix" wildcards.
func compileRoute(r *Route, idx int, key string, backendExists func(string) bool) (*Compiled, []string, []string) {
	var errs []string
	bad := func(sub, msg string) { errs = append(errs, key+sub+": "+msg) }
	c := &Compiled{Name: r.Name, Index: idx}

	switch {
	case r.Name == "":
		bad(".name", "required")
	case len(r.Name) > MaxNameBytes || !validName(r.Name):
		bad(".name", "must be 1-64 letters, digits, '-', '_' or '.', got "+quote(r.Name))
	}

	var hosts []string
	for i, h := range r.Host {
		hk := ".host[" + strconv.Itoa(i) + "]"
		ch, msg := compileHost(h)
		if msg != "" {
			bad(hk, msg)
			continue
		}
		if !slices.Contains(hosts, ch) {
			hosts = append(hosts, ch)
		}
	}

	errs = compilePath(r, c, key, errs)

	for i, m := range r.Methods {
		if !validToken(m) {
			bad(".methods["+strconv.Itoa(i)+"]", "invalid method "+quote(m))
			continue
		}
		if !slices.Contains(c.methods, m) {
			c.methods = append(c.methods, m)
		}
	}
	if len(c.methods) > 0 {
		c.specificity++
	}
	for i, hm := range r.Headers {
		hk := ".headers[" + strconv.Itoa(i) + "]"
		if !validToken(hm.Name) {
			bad(hk+".name", "invalid header name "+quote(hm.Name))
			continue
		}
		hc := headerCond{name: textproto.CanonicalMIMEHeaderKey(hm.Name)}
		if hm.Value != nil {
			if !validHeaderValue(*hm.Value) {
				bad(hk+".value", "has CR, LF or NUL")
				continue
			}
			hc.value, hc.hasValue = *hm.Value, true
		}
		c.headers = append(c.headers, hc)
		c.specificity++
	}

	for i, cc := range r.Countries {
		if !validCountry(cc) {
			bad(".countries["+strconv.Itoa(i)+"]", "must be an ISO 3166-1 alpha-2 code in upper case (\"DE\"), got "+quote(cc))
			continue
		}
		if !slices.Contains(c.countries, cc) {
			c.countries = append(c.countries, cc)
		}
	}
	if len(c.countries) > 0 {
		c.specificity++
	}
	for i, n := range r.ASNs {
		if n == 0 {
			bad(".asns["+strconv.Itoa(i)+"]", "must be an autonomous system number (1-4294967295), got 0")
			continue
		}
		if !slices.Contains(c.asns, n) {
			c.asns = append(c.asns, n)
		}
	}
	if len(c.asns) > 0 {
		c.specificity++
	}

	errs = compileAction(r, c, key, backendExists, errs)

	c.RequestHeaders, errs = compileHeaderOps(r.RequestHeaders, key+".request_headers", errs)
	c.ResponseHeaders, errs = compileHeaderOps(r.ResponseHeaders, key+".response_headers", errs)

	switch {
	case r.TimeoutMS < 0:
		bad(".timeout_ms", "must be >= 0 (0 uses the server default), got "+strconv.FormatInt(r.TimeoutMS, 10))
	case r.TimeoutMS > int64(24*time.Hour/time.Millisecond):
		bad(".timeout_ms", "must be at most 86400000 (24h), got "+strconv.FormatInt(r.TimeoutMS, 10))
	default:
		c.Timeout = time.Duration(r.TimeoutMS) * time.Millisecond
	}
	if r.MaxBodyBytes < 0 {
		bad(".max_body_bytes", "must be >= 0 (0 uses the server default), got "+strconv.FormatInt(r.MaxBodyBytes, 10))
	}
	c.MaxBodyBytes = r.MaxBodyBytes
	return c, hosts, errs
}

// validCountry reports whether s is two upper-case ASCII letters.
func validCountry(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return s != ""
}

// compileHost returns the canonical form of a host entry or a message.
func compileHost(h string) (string, string) {
	name := h
	wild := false
	if s, ok := strings.CutPrefix(h, "*."); ok {
		name, wild = s, true
	}
	if strings.ContainsAny(name, "*") {
		return "", "wildcard must be a leading \"*.\" label, got " + quote(h)
	}
	if name == "" {
		return "", "empty host (omit host to match any host)"
	}
	if strings.Contains(name, ":") && !strings.HasPrefix(name, "[") || strings.Contains(name, "]:") {
		return "", "host must not have a port, got " + quote(h)
	}
	ch, err := CanonicalHost(name)
	if err != nil {
		return "", "invalid host " + quote(h)
	}
	if wild {
		if ch[0] == '[' {
			return "", "wildcard of an IP literal, got " + quote(h)
		}
		return "*." + ch, ""
	}
	return ch, ""
}

func compilePath(r *Route, c *Compiled, key string, errs []string) []string {
	n := 0
	for _, s := range []string{r.Path, r.PathPrefix, r.PathRegex} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return append(errs, key+": path, path_prefix and path_regex are exclusive")
	}
	canon := func(sub, p string) bool {
		cp, err := CanonicalPath(p, PathPreserve)
		switch {
		case p[0] != '/':
			errs = append(errs, key+sub+": must start with '/', got "+quote(p))
		case err != nil:
			errs = append(errs, key+sub+": invalid path "+quote(p))
		case cp != p:
			errs = append(errs, key+sub+": not canonical, requests never match "+quote(p)+"; use "+quote(cp))
		default:
			return true
		}
		return false
	}
	switch {
	case r.Path != "":
		if canon(".path", r.Path) {
			c.pathKind, c.path = pathExact, r.Path
		}
	case r.PathPrefix != "":
		if canon(".path_prefix", r.PathPrefix) {
			c.pathKind, c.path = pathPrefix, r.PathPrefix
		}
	case r.PathRegex != "":
		re, msg := compileRegex(r.PathRegex)
		if msg != "" {
			return append(errs, key+".path_regex: "+msg)
		}
		c.pathKind, c.re = pathRegex, re
	}
	return errs
}

// compileRegex compiles an RE2 expression within MaxRegexBytes and MaxRegexInsts.
func compileRegex(src string) (*regexp.Regexp, string) {
	if len(src) > MaxRegexBytes {
		return nil, "longer than " + strconv.Itoa(MaxRegexBytes) + " bytes"
	}
	sre, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err.Error()
	}
	prog, err := syntax.Compile(sre.Simplify())
	if err != nil {
		return nil, err.Error()
	}
	if len(prog.Inst) > MaxRegexInsts {
		return nil, "compiles to " + strconv.Itoa(len(prog.Inst)) + " instructions, more than " + strconv.Itoa(MaxRegexInsts)
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err.Error()
	}
	return re, ""
}
