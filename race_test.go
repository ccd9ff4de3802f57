//go:build race

package edge

// raceEnabled: the race detector inflates allocation counts, so budgets are not checked under it.
const raceEnabled = true
