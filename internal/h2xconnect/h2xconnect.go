package h2xconnect

import (
	"os"
	"strings"
)

func init() {
	v := os.Getenv("GODEBUG")
	if strings.Contains(v, "http2xconnect=") {
		return
	}
	if v != "" {
		v += ","
	}
	_ = os.Setenv("GODEBUG", v+"http2xconnect=1")
}
