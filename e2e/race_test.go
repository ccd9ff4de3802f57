//go:build race

package e2e_test

// raceEnabled: the race detector inflates allocation counts, so budgets are not checked under it,
// and quic-go's 0-RTT client races with itself (TestHTTP3EarlyData).
const raceEnabled = true
