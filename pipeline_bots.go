package edge

import (
	"net/http"
	"time"

	"edge/crawler"
	"edge/fingerprint"
)

// botFacts are what the bot tiers decided about a request's client (pipeline_bots.go).
type botFacts struct {
	// allow: WAF rules of bots.allow_skips_rules are skipped (an "allow" fingerprint, or a verified
	// crawler).
	allow bool
	// limit: the client is in the bot tier, limited by the scope = "bot" policies too (a "limit"
	// fingerprint, or a fake crawler under fake_crawler_action = "flag").
	limit bool
	// crawler is the name of the crawler the User-Agent claims ("" for none), status what DNS said
	// about the claim.
	crawler string
	status  crawler.Status
}

// tier names the client's bot tier for the access log: "allow", "limit" or "".
func (b *botFacts) tier() string {
	switch {
	case b.limit:
		return "limit"
	case b.allow:
		return "allow"
	}
	return ""
}

// botTier is the stage that gives the fingerprint database's actions their meaning and verifies
// crawler claims ([bots]): "allow" skips the WAF's bot rules, "limit" puts the client in the bot
// tier of the request limiter. A User-Agent claiming a crawler is checked by reverse and forward
// DNS (waiting at most bots.verify_wait_ms; unanswered, the client is served as an ordinary one): a
// verified crawler is neither in the bot tier nor struck, and skips the WAF's bot rules; a fake one
// is flagged into the bot tier or refused with 403 fake_crawler (bots.fake_crawler_action).
func (s *Server) botTier(r *http.Request, ex *exchange) decision {
	if ex.fpMatched {
		switch ex.fpMatch.Action {
		case fingerprint.ActionAllow:
			ex.bot.allow = true
		case fingerprint.ActionLimit:
			ex.bot.limit = true
		}
	}
	v := ex.snap.crawlers
	if v == nil {
		return pass
	}
	i := v.Claimed(r.UserAgent())
	if i < 0 {
		return pass
	}
	cfg := &ex.snap.cfg.Bots
	ex.bot.crawler = v.Name(i)
	ex.bot.status = v.Check(i, ex.client, time.Duration(cfg.VerifyWaitMS)*time.Millisecond, time.Now())
	switch ex.bot.status {
	case crawler.Verified:
		ex.bot.allow, ex.bot.limit = true, false
	case crawler.Fake:
		if cfg.FakeCrawlerAction == "block" {
			return deny(denyFakeCrawler, "claims "+ex.bot.crawler)
		}
		ex.bot.allow, ex.bot.limit = false, true
	}
	return pass
}

// noStrike reports whether denials of this request must not strike its client: a verified crawler
// is limited like anyone but never banned for it.
func (ex *exchange) noStrike() bool { return ex.bot.status == crawler.Verified }

// observeStorm counts a 4xx answer towards its client's error-storm budget
// (ratelimit.bans.storm_4xx): a scanner walking paths that do not exist, or probing with requests
// that are refused, strikes itself into a ban. Answers whose cause already struck the client (429,
// WAF blocks, bans, failed credentials), streams the client reset itself, and refusals for where
// the client is rather than what it does (network and country rules) are not counted.
func (s *Server) observeStorm(ex *exchange, status int) {
	if status < 400 || status > 499 {
		return
	}
	switch ex.reason {
	case denyRateLimited, denyWAF, denyBanned, denyUnauthorized, denyClientGone, denyForbiddenNetwork, denyForbiddenGeo:
		return
	}
	rl := ex.snap.rl
	if rl == nil || ex.noStrike() {
		return
	}
	rl.Bans.Observe4xx(ex.client, time.Now())
}
