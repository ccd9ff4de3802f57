//go:build race

package edge

// browserRace reports that the race detector is on: allocation budgets are not checked then.
const browserRace = true
