//go:build race

package rxlit

// raceOn: allocation counts are not asserted under the race detector.
const raceOn = true
