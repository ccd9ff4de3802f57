package edge

import (
	"net/netip"
	"strconv"

	"edge/geoip"
	"edge/routes"
)

// geoCached is a connection's GeoIP answer: valid while the snapshot's databases and the client
// address are the ones it was computed for.
type geoCached struct {
	db   *geoip.DB
	addr netip.Addr
	info geoip.Info
}

// locate looks the client address up in the [geoip] databases. The address of a connection does not
// change, so the answer is kept on the connection and reused by its next requests (HTTP/1.1
// keep-alive, HTTP/2 and HTTP/3 streams) until a reload brings new databases. A client address
// taken from a trusted proxy's X-Forwarded-For or Forwarded is per request, and looked up each time.
func (s *Server) locate(ex *exchange) {
	db := ex.snap.geo
	if db == nil || !ex.client.IsValid() {
		return
	}
	c := ex.conn
	if c == nil || ex.client != ex.peer {
		ex.geo = db.Lookup(ex.client)
		return
	}
	if g := c.geo.Load(); g != nil && g.db == db && g.addr == ex.client {
		ex.geo = g.info
		return
	}
	ex.geo = db.Lookup(ex.client)
	c.geo.Store(&geoCached{db: db, addr: ex.client, info: ex.geo})
}

// routeClient is what route conditions know about the client.
func (ex *exchange) routeClient() routes.Client {
	return routes.Client{Country: ex.geo.Country, ASN: ex.geo.ASN}
}

// geoAllowed applies the matched route's country and network rule: 403 forbidden_geo for a client
// it refuses.
func geoAllowed(ex *exchange) decision {
	if ex.rt == nil || ex.rt.Index >= len(ex.snap.geoRules) {
		return pass
	}
	if g := ex.snap.geoRules[ex.rt.Index]; !g.allowed(ex.geo.Country, ex.geo.ASN) {
		return deny(denyForbiddenGeo, "country "+orUnknown(ex.geo.Country)+", asn "+asnString(ex.geo.ASN))
	}
	return pass
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func asnString(n uint32) string {
	if n == 0 {
		return "unknown"
	}
	return strconv.FormatUint(uint64(n), 10)
}

// afterResponse counts what the answer to a request tells about its client: its country and
// network on the status page (when [geoip] is on), and a 4xx towards an error storm
// (ratelimit.bans.storm_4xx, pipeline_bots.go).
func (s *Server) afterResponse(ex *exchange, status int) {
	if ex.snap.geo != nil && s.status != nil {
		s.status.geo.observe(ex.geo, ex.start)
	}
	s.observeStorm(ex, status)
}
