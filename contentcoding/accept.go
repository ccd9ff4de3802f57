package contentcoding

import "edge/internal/httpfield"

// Coding is a content coding edge can produce (RFC 9110 §8.4.1).
type Coding uint8

// The codings, Identity first: the zero Coding sends the representation as it is.
const (
	Identity Coding = iota
	Gzip
	Brotli
	Zstd
	numCodings
)

var codingNames = [numCodings]string{"identity", "gzip", "br", "zstd"}

// String returns the coding's token as it appears in Content-Encoding: "identity", "gzip", "br",
// "zstd".
func (c Coding) String() string {
	if c < numCodings {
		return codingNames[c]
	}
	return "invalid"
}

// ParseCoding returns the coding a configuration names: "zstd", "br" or "gzip". Identity is not a
// coding one enables.
func ParseCoding(name string) (Coding, bool) {
	for c := Gzip; c < numCodings; c++ {
		if name == codingNames[c] {
			return c, true
		}
	}
	return Identity, false
}

// MaxAcceptElements bounds how many elements of Accept-Encoding (over all its field lines) are
// read: browsers send four or five, and a client sending thousands gets the same answer for the
// first 32 as a client sending only those, in time proportional to them.
const MaxAcceptElements = 32

// Accepted is what a client's Accept-Encoding says about the codings edge can produce: the
// weight of each, in thousandths (RFC 9110 §12.4.2 qvalues have three decimals), or -1 when it is
// not listed; star is the weight of "*".
type Accepted struct {
	q    [numCodings]int16
	star int16
}

// ParseAcceptEncoding reads the Accept-Encoding field lines of a request (as in
// http.Header["Accept-Encoding"]) without allocating. A coding listed more than once keeps its
// first weight; "x-gzip" is gzip (RFC 9110 §8.4.1.3). An element with a malformed weight, or
// followed by anything but a comma, is ignored; so is anything after MaxAcceptElements elements.
func ParseAcceptEncoding(values []string) Accepted {
	a := Accepted{q: [numCodings]int16{-1, -1, -1, -1}, star: -1}
	n := 0
	for _, s := range values {
		i := 0
		for n < MaxAcceptElements {
			for i < len(s) && (s[i] == ',' || s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i >= len(s) {
				break
			}
			n++
			start := i
			for i < len(s) && httpfield.IsTokenChar(s[i]) {
				i++
			}
			name := s[start:i]
			q, ok := 1000, name != ""
			i = skipOWS(s, i)
			for ok && i < len(s) && s[i] == ';' {
				i = skipOWS(s, i+1)
				ps := i
				for i < len(s) && httpfield.IsTokenChar(s[i]) {
					i++
				}
				pname := s[ps:i]
				if i >= len(s) || s[i] != '=' || pname == "" {
					ok = false
					break
				}
				i++
				var value string
				var quoted bool
				value, quoted, i, ok = paramValue(s, i)
				if ok && (pname == "q" || pname == "Q") {
					if quoted {
						ok = false
					} else {
						q, ok = httpfield.ParseQ(value)
					}
				}
				i = skipOWS(s, i)
			}
			if i < len(s) && s[i] != ',' {
				ok = false
				i = skipElement(s, i)
			}
			if ok {
				a.record(name, int16(q))
			}
		}
	}
	return a
}

func (a *Accepted) record(name string, q int16) {
	slot := &a.star
	switch {
	case name == "*":
	case httpfield.EqualFold(name, "gzip") || httpfield.EqualFold(name, "x-gzip"):
		slot = &a.q[Gzip]
	case httpfield.EqualFold(name, "br"):
		slot = &a.q[Brotli]
	case httpfield.EqualFold(name, "zstd"):
		slot = &a.q[Zstd]
	case httpfield.EqualFold(name, "identity"):
		slot = &a.q[Identity]
	default:
		return
	}
	if *slot < 0 {
		*slot = q
	}
}

// Q returns the weight, in thousandths, the client gives coding c: its own entry, else that of
// "*", else 0 (not acceptable). Identity without either is acceptable by default (RFC 9110
// §12.5.3) but has no weight: Q reports -1 for it, so that it never outranks a listed coding.
func (a *Accepted) Q(c Coding) int {
	if c >= numCodings {
		return 0
	}
	if q := a.q[c]; q >= 0 {
		return int(q)
	}
	if a.star >= 0 {
		return int(a.star)
	}
	if c == Identity {
		return -1
	}
	return 0
}

// Choose returns the coding of offer (the server's order of preference) with the highest weight
// above zero, the earlier one on a tie, or Identity when none is acceptable or the client weighs
// identity above them all.
func (a *Accepted) Choose(offer []Coding) Coding {
	best, bestQ := Identity, 0
	for _, c := range offer {
		if c == Identity {
			continue
		}
		if q := a.Q(c); q > bestQ {
			best, bestQ = c, q
		}
	}
	if best != Identity && a.Q(Identity) > bestQ {
		return Identity
	}
	return best
}

// Negotiate is ParseAcceptEncoding followed by Choose.
func Negotiate(values []string, offer []Coding) Coding {
	a := ParseAcceptEncoding(values)
	return a.Choose(offer)
}

// paramValue reads a parameter value at s[i:]: a token or a quoted-string (RFC 9110 §5.6.4). It
// returns the value (the raw quoted form for a quoted-string), whether it was quoted, the index
// after it, and false when it is malformed.
func paramValue(s string, i int) (string, bool, int, bool) {
	if i < len(s) && s[i] == '"' {
		start := i
		i++
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case '"':
				return s[start : i+1], true, i + 1, true
			}
			i++
		}
		return "", true, len(s), false
	}
	start := i
	for i < len(s) && httpfield.IsTokenChar(s[i]) {
		i++
	}
	return s[start:i], false, i, i > start
}

// skipElement moves past a malformed element to the comma that ends it, stepping over
// quoted-strings so a comma inside one does not start a new element.
func skipElement(s string, i int) int {
	for i < len(s) && s[i] != ',' {
		if s[i] == '"' {
			_, _, i, _ = paramValue(s, i)
			continue
		}
		i++
	}
	return i
}

func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
