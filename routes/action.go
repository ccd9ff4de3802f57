package routes

import (
	"net/url"
	"strconv"
	"strings"
)

// compileAction checks that exactly one action is set and compiles it.
func compileAction(r *Route, c *Compiled, key string, backendExists func(string) bool, errs []string) []string {
	var got []string
	if r.Backend != "" {
		got = append(got, "backend")
	}
	if r.Redirect != nil {
		got = append(got, "redirect")
	}
	if r.Respond != nil {
		got = append(got, "respond")
	}
	switch len(got) {
	case 0:
		return append(errs, key+": one of backend, redirect or respond is required")
	case 1:
	default:
		return append(errs, key+": backend, redirect and respond are exclusive, got "+strings.Join(got, " and "))
	}
	switch {
	case r.Backend != "":
		c.Action, c.Backend = ActionBackend, r.Backend
		if backendExists != nil && !backendExists(r.Backend) {
			errs = append(errs, key+".backend: no backend named "+quote(r.Backend))
		}
	case r.Redirect != nil:
		errs = compileRedirect(r.Redirect, c, key+".redirect", errs)
	default:
		errs = compileRespond(r.Respond, c, key+".respond", errs)
	}
	return errs
}

func compileRedirect(rd *Redirect, c *Compiled, key string, errs []string) []string {
	c.Action, c.Status = ActionRedirect, rd.Status
	switch rd.Status {
	case 0:
		c.Status = DefaultRedirectStatus
	case 301, 302, 303, 307, 308:
	default:
		errs = append(errs, key+".status: must be 301, 302, 303, 307 or 308, got "+strconv.Itoa(rd.Status))
	}
	loc := rd.Location
	if msg := checkLocation(loc, rd.KeepPathQuery); msg != "" {
		return append(errs, key+".location: "+msg)
	}
	if rd.KeepPathQuery {
		loc = strings.TrimSuffix(loc, "/")
	}
	c.location = strings.Split(loc, "{host}")
	c.hostInLoc = len(c.location) > 1
	c.keepPath = rd.KeepPathQuery
	return errs
}

func checkLocation(loc string, keep bool) string {
	if loc == "" {
		return "required"
	}
	for i := 0; i < len(loc); i++ {
		if loc[i] <= ' ' || loc[i] >= 0x7F {
			return "has a control, space or non-ASCII byte; percent-encode it"
		}
	}
	probe := strings.ReplaceAll(loc, "{host}", "example.com")
	if strings.ContainsAny(probe, "{}") {
		return "the only placeholder is {host}, got " + quote(loc)
	}
	u, err := url.Parse(probe)
	if err != nil {
		return "invalid URL " + quote(loc)
	}
	switch {
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(probe, "/") && !strings.HasPrefix(probe, "//"):
	case (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
	default:
		return "must be an absolute http(s) URL or a path starting with a single '/', got " + quote(loc)
	}
	if keep && (u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(probe, "?#")) {
		return "keep_path_query needs a location without query or fragment, got " + quote(loc)
	}
	return ""
}

func compileRespond(rp *Respond, c *Compiled, key string, errs []string) []string {
	c.Action, c.Status, c.Body, c.ContentType = ActionRespond, rp.Status, rp.Body, rp.ContentType
	if rp.Status == 0 {
		c.Status = DefaultRespondStatus
	} else if rp.Status < 200 || rp.Status > 599 {
		errs = append(errs, key+".status: must be 200-599, got "+strconv.Itoa(rp.Status))
	}
	if (c.Status == 204 || c.Status == 304) && rp.Body != "" {
		errs = append(errs, key+".body: status "+strconv.Itoa(c.Status)+" has no body")
	}
	if len(rp.Body) > MaxRespondBodyBytes {
		errs = append(errs, key+".body: longer than "+strconv.Itoa(MaxRespondBodyBytes)+" bytes")
	}
	if c.ContentType == "" {
		c.ContentType = DefaultRespondContentType
	} else if !validHeaderValue(c.ContentType) {
		errs = append(errs, key+".content_type: has CR, LF or NUL")
	}
	return errs
}
