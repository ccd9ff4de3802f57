// Command h3load is a closed-loop HTTP/3 load generator for the bench
// harness: h2load (nghttp2 1.52) has no HTTP/3, so edge and Caddy are driven
// over QUIC by this quic-go client instead.
//
// It opens -c QUIC connections, keeps -m requests outstanding on each (a new
// request starts when one completes), runs for -d (or until -n requests have
// completed), and prints one JSON object with the counts on stdout. Its own
// CPU time is measured by the caller from the process's rusage.
//
// It is a bench tool, not part of edge: it sits on the client side of the
// request path. Its workers, one per outstanding request, share only atomic
// counters and the first error, recorded once.
package main
