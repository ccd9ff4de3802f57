//go:build race

package sqli

// raceOn: allocation budgets are not asserted under the race detector.
const raceOn = true
