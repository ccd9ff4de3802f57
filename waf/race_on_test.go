//go:build race

package waf_test

// raceEnabled is true when the race detector is on: the corpus floor test
// (24,000 evaluations) is then skipped to keep the suite inside its time
// budget; run it without -race.
const raceEnabled = true
