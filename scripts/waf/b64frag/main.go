package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// fragments returns the base64 characters determined by kw alone at the
// three alignments.
func fragments(kw string) []string {
	var out []string
	for pad := 0; pad < 3; pad++ {
		src := strings.Repeat("\x00", pad) + kw
		enc := base64.RawStdEncoding.EncodeToString([]byte(src))
		// Characters 0..lead-1 mix in the unknown prefix bytes.
		lead := 0
		switch pad {
		case 1:
			lead = 2
		case 2:
			lead = 3
		}
		// The last character mixes in the unknown following byte unless
		// the keyword ends on a 3-byte boundary.
		end := len(enc)
		if len(src)%3 != 0 {
			end--
		}
		if end-lead >= 6 {
			out = append(out, enc[lead:end])
		}
	}
	return out
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: b64frag KEYWORD...")
		os.Exit(2)
	}
	seen := map[string]bool{}
	var all []string
	for _, kw := range os.Args[1:] {
		for _, f := range fragments(kw) {
			if !seen[f] {
				seen[f] = true
				all = append(all, regexp.QuoteMeta(f))
			}
		}
	}
	sort.Strings(all)
	fmt.Println(strings.Join(all, "|"))
}
