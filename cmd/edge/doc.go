// Command edge is the security edge terminator. See the repository README for a tour.
//
//	edge [--config FILE]                      run (default: ./edge.toml, else the built-in config)
//	edge --validate [--config FILE] [--json]  check a config and everything it points to
//	edge --version
//	edge fingerprint < hellos.jsonl           JA3/JA4 of ClientHellos, one JSON line each
//	edge waf eval [--config FILE] [--paranoia N] [--explain] < requests.jsonl
//	edge ech keygen --out FILE | edge ech config FILE
//	edge keys generate NAME | edge keys sign --key NAME.key FILE...
//
// It is a thin main around the root package edge: it owns the flags, the subcommands, the signals
// and the exit codes (0 success, 1 invalid configuration or a failed run, 2 usage), and nothing of the
// request path. Serving, it loads the configuration, builds one edge.Server and runs it; every
// request is handled inside that server.
//
// Signals and reload: SIGTERM or SIGINT drains and exits, a second one exits at once; SIGHUP calls
// Server.Reload, and Server.Watch reloads when the configuration or a data file changes. Both run on
// their own goroutines; the server serialises reloads and swaps its snapshot atomically, so requests
// in flight finish on the configuration they started with.
package main
