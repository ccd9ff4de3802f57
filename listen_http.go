package edge

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"edge/routes"
)

// serveCleartext runs the pipeline for listen.http_mode = "serve".
func (s *Server) serveCleartext(w http.ResponseWriter, r *http.Request) { s.serve(w, r, "http") }

// redirectToHTTPS answers cleartext requests with a 308 to the same host and path on the https
// listener.
func (s *Server) redirectToHTTPS(w http.ResponseWriter, r *http.Request) {
	host, err := routes.CanonicalHost(r.Host)
	if err != nil {
		s.respond(w, r, &exchange{id: s.ids.next()}, deny(denyBadRequest, "invalid host"))
		return
	}
	if _, port, err := net.SplitHostPort(s.cfg.Listen.HTTPS.First()); err == nil && port != "443" {
		if a := s.Addr("https"); a != nil {
			port = strconv.Itoa(a.(*net.TCPAddr).Port)
		}
		if strings.Contains(host, ":") && host[0] != '[' {
			host = "[" + host + "]"
		}
		host += ":" + port
	}
	w.Header().Set("Location", "https://"+host+r.URL.RequestURI())
	w.WriteHeader(http.StatusPermanentRedirect)
}
