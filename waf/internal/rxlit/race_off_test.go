//go:build !race

package rxlit

const raceOn = false
