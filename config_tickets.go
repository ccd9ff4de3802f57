package edge

import "edge/tls"

// validateTickets checks what [tls] session_ticket_keys needs from other sections: "redis" shares
// the keys through the [ratelimit.redis] server, so that server must be configured.
func (c *Config) validateTickets(s *problemSink) {
	if c.TLS.SessionTicketKeys == tls.TicketKeysRedis && c.RateLimit.Redis.URL == "" {
		s.errorf("tls.session_ticket_keys", `"redis" needs ratelimit.redis.url: the keys are shared through that server`)
	}
}
