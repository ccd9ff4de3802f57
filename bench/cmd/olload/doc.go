// Command olload is benchrun's open-loop load generator: it sends requests at a fixed offered rate,
// whatever the proxy's answers take, and reports latency percentiles measured from the moment each
// request was due (not from when it was sent), so a stalled proxy shows up in the tail instead of
// slowing the generator down (coordinated omission). It speaks HTTP/1.1 cleartext and over TLS,
// HTTP/2 over TLS and HTTP/3, and prints one JSON object on stdout.
//
//	olload -proto h2tls -url https://127.0.0.1:18443/56 -rate 2000 -d 3s
package main
