//go:build race

package edge

// raceEnabled reports that the race detector is on: allocation budgets are not checked then.
const raceEnabled = true
