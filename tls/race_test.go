//go:build race

package tls

// raceEnabled reports that the race detector is on: the OCSP refresh timing tests run without it.
const raceEnabled = true
