package edge

import (
	"fmt"
	"net"
	"strconv"

	_ "edge/internal/h2xconnect" // RFC 8441 extended CONNECT in the HTTP/2 server (WebSocket over HTTP/2)
	"edge/internal/handoff"
)

// socket is one bound listening socket: a TCP listener and, for an https address with HTTP/3 on,
// its UDP twin on the same port.
type socket struct {
	name string // "https", "http", "admin"
	key  string // what an upgraded process finds it under: name, configured address, occurrence
	tcp  *net.TCPListener
	udp  *net.UDPConn
}

// network returns the network to bind host on: an IPv4 address binds IPv4 only and an IPv6 address
// IPv6 only (IPV6_V6ONLY), so "0.0.0.0:443" and "[::]:443" are two sockets side by side, as in
// nginx; an empty host is one socket for both families.
func network(proto, addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() != nil {
			return proto + "4"
		}
		return proto + "6"
	}
	return proto
}

// bindAll binds every address of every listener: each taken over from the process this one
// replaces (an upgrade) when it handed one over under the same key, else bound anew. On error
// nothing stays bound.
func (s *Server) bindAll(names []string, addrs []Addrs, http3 bool) (socks []socket, err error) {
	defer func() {
		if err != nil {
			for _, so := range socks {
				so.close()
			}
			socks = nil
		}
	}()
	seen := map[string]int{}
	for i, name := range names {
		for _, addr := range addrs[i] {
			base := name + " " + addr
			key := base + " #" + strconv.Itoa(seen[base])
			seen[base]++
			so := socket{name: name, key: key}
			so.tcp, err = s.handoff.Listener(key + " tcp")
			if err != nil {
				return socks, err
			}
			if name == "https" && http3 {
				if so.udp, err = s.handoff.UDP(key + " udp"); err != nil {
					if so.tcp != nil {
						so.tcp.Close()
					}
					return socks, err
				}
			}
			if err := so.bind(addr, name == "https" && http3); err != nil {
				return socks, fmt.Errorf("listen.%s: %w", name, err)
			}
			socks = append(socks, so)
		}
	}
	return socks, nil
}

// bind binds what was not inherited: the TCP listener, and the UDP twin when withUDP. With port 0
// the kernel picks a free TCP port whose UDP twin may already be taken (by any UDP socket, a QUIC
// client's included), so an ephemeral pair is retried a few times; a fixed port is tried once and
// its error reported as is.
func (so *socket) bind(addr string, withUDP bool) error {
	if so.tcp != nil && (!withUDP || so.udp != nil) {
		return nil
	}
	if so.tcp != nil {
		// HTTP/3 newly on over an inherited TCP listener: the UDP twin of its port.
		ta := so.tcp.Addr().(*net.TCPAddr)
		udp, err := net.ListenUDP(network("udp", addr), &net.UDPAddr{IP: ta.IP, Port: ta.Port, Zone: ta.Zone})
		if err != nil {
			return fmt.Errorf("udp for http/3: %w", err)
		}
		so.udp = udp
		return nil
	}
	_, port, _ := net.SplitHostPort(addr)
	attempts := 1
	if port == "0" && withUDP && so.udp == nil {
		attempts = 20
	}
	var err error
	for range attempts {
		var ln net.Listener
		ln, err = net.Listen(network("tcp", addr), addr)
		if err != nil {
			return err
		}
		so.tcp = ln.(*net.TCPListener)
		if !withUDP || so.udp != nil {
			return nil
		}
		ta := so.tcp.Addr().(*net.TCPAddr)
		so.udp, err = net.ListenUDP(network("udp", addr), &net.UDPAddr{IP: ta.IP, Port: ta.Port, Zone: ta.Zone})
		if err == nil {
			return nil
		}
		so.tcp.Close()
		so.tcp = nil
		err = fmt.Errorf("udp for http/3: %w", err)
	}
	return err
}

func (so *socket) close() {
	if so.tcp != nil {
		so.tcp.Close()
	}
	if so.udp != nil {
		so.udp.Close()
	}
}

// Sockets returns duplicates of every listening socket, for an upgrade to hand to the new process
// ([handoff.Process.Upgrade]); the caller closes them.
func (s *Server) Sockets() ([]handoff.Socket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []handoff.Socket
	fail := func(err error) ([]handoff.Socket, error) {
		for _, h := range out {
			h.File.Close()
		}
		return nil, err
	}
	for _, so := range s.sockets {
		f, err := so.tcp.File()
		if err != nil {
			return fail(err)
		}
		out = append(out, handoff.Socket{Key: so.key + " tcp", File: f})
		if so.udp != nil {
			f, err := so.udp.File()
			if err != nil {
				return fail(err)
			}
			out = append(out, handoff.Socket{Key: so.key + " udp", File: f, UDP: true})
		}
	}
	return out, nil
}

// Addrs returns the bound addresses of a listener ("https", "http", "admin"), in configuration
// order; "h3" gives the UDP addresses of HTTP/3.
func (s *Server) Addrs(name string) []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []net.Addr
	for _, so := range s.sockets {
		switch {
		case name == "h3" && so.udp != nil:
			out = append(out, so.udp.LocalAddr())
		case so.name == name:
			out = append(out, so.tcp.Addr())
		}
	}
	return out
}
