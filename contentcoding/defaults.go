package contentcoding

// Defaults of the [compression] section. The levels are where each coding's cost per KiB stops
// buying much ratio on HTML, JSON and JavaScript (figures: bench/results/latest.md, "Response
// compression"; `go test -bench Encode ./contentcoding`).
const (
	// DefaultEnabled is compression.enabled.
	DefaultEnabled = true
	// DefaultMinSizeBytes is compression.min_size_bytes: below about a kilobyte a response fits in
	// one packet either way, and the coding's framing eats much of the saving.
	DefaultMinSizeBytes = 1024
	// DefaultGzipLevel is compression.gzip_level.
	DefaultGzipLevel = 5
	// DefaultBrotliLevel is compression.brotli_level.
	DefaultBrotliLevel = 4
	// DefaultZstdLevel is compression.zstd_level (the encoder's "default", about zstd -3).
	DefaultZstdLevel = 2
)

// DefaultAlgorithms is compression.algorithms: zstd first (the cheapest per byte for its ratio),
// then brotli, then gzip, which every client supports.
var DefaultAlgorithms = []string{"zstd", "br", "gzip"}

// DefaultTypes is compression.types: text, JSON, JavaScript, XML, SVG, WebAssembly, web
// manifests and the uncompressed font formats. Images, audio, video, archives and WOFF2 fonts
// are compressed already.
var DefaultTypes = []string{
	"text/*",
	"application/json", "application/*+json", "application/x-ndjson",
	"application/javascript", "application/x-javascript", "application/ecmascript",
	"application/xml", "application/*+xml",
	"application/wasm",
	"application/graphql",
	"application/yaml",
	"image/svg+xml", "image/x-icon", "image/vnd.microsoft.icon", "image/bmp",
	"font/ttf", "font/otf", "application/vnd.ms-fontobject",
}

// DefaultConfig returns the [compression] section's defaults.
func DefaultConfig() Config {
	return Config{
		Enabled:      DefaultEnabled,
		Algorithms:   append([]string(nil), DefaultAlgorithms...),
		MinSizeBytes: DefaultMinSizeBytes,
		Types:        append([]string(nil), DefaultTypes...),
		GzipLevel:    DefaultGzipLevel,
		BrotliLevel:  DefaultBrotliLevel,
		ZstdLevel:    DefaultZstdLevel,
	}
}
