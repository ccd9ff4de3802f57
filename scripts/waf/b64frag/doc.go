// Command b64frag prints an RE2 alternation matching the base64 encoding of
// each keyword at every byte alignment (0, 1 or 2 bytes of unknown data
// before it), keeping only the characters that depend on the keyword alone.
// It generates the regex of rule JAVA-013 (base64 gadget names that the
// base64_scan transform cannot see because the run starts mid-group):
//
//	go run ./scripts/waf/b64frag runtime Runtime processbuilder ProcessBuilder
//
// It is a rule-authoring tool, not part of the request path: it runs once,
// on one goroutine, and its output is pasted into a rule file.
package main
