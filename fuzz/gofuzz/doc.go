// Package gofuzz holds go-fuzz / OSS-Fuzz style entry points, `func FuzzXxx(data []byte) int`, for
// the parsers of edge that read untrusted bytes: the TLS ClientHello, WAF rule files and WAF request
// inspection, the canonical request path, the configuration loader, CIDR block/allow lists, the
// client IP from X-Forwarded-For / Forwarded, and PROXY protocol v2 headers.
//
// Every entry point is built only with the gofuzz build tag, so `go build ./...` and `go vet ./...`
// see this file alone. Build one with go-fuzz (`go-fuzz-build -func FuzzClientHello edge/fuzz/gofuzz`)
// or OSS-Fuzz's compile_go_fuzzer (`compile_go_fuzzer edge/fuzz/gofuzz FuzzClientHello clienthello
// gofuzz`); fuzz/README.md has the commands. The native `go test -fuzz` targets beside each parser
// (listed in fuzz/targets.txt) remain the primary fuzzing; these entry points assert the same kind of
// properties and panic when one fails, which both engines report as a crash.
//
// Return values follow go-fuzz: 1 when the input parsed (worth keeping in the corpus), 0 when it was
// rejected, -1 when it must not be added to the corpus.
package gofuzz
