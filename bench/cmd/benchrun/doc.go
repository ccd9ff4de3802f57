// Command benchrun is the bench harness behind `bench/run.sh` (and `make
// bench`): it measures edge against HAProxy, nginx and Caddy on one machine
// and writes bench/results/latest.md, latest.svg and the raw samples.
//
// It generates one ECDSA P-256 certificate for every arm, starts a shared
// nginx origin serving fixed bodies from memory, starts every arm (edge lean,
// edge full, HAProxy, nginx, Caddy: one worker or thread each, keep-alive to
// the origin, no access logs, TLS 1.3 with TLS_AES_128_GCM_SHA256), pins the
// proxies to CPU 0 and the load generators and origin to CPU 1, checks the
// guards, and then measures proxy CPU time per request from /proc/PID/stat
// deltas, arms interleaved and rotated every round. Every figure is also
// reported as edge ÷ peer computed within one round, and the median of the
// rounds is published. See bench/README.md for how to read the output.
package main
