package ratelimit

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strconv"
)

// Limits on CIDR list files (blocklist, allowlist). A file beyond them is an
// error, not truncated.
const (
	// MaxCIDRListEntries is the most prefixes one list file may hold.
	MaxCIDRListEntries = 1 << 20
	// MaxCIDRListLine is the longest line, in bytes, a list file may hold.
	MaxCIDRListLine = 1024
	// MaxCIDRListErrors is how many line errors are reported before giving up.
	MaxCIDRListErrors = 20
)

// ParseCIDRList parses a list file: one CIDR prefix ("192.0.2.0/24",
// "2001:db8::/32") or bare address (taken as /32 or /128) per line; "#" starts
// a comment; blank lines are ignored. Prefixes with host bits set, zones and
// IPv4-mapped IPv6 prefixes are errors. All errors are returned joined, each
// naming its 1-based line ("line 3: ...").
func ParseCIDRList(data []byte) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var errs []error
	lineNo := 0
	for len(data) > 0 && len(errs) < MaxCIDRListErrors {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if len(line) > MaxCIDRListLine {
			errs = append(errs, fmt.Errorf("line %d: longer than %d bytes", lineNo, MaxCIDRListLine))
			continue
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		p, err := parseCIDR(string(line))
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", lineNo, err))
			continue
		}
		if len(out) >= MaxCIDRListEntries {
			errs = append(errs, fmt.Errorf("line %d: more than %d entries", lineNo, MaxCIDRListEntries))
			break
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func parseCIDR(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if bytes.IndexByte([]byte(s), '/') >= 0 {
		var err error
		p, err = netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("invalid prefix %s", strconv.Quote(s))
		}
		if p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("prefix %s has host bits set (network is %s)", strconv.Quote(s), p.Masked())
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("invalid address %s", strconv.Quote(s))
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("address %s has a zone", strconv.Quote(s))
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped prefix %s: write it as IPv4", strconv.Quote(s))
	}
	return p, nil
}

// LoadCIDRList reads and parses a list file.
func LoadCIDRList(path string) ([]netip.Prefix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: read list: %w", err)
	}
	ps, err := ParseCIDRList(data)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: %s: %w", path, err)
	}
	return ps, nil
}

// PrefixSet answers "is this address in any of these prefixes" without
// allocating: one hash set of masked prefixes per distinct prefix length.
// It is immutable and safe for concurrent use.
type PrefixSet struct {
	lens4, lens6 []int
	set          map[netip.Prefix]struct{}
	n            int
}

// NewPrefixSet builds a PrefixSet; a nil or empty slice gives an empty set.
func NewPrefixSet(prefixes []netip.Prefix) *PrefixSet {
	s := &PrefixSet{set: make(map[netip.Prefix]struct{}, len(prefixes))}
	for _, p := range prefixes {
		if !p.IsValid() {
			continue
		}
		p = p.Masked()
		if _, dup := s.set[p]; dup {
			continue
		}
		s.set[p] = struct{}{}
		if p.Addr().Is4() {
			if !slices.Contains(s.lens4, p.Bits()) {
				s.lens4 = append(s.lens4, p.Bits())
			}
		} else if !slices.Contains(s.lens6, p.Bits()) {
			s.lens6 = append(s.lens6, p.Bits())
		}
	}
	s.n = len(s.set)
	return s
}

// Len returns the number of distinct prefixes in s.
func (s *PrefixSet) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Contains reports whether a (IPv4-mapped addresses unmapped) is in s.
func (s *PrefixSet) Contains(a netip.Addr) bool {
	if s == nil || s.n == 0 || !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	lens := s.lens6
	if a.Is4() {
		lens = s.lens4
	}
	for _, b := range lens {
		p, err := a.Prefix(b)
		if err != nil {
			continue
		}
		if _, ok := s.set[p]; ok {
			return true
		}
	}
	return false
}
