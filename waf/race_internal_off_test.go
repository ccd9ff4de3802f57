//go:build !race

package waf

const raceOn = false
