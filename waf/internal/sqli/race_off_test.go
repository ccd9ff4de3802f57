//go:build !race

package sqli

const raceOn = false
