package edge

import (
	"fmt"
	"net"

	_ "edge/internal/h2xconnect" // RFC 8441 extended CONNECT in the HTTP/2 server (WebSocket over HTTP/2)
)

// listenTCPAndUDP binds the https listener's TCP port and the same UDP port for HTTP/3. With port 0
// the kernel picks a free TCP port whose UDP twin may already be taken (by any UDP socket, a QUIC
// client's included), so an ephemeral pair is retried a few times; a fixed port is tried once and
// its error reported as is.
func listenTCPAndUDP(addr string) (net.Listener, *net.UDPConn, error) {
	_, port, _ := net.SplitHostPort(addr)
	attempts := 1
	if port == "0" {
		attempts = 20
	}
	var err error
	for range attempts {
		var ln net.Listener
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, err
		}
		ta := ln.Addr().(*net.TCPAddr)
		var udp *net.UDPConn
		udp, err = net.ListenUDP("udp", &net.UDPAddr{IP: ta.IP, Port: ta.Port, Zone: ta.Zone})
		if err == nil {
			return ln, udp, nil
		}
		ln.Close()
		err = fmt.Errorf("udp for http/3: %w", err)
	}
	return nil, nil, err
}
