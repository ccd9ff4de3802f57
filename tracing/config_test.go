package tracing

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		mod      func(*Config)
		wantErr  string // fragment of the one error, "" for none
		wantWarn string
	}{
		{"defaults", func(*Config) {}, "", ""},
		{"enabled", func(c *Config) { c.Enabled = true }, "", ""},
		{"ratio above 1", func(c *Config) { c.SampleRatio = 1.5 }, "sample_ratio: 1.5 is not between 0 and 1", ""},
		{"negative ratio", func(c *Config) { c.SampleRatio = -0.1 }, "sample_ratio:", ""},
		{"ratio 0 when on", func(c *Config) { c.Enabled, c.SampleRatio = true, 0 }, "", "sample_ratio: 0"},
		{"no service name", func(c *Config) { c.ServiceName = "" }, "service_name: empty", ""},
		{"endpoint not http", func(c *Config) { c.Endpoint = "grpc://collector:4317" }, "endpoint:", ""},
		{"endpoint without host", func(c *Config) { c.Endpoint = "http:///v1/traces" }, "has no host", ""},
		{"no endpoint when on", func(c *Config) { c.Enabled, c.Endpoint = true, "" }, "endpoint: empty", ""},
		{"no endpoint when off", func(c *Config) { c.Endpoint = "" }, "", ""},
		{"bad header name", func(c *Config) { c.Headers = map[string]string{"api key": "x"} }, "headers:", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mod(&c)
			errs, warns := c.Validate()
			if tc.wantErr == "" && len(errs) > 0 || tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.wantErr)) {
				t.Errorf("errors %q, want %q", errs, tc.wantErr)
			}
			if tc.wantWarn == "" && len(warns) > 0 || tc.wantWarn != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.wantWarn)) {
				t.Errorf("warnings %q, want %q", warns, tc.wantWarn)
			}
		})
	}
}

// TestNewOff: tracing off builds nothing.
func TestNewOff(t *testing.T) {
	tr, err := New(DefaultConfig(), "dev")
	if tr != nil || err != nil {
		t.Errorf("got %v, %v; want nil, nil", tr, err)
	}
}
