package edge

import (
	"fmt"
)

// Addrs is a listener's addresses. In TOML it is one address or a list of them:
//
//	https = "0.0.0.0:443"
//	https = ["0.0.0.0:443", "[::]:443"]
//
// An empty string or list disables the listener. An IPv6 address binds IPv6 only, an IPv4 address
// IPv4 only, so "0.0.0.0:443" and "[::]:443" are two sockets side by side; an empty host (":443")
// binds both families on one socket.
type Addrs []string

// UnmarshalTOML accepts a string or an array of strings.
func (a *Addrs) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		if v == "" {
			*a = nil
		} else {
			*a = Addrs{v}
		}
		return nil
	case []any:
		out := make(Addrs, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("incompatible types: element %d is %s, want a string \"host:port\"", i, tomlType(e))
			}
			out = append(out, s)
		}
		*a = out
		return nil
	}
	return fmt.Errorf("incompatible types: TOML value has type %s; want an address \"host:port\" or a list of them", tomlType(v))
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v.(type) {
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "bool"
	case map[string]any:
		return "table"
	case []any:
		return "array"
	case string:
		return "string"
	}
	return "datetime"
}

// First returns the first address, or "".
func (a Addrs) First() string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}
