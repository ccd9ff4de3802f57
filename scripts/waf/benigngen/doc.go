// Command benigngen writes the generated benign corpora of
// waf/testdata/benign: requests built from small grammars of what real
// sites receive where a WAF's false positives live — names and addresses
// with apostrophes, free text, URLs as parameter values, base64 and JWT
// tokens, JSON API bodies, cookies and headers. Words come from the SCOWL
// American English list (Debian package wamerican); everything else is
// built here. The output is deterministic for a given word list.
//
//	apt-get install wamerican
//	go run ./scripts/waf/benigngen [-out waf/testdata/benign] [-n 400]
package main
