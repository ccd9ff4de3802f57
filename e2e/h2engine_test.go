package e2e_test

import (
	"os"
	"strconv"
)

// testH2Engine is the server.h2_engine line the harness adds to every configuration when
// EDGE_TEST_H2_ENGINE names an engine ("native" or "x/net"), so the whole suite can run on either
// HTTP/2 server; "" (the default engine) otherwise.
func testH2Engine() string {
	if e := os.Getenv("EDGE_TEST_H2_ENGINE"); e != "" {
		return "h2_engine = " + strconv.Quote(e) + "\n"
	}
	return ""
}
