//go:build race

package waf

// raceOn: sync.Pool drops objects at random under the race detector, so
// allocation budgets are not asserted then.
const raceOn = true
