package tracing

// Defaults of the [tracing] keys.
const (
	// DefaultEnabled is enabled: off.
	DefaultEnabled = false
	// DefaultEndpoint is endpoint: an OpenTelemetry Collector on this host, OTLP/HTTP port 4318.
	DefaultEndpoint = "http://127.0.0.1:4318/v1/traces"
	// DefaultSampleRatio is sample_ratio: every new trace.
	DefaultSampleRatio = 1.0
	// DefaultServiceName is service_name.
	DefaultServiceName = "edge"
)

// DefaultConfig returns the section with every default set (headers: none).
func DefaultConfig() Config {
	return Config{Enabled: DefaultEnabled, Endpoint: DefaultEndpoint, SampleRatio: DefaultSampleRatio, ServiceName: DefaultServiceName}
}
