package routes

import (
	"slices"
	"strconv"
	"strings"
)

// Lint returns warnings for a route list that compiles but does not do what it says, each as
// "routes[i]: message": a route whose conditions are identical to an earlier route's never
// matches (ties go to configuration order). The root shows them under --validate.
func Lint(rs []Route) []string {
	var warns []string
	first := map[string]int{}
	for i := range rs {
		key, ok := conditionKey(&rs[i])
		if !ok {
			continue
		}
		if j, dup := first[key]; dup {
			warns = append(warns, "routes["+strconv.Itoa(i)+"]: never matches: routes["+strconv.Itoa(j)+
				"] ("+quote(rs[j].Name)+") has the same conditions and comes first")
			continue
		}
		first[key] = i
	}
	return warns
}

// conditionKey is a canonical description of a route's match conditions; ok is false when the
// route does not compile (Compile reports it).
func conditionKey(r *Route) (string, bool) {
	var hosts []string
	for _, h := range r.Host {
		ch, msg := compileHost(h)
		if msg != "" {
			return "", false
		}
		hosts = append(hosts, ch)
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	methods := slices.Clone(r.Methods)
	slices.Sort(methods)
	methods = slices.Compact(methods)
	var headers []string
	for _, h := range r.Headers {
		v := "present"
		if h.Value != nil {
			v = "=" + *h.Value
		}
		headers = append(headers, strings.ToLower(h.Name)+v)
	}
	slices.Sort(headers)
	headers = slices.Compact(headers)
	countries := slices.Clone(r.Countries)
	slices.Sort(countries)
	countries = slices.Compact(countries)
	var asns []string
	for _, n := range r.ASNs {
		asns = append(asns, strconv.FormatUint(uint64(n), 10))
	}
	slices.Sort(asns)
	asns = slices.Compact(asns)
	var b strings.Builder
	for _, part := range [][]string{hosts, {r.Path, r.PathPrefix, r.PathRegex}, methods, headers, countries, asns} {
		for _, s := range part {
			b.WriteString(strconv.Quote(s))
			b.WriteByte(',')
		}
		b.WriteByte('|')
	}
	return b.String(), true
}
