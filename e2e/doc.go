// Package e2e holds edge's end-to-end tests: each starts a whole edge in-process (package edge's
// Load, NewServer and Start, on random loopback ports) and drives it only through what a client or
// an operator has — its https, http and admin listeners (HTTP/1.1, HTTP/2, HTTP/3, raw TCP and
// TLS), the admin endpoints (/metrics, /status, /reload), the access log writer of
// edge.Options, and the exported methods of edge.Server. Unit tests of the root's internals stay
// beside the code in package edge.
//
// The package has no code of its own: everything is in _test.go files, as package e2e_test. The
// shared harness (one startEdge, one client helper, one metrics parser, one Chromium finder, one
// startRedis) is in edge_test.go, client_test.go, metrics_test.go, chromium_test.go and
// fleet_test.go.
//
// What the tests need besides Go: redis-server (the fleet test starts its own on a free port),
// Debian's chromium (the status page and a real browser's post-quantum handshake), h2spec v2.2.1
// (go install github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible) and the llhttp request
// corpus at ../shared/corpora/http1 beside the repository (../../shared from this directory). A
// missing tool skips its test, except under CI (env CI, or EDGE_REQUIRE_H2SPEC for h2spec), where
// it fails; .ci/run installs all three. A missing corpus skips its test.
//
// FuzzHTTP1Pipeline is here too (fuzz/targets.txt lists it as ./e2e): it fuzzes the cleartext
// listener of a running edge.
package e2e
