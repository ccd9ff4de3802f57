//go:build !race

package waf_test

const raceEnabled = false
