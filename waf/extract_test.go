package waf

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestBodyParsers checks which values each body parser yields.
func TestBodyParsers(t *testing.T) {
	rs := testRules(t, `
[[rule]]
id = "GEN-001"
category = "gen"
description = "marker in any argument"
targets = ["args"]
transforms = []
literals = ["evil"]
score = 5
paranoia = 1

[[rule]]
id = "GEN-002"
category = "gen"
description = "marker in argument names"
targets = ["args_names"]
transforms = []
literals = ["evil"]
score = 5
paranoia = 1

[[rule]]
id = "GEN-003"
category = "gen"
description = "marker in a file name"
targets = ["files"]
transforms = []
literals = ["evil"]
score = 5
paranoia = 1

[[rule]]
id = "GEN-004"
category = "gen"
description = "graphql"
targets = ["graphql"]
transforms = []
literals = ["__schema"]
score = 5
paranoia = 1

[[rule]]
id = "GEN-005"
category = "gen"
description = "xml"
targets = ["xml"]
transforms = []
literals = ["<!ENTITY"]
score = 5
paranoia = 1
`)
	p := testPolicy(t, PolicyConfig{Mode: "block"})
	mp := "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nfine\r\n--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"evil.php\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nsome evil text\r\n--XyZ--\r\n"
	tests := []struct {
		name, path, ctype, body, want string
	}{
		{"form value", "/p", "application/x-www-form-urlencoded", "a=1&b=%65vil", "GEN-001:form:b"},
		{"form name", "/p", "application/x-www-form-urlencoded", "evil=1", "GEN-002:form_name"},
		{"json nested value", "/p", "application/json", `{"a":{"b":[1,{"c":"\u0065vil"}]}}`, "GEN-001:json:c"},
		{"json key", "/p", "application/json", `{"a":{"evil":1}}`, "GEN-002:json_key"},
		{"multipart", "/p", "multipart/form-data; boundary=XyZ", mp, "GEN-003:filename:f,GEN-001:multipart:b"},
		{"sniffed json", "/p", "", `{"x":"evil"}`, "GEN-001:json:x"},
		{"graphql json", "/graphql", "application/json", `{"query":"{ __schema { types { name } } }"}`, "GEN-004:graphql:query"},
		{"xml", "/p", "application/xml", `<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>`, "GEN-005:xml"},
		{"malformed json", "/p", "application/json", `{"a": "evil`, "GEN-001:json:a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := rs.Evaluate(postRequest(tc.path, tc.ctype, tc.body), p)
			var got []string
			for _, m := range v.Matches {
				got = append(got, m.RuleID+":"+m.Target)
			}
			if g := strings.Join(got, ","); g != tc.want {
				t.Errorf("got %q, want %q", g, tc.want)
			}
		})
	}
}

// FuzzBodyParsers: JSON, multipart and form parsers never panic, never
// produce more than max_values values and only yield slices of bounded size;
// form decoding agrees with formDecodeRef.
func FuzzBodyParsers(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\u0041"}],"d":true}`), "application/json")
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"x\"; filename=\"y\"\r\n\r\nz\r\n--b--"), "multipart/form-data; boundary=b")
	f.Add([]byte("a=1&b=%zz&c"), "application/x-www-form-urlencoded")
	f.Add([]byte(strings.Repeat("[", 100)), "application/json")
	rs := testRules(f, policyRules)
	p := &Policy{Mode: ModeBlock, Paranoia: 4, Threshold: 5, BodyLimitBytes: 1 << 12, MaxValues: 50}
	f.Fuzz(func(t *testing.T, body []byte, ctype string) {
		st := rs.getState()
		defer rs.putState(st)
		st.req = postRequest("/p", ctype, string(body))
		st.pol = p
		if got, want := st.formDecode(body), formDecodeRef(body); !bytes.Equal(got, want) {
			t.Fatalf("formDecode(%q) = %q, want %q", body, got, want)
		}
		st.extract()
		if len(st.values) > p.MaxValues {
			t.Fatalf("got %d values, limit %d", len(st.values), p.MaxValues)
		}
		for _, v := range st.values {
			if len(v.data) > len(body)+len(ctype)+64 || len(v.name) > len(body)+64 {
				t.Fatalf("value larger than its input: %d bytes", len(v.data))
			}
		}
	})
}

// formDecodeRef is form decoding spelled out: '+' is a space, %XX a byte,
// anything else (a '%' without two hex digits) itself.
func formDecodeRef(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '+':
			out = append(out, ' ')
		case b[i] == '%' && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]):
			v, _ := strconv.ParseUint(string(b[i+1:i+3]), 16, 8)
			out = append(out, byte(v))
			i += 2
		default:
			out = append(out, b[i])
		}
	}
	return out
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func TestFormDecode(t *testing.T) {
	rs := testRules(t, policyRules)
	st := rs.getState()
	defer rs.putState(st)
	for _, in := range []string{"", "a+b", "%41%42", "100%", "%4", "%zz", "%%41", "+%2B+", "a%2", "%e9t%C3%A9"} {
		if got, want := st.formDecode([]byte(in)), formDecodeRef([]byte(in)); !bytes.Equal(got, want) {
			t.Errorf("formDecode(%q) = %q, want %q", in, got, want)
		}
	}
}
