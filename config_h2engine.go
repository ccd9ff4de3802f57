package edge

import "fmt"

// The HTTP/2 servers server.h2_engine chooses between.
const (
	// h2EngineNative is edge's own HTTP/2 server (package h2server), written for proxying.
	h2EngineNative = "native"
	// h2EngineXNet is golang.org/x/net/http2's server, the one net/http bundles.
	h2EngineXNet = "x/net"
)

func (c *Config) validateH2Engine(s *problemSink) {
	switch c.Server.H2Engine {
	case h2EngineNative, h2EngineXNet:
	default:
		s.errorf("server.h2_engine", fmt.Sprintf("unknown engine %q: want %q or %q", c.Server.H2Engine, h2EngineNative, h2EngineXNet))
	}
}
