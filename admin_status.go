package edge

import (
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"edge/fingerprint"
	"edge/h2guard"
	"edge/ratelimit"
	"edge/waf"
)

// Limits of the status page's own bookkeeping. Everything is fixed-size: a flood of distinct
// fingerprints or rule ids cannot grow memory.
const (
	// statusTopSlots is how many distinct JA4 fingerprints the top-K tracks (Space-Saving); the
	// counts of the top statusTopShown are exact or over-estimated by at most their reported error.
	statusTopSlots = 64
	// statusTopShown is how many fingerprints GET /status reports.
	statusTopShown = 10
	// statusClassSlots bounds the distinct fingerprint classes counted; more fall into "other".
	statusClassSlots = 16
	// statusWAFMinutes is the WAF window: one bucket per minute, this many minutes.
	statusWAFMinutes = 15
	// statusWAFRuleSlots bounds the distinct rule ids counted per minute; more fall into "other".
	statusWAFRuleSlots = 64
	// statusWAFRulesShown is how many rules GET /status reports for the window.
	statusWAFRulesShown = 10
)

// statusOther is the name of the overflow bucket of bounded tables.
const statusOther = "other"

// statusState is what the status page shows that no leaf counts by itself: the most frequent client
// fingerprints and WAF activity per minute. The root calls observe once per client connection and
// observeWAF once per request the WAF matched; both take a mutex and do not allocate once their
// fixed tables are warm. Safe for concurrent use.
type statusState struct {
	start time.Time

	fpMu    sync.Mutex
	conns   uint64
	top     [statusTopSlots]fpSlot
	topUsed int
	topIdx  map[string]int // ja4 → slot
	classes [statusClassSlots + 1]nameCount

	wafMu   sync.Mutex
	minutes [statusWAFMinutes]wafMinute

	// geo counts requests by client country and network ([geoip]; admin_status_geo.go).
	geo geoWindow
}

type fpSlot struct {
	ja4, label, class string
	count, err        uint64
}

type wafMinute struct {
	minute           int64 // Unix minute of the bucket; 0 = empty
	requests, blocks uint64
	rules            []wafRuleCount // at most statusWAFRuleSlots, then other
	other            wafRuleCount
}

type wafRuleCount struct {
	rule             string
	matched, blocked uint64
}

// nameCount is one row of a bounded counter table.
type nameCount struct {
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

func newStatusState() *statusState {
	st := &statusState{start: time.Now(), topIdx: make(map[string]int, statusTopSlots)}
	st.classes[statusClassSlots].Name = statusOther
	for i := range st.minutes {
		st.minutes[i].rules = make([]wafRuleCount, 0, statusWAFRuleSlots)
	}
	return st
}

// observe records one client connection's fingerprint: its JA4 (empty when none was computed), the
// database label and class of the match (empty when none). The top-K is the Space-Saving algorithm
// (Metwally et al., 2005): a JA4 not tracked while every slot is taken replaces the slot with the
// smallest count and inherits that count as its error bound.
func (st *statusState) observe(ja4, label, class string) {
	st.fpMu.Lock()
	defer st.fpMu.Unlock()
	st.conns++
	if class == "" {
		class = "unknown"
	}
	st.countClass(class)
	if ja4 == "" {
		return
	}
	if i, ok := st.topIdx[ja4]; ok {
		s := &st.top[i]
		s.count++
		s.label, s.class = label, class // the newest database verdict (a reload may change it)
		return
	}
	if st.topUsed < statusTopSlots {
		st.top[st.topUsed] = fpSlot{ja4: ja4, label: label, class: class, count: 1}
		st.topIdx[ja4] = st.topUsed
		st.topUsed++
		return
	}
	min := 0
	for i := 1; i < statusTopSlots; i++ {
		if st.top[i].count < st.top[min].count {
			min = i
		}
	}
	s := &st.top[min]
	delete(st.topIdx, s.ja4)
	*s = fpSlot{ja4: ja4, label: label, class: class, count: s.count + 1, err: s.count}
	st.topIdx[ja4] = min
}

// observeConn records a client connection from its facts, looking its fingerprint up in db (nil: no
// database): the root calls it once per connection, TCP and QUIC, after the handshake.
func (st *statusState) observeConn(f *connFacts, db *fingerprint.DB) {
	if f.fp.JA4 == "" {
		st.observe("", "", "")
		return
	}
	m, ok := db.Lookup(&f.fp)
	if !ok {
		st.observe(f.fp.JA4, "", "")
		return
	}
	st.observe(f.fp.JA4, m.Label, m.Class.String())
}

func (st *statusState) countClass(class string) {
	for i := 0; i < statusClassSlots; i++ {
		c := &st.classes[i]
		if c.Name == class {
			c.Count++
			return
		}
		if c.Name == "" {
			c.Name, c.Count = class, 1
			return
		}
	}
	st.classes[statusClassSlots].Count++
}

// observeWAF records one request the WAF evaluated with at least one match: the ids of the rules
// that matched and whether the request was blocked. Calls without matches and without a block are
// ignored, so the root may call it for every request.
func (st *statusState) observeWAF(ruleIDs []string, blocked bool) {
	if len(ruleIDs) == 0 && !blocked {
		return
	}
	minute := time.Now().Unix() / 60
	st.wafMu.Lock()
	defer st.wafMu.Unlock()
	b := &st.minutes[minute%statusWAFMinutes]
	if b.minute != minute {
		b.minute, b.requests, b.blocks, b.rules, b.other = minute, 0, 0, b.rules[:0], wafRuleCount{rule: statusOther}
	}
	b.requests++
	if blocked {
		b.blocks++
	}
	for _, id := range ruleIDs {
		rc := b.rule(id)
		rc.matched++
		if blocked {
			rc.blocked++
		}
	}
}

// observeVerdict is observeWAF for a WAF verdict: the rule ids of its matches, blocked when its
// action is block. It does not allocate.
func (st *statusState) observeVerdict(v *waf.Verdict) {
	if len(v.Matches) == 0 && v.Action != waf.ActionBlock {
		return
	}
	var buf [16]string
	ids := buf[:0]
	for i := range v.Matches {
		if len(ids) == len(buf) {
			break // statusWAFRuleSlots bounds the table anyway; 16 rules on one request is plenty to show
		}
		ids = append(ids, v.Matches[i].RuleID)
	}
	st.observeWAF(ids, v.Action == waf.ActionBlock)
}

func (b *wafMinute) rule(id string) *wafRuleCount {
	for i := range b.rules {
		if b.rules[i].rule == id {
			return &b.rules[i]
		}
	}
	if len(b.rules) < statusWAFRuleSlots {
		b.rules = append(b.rules, wafRuleCount{rule: id})
		return &b.rules[len(b.rules)-1]
	}
	return &b.other
}

// statusFingerprints is the fingerprint part of GET /status.
type statusFingerprints struct {
	// Connections counts observed client connections.
	Connections uint64 `json:"connections"`
	// Top are the most frequent JA4s, most frequent first.
	Top     []statusFP  `json:"top"`
	Classes []nameCount `json:"classes"`
	// DBEntries is the size of the loaded fingerprint database.
	DBEntries int `json:"db_entries"`
}

type statusFP struct {
	JA4   string `json:"ja4"`
	Label string `json:"label"`
	Class string `json:"class"`
	Count uint64 `json:"count"`
	// Error bounds the over-count of a JA4 that took over another's slot (0: exact).
	Error uint64 `json:"error"`
}

func (st *statusState) fingerprints() statusFingerprints {
	st.fpMu.Lock()
	defer st.fpMu.Unlock()
	out := statusFingerprints{Connections: st.conns, Top: make([]statusFP, 0, st.topUsed), Classes: []nameCount{}}
	for _, s := range st.top[:st.topUsed] {
		out.Top = append(out.Top, statusFP{JA4: s.ja4, Label: s.label, Class: s.class, Count: s.count, Error: s.err})
	}
	slices.SortStableFunc(out.Top, func(a, b statusFP) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.JA4, b.JA4))
	})
	out.Top = out.Top[:min(len(out.Top), statusTopShown)]
	for _, c := range st.classes {
		if c.Count > 0 {
			out.Classes = append(out.Classes, c)
		}
	}
	sortCounts(out.Classes)
	return out
}

// statusWAF is the WAF part of GET /status: requests the WAF matched and blocked over the last
// WindowMinutes minutes.
type statusWAF struct {
	WindowMinutes int `json:"window_minutes"`
	// Matched counts requests with at least one rule match, Blocked those blocked.
	Matched uint64 `json:"matched"`
	Blocked uint64 `json:"blocked"`
	// PerMinute has one entry per minute of the window, oldest first, the current minute last.
	PerMinute []statusMinute `json:"per_minute"`
	// Rules are the rules with the most blocks (then matches) in the window.
	Rules []statusRule `json:"rules"`
}

type statusMinute struct {
	Start   time.Time `json:"start"`
	Matched uint64    `json:"matched"`
	Blocked uint64    `json:"blocked"`
}

type statusRule struct {
	Rule    string `json:"rule"`
	Blocked uint64 `json:"blocked"`
	Matched uint64 `json:"matched"`
}

func (st *statusState) waf(now time.Time) statusWAF {
	cur := now.Unix() / 60
	out := statusWAF{WindowMinutes: statusWAFMinutes, PerMinute: make([]statusMinute, 0, statusWAFMinutes), Rules: []statusRule{}}
	byRule := map[string]*statusRule{}
	st.wafMu.Lock()
	defer st.wafMu.Unlock()
	for m := cur - statusWAFMinutes + 1; m <= cur; m++ {
		pm := statusMinute{Start: time.Unix(m*60, 0).UTC()}
		b := &st.minutes[m%statusWAFMinutes]
		if b.minute == m {
			pm.Matched, pm.Blocked = b.requests, b.blocks
			out.Matched += b.requests
			out.Blocked += b.blocks
			add := func(rc wafRuleCount) {
				if rc.matched == 0 {
					return
				}
				r := byRule[rc.rule]
				if r == nil {
					r = &statusRule{Rule: rc.rule}
					byRule[rc.rule] = r
				}
				r.Matched += rc.matched
				r.Blocked += rc.blocked
			}
			for _, rc := range b.rules {
				add(rc)
			}
			add(b.other)
		}
		out.PerMinute = append(out.PerMinute, pm)
	}
	for _, r := range byRule {
		out.Rules = append(out.Rules, *r)
	}
	slices.SortFunc(out.Rules, func(a, b statusRule) int {
		return cmp.Or(cmp.Compare(b.Blocked, a.Blocked), cmp.Compare(b.Matched, a.Matched), strings.Compare(a.Rule, b.Rule))
	})
	out.Rules = out.Rules[:min(len(out.Rules), statusWAFRulesShown)]
	return out
}

func sortCounts(c []nameCount) {
	slices.SortFunc(c, func(a, b nameCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
}

// statusPage is the live status page served at GET / on the admin listener: one self-contained
// document (inline CSS and JavaScript, no external assets) that polls GET /status.
//
//go:embed admin_status.html
var statusPage []byte

// statusCSP allows exactly the page's inline script and style (by hash) and fetches to the admin
// listener itself; nothing else loads.
var statusCSP = "default-src 'none'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"script-src " + inlineHash(statusPage, "<script>", "</script>") + "; style-src " + inlineHash(statusPage, "<style>", "</style>")

// inlineHash returns the CSP source expression ('sha256-…') of the text between the first open and
// close tags of page.
func inlineHash(page []byte, open, close string) string {
	s := string(page)
	i := strings.Index(s, open)
	j := strings.Index(s, close)
	if i < 0 || j < i {
		return "'none'"
	}
	sum := sha256.Sum256([]byte(s[i+len(open) : j]))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// statusHandler serves the status page (GET /) and its JSON summary (GET /status) from st. The root
// registers it on the admin mux for both patterns.
func (s *Server) statusHandler(st *statusState) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", statusCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		_, _ = w.Write(statusPage)
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.statusSummary(st, time.Now()))
	})
	return mux
}

// statusSummary is the document GET /status returns.
type statusSummary struct {
	Time          time.Time          `json:"time"`
	UptimeSeconds float64            `json:"uptime_seconds"`
	PID           int                `json:"pid"` // the process answering: it changes with a binary upgrade
	Requests      statusRequests     `json:"requests"`
	TLS           statusTLS          `json:"tls"`
	Fingerprints  statusFingerprints `json:"fingerprints"`
	WAF           statusWAF          `json:"waf"`
	Geo           statusGeo          `json:"geo"`
	RateLimit     statusRateLimit    `json:"ratelimit"`
	Backends      []statusBackend    `json:"backends"`
	Reload        statusReload       `json:"reload"`
	Certificates  []statusCert       `json:"certificates"` // server_acme.go
}

type statusRequests struct {
	Total   uint64      `json:"total"`
	ByClass []nameCount `json:"by_class"` // "2xx", "4xx", ...
	// Denied are the responses edge made itself, by typed reason.
	Denied []nameCount `json:"denied"`
}

type statusTLS struct {
	Handshakes uint64 `json:"handshakes"`
	// PQ counts handshakes with a post-quantum hybrid group; PQShare is PQ/Handshakes (0 when none).
	PQ       uint64        `json:"pq"`
	PQShare  float64       `json:"pq_share"`
	Groups   []statusGroup `json:"groups"`
	Failures []nameCount   `json:"failures"`
	Resumed  uint64        `json:"resumed"`
	ECH      uint64        `json:"ech_accepted"`
	// TicketKeys is where the session ticket keys come from: "local", "redis" or "fallback".
	TicketKeys string `json:"ticket_keys"`
	// OCSP is the stapling state of every certificate OCSP stapling applies to.
	OCSP []statusOCSP `json:"ocsp"`
}

type statusGroup struct {
	Version string `json:"version"`
	Group   string `json:"group"`
	PQ      bool   `json:"pq"`
	Count   uint64 `json:"count"`
}

type statusRateLimit struct {
	ConnsAdmitted uint64         `json:"conns_admitted"`
	ConnsActive   int64          `json:"conns_active"`
	ConnsRefused  []nameCount    `json:"conns_refused"` // by reason, zero counts omitted
	Denied        uint64         `json:"denied"`
	Policies      []statusPolicy `json:"policies"`
	Bans          uint64         `json:"bans"`
	BansRemote    uint64         `json:"bans_remote"`
	Strikes       []nameCount    `json:"strikes"`
	// ConnsClosed counts the connections edge closed itself, by reason (glitches, banned,
	// blocklisted); Glitches the glitches of HTTP/2 and HTTP/3 connections, by kind. Zero counts are
	// omitted.
	ConnsClosed []nameCount `json:"conns_closed"`
	Glitches    []nameCount `json:"glitches"`
	// Redis is nil when ratelimit.redis.url is not set.
	Redis *statusRedis `json:"redis"`
}

type statusPolicy struct {
	Name     string `json:"name"`
	Denied   uint64 `json:"denied"`
	Detected uint64 `json:"detected"`
	Keys     int    `json:"keys"`
}

type statusRedis struct {
	Up        bool   `json:"up"`
	Downs     uint64 `json:"downs"`
	Failures  uint64 `json:"failures"`
	Fallbacks uint64 `json:"fallbacks"`
}

type statusBackend struct {
	Name     string         `json:"name"`
	Protocol string         `json:"protocol"`
	Servers  []statusServer `json:"servers"`
}

type statusServer struct {
	Address   string `json:"address"`
	Healthy   bool   `json:"healthy"`
	Ejected   bool   `json:"ejected"`
	InFlight  int64  `json:"in_flight"`
	Requests  uint64 `json:"requests"`
	Errors    uint64 `json:"errors"`
	OpenConns int64  `json:"open_conns"`

	// State is upstream.ServerStats.State: up, slow-start, half-open, ejected, drained or down.
	State           string  `json:"state"`
	Source          string  `json:"source,omitempty"` // the DNS name it was discovered from
	Backup          bool    `json:"backup"`
	Weight          int     `json:"weight"`
	EffectiveWeight float64 `json:"effective_weight"`
}

type statusReload struct {
	OK     uint64        `json:"ok"`
	Failed uint64        `json:"failed"`
	Last   *ReloadResult `json:"last"` // nil before the first reload
}

// statusSummary assembles GET /status from the leaves' Stats, the request metrics and st.
func (s *Server) statusSummary(st *statusState, now time.Time) statusSummary {
	out := statusSummary{Time: now.UTC(), UptimeSeconds: now.Sub(st.start).Seconds(), PID: os.Getpid(), Fingerprints: st.fingerprints(), WAF: st.waf(now),
		Geo: st.geo.summary(now)}
	out.Requests = s.requestTotals()
	out.Certificates = s.statusCertificates()
	out.TLS.Groups, out.TLS.Failures = []statusGroup{}, []nameCount{}
	if s.term != nil {
		ts := s.term.Stats()
		for _, h := range ts.Handshakes {
			out.TLS.Handshakes += h.Count
			if h.PQ {
				out.TLS.PQ += h.Count
			}
			out.TLS.Groups = append(out.TLS.Groups, statusGroup{Version: h.Version, Group: h.Group, PQ: h.PQ, Count: h.Count})
		}
		slices.SortFunc(out.TLS.Groups, func(a, b statusGroup) int { return cmp.Compare(b.Count, a.Count) })
		out.TLS.PQShare = ratio(out.TLS.PQ, out.TLS.Handshakes)
		for _, f := range ts.Failures {
			out.TLS.Failures = append(out.TLS.Failures, nameCount{f.Reason, f.Count})
		}
		sortCounts(out.TLS.Failures)
		out.TLS.Resumed, out.TLS.ECH = ts.Resumed, ts.ECHAccepted
		out.TLS.TicketKeys, out.TLS.OCSP = s.ticketKeysSource(ts), statusOCSPList(ts, now)
	}
	rl := &out.RateLimit
	rl.ConnsRefused, rl.Policies, rl.Strikes = []nameCount{}, []statusPolicy{}, []nameCount{}
	rl.ConnsClosed, rl.Glitches = s.abuse.byReason(), s.abuse.byKind()
	out.Backends = []statusBackend{}
	if snap := s.snap.Load(); snap != nil {
		if snap.fpDB != nil {
			out.Fingerprints.DBEntries = snap.fpDB.Len()
		}
		if snap.rl != nil {
			rs := snap.rl.Stats()
			rl.ConnsAdmitted, rl.ConnsActive = rs.Conns.Admitted, rs.Conns.Active
			for r := 1; r < ratelimit.NumReasons; r++ {
				if n := rs.Conns.Refused[r]; n > 0 {
					rl.ConnsRefused = append(rl.ConnsRefused, nameCount{ratelimit.Reason(r).String(), n})
				}
				if n := rs.Bans.Strikes[r]; n > 0 {
					rl.Strikes = append(rl.Strikes, nameCount{ratelimit.Reason(r).String(), n})
				}
			}
			sortCounts(rl.ConnsRefused)
			sortCounts(rl.Strikes)
			rl.Denied = rs.Requests.Denied
			for _, p := range rs.Requests.Policies {
				rl.Policies = append(rl.Policies, statusPolicy{Name: p.Name, Denied: p.Denied, Detected: p.Detected, Keys: p.Keys})
			}
			rl.Bans, rl.BansRemote = rs.Bans.Bans, rs.Bans.RemoteApplied
			if snap.cfg.RateLimit.Redis.URL != "" {
				f := rs.Fleet
				rl.Redis = &statusRedis{Up: f.Up, Downs: f.Downs, Failures: f.Failures, Fallbacks: f.Fallbacks}
			}
		}
		for _, name := range sortedKeys(snap.backends) {
			ps := snap.backends[name].pool.Stats()
			b := statusBackend{Name: name, Protocol: ps.Protocol, Servers: make([]statusServer, 0, len(ps.Servers))}
			for _, sv := range ps.Servers {
				b.Servers = append(b.Servers, statusServer{Address: sv.Address, State: sv.State(), Source: sv.Source, Backup: sv.Backup,
					Weight: sv.Weight, EffectiveWeight: sv.EffectiveWeight, Healthy: sv.Healthy, Ejected: sv.Ejected,
					InFlight: sv.InFlight, Requests: sv.Requests, Errors: sv.Errors, OpenConns: sv.OpenConns})
			}
			out.Backends = append(out.Backends, b)
		}
	}
	out.Reload = statusReload{OK: s.reload.ok.Load(), Failed: s.reload.fail.Load(), Last: s.LastReload()}
	return out
}

// byReason returns the connections closed, by reason over every protocol, zero counts omitted.
func (a *abuseCounters) byReason() []nameCount {
	out := []nameCount{}
	for why := range numCloseReasons {
		var n uint64
		for p := range numProtos {
			n += a.closed[why][p].Load()
		}
		if n > 0 {
			out = append(out, nameCount{closeReasonNames[why], n})
		}
	}
	sortCounts(out)
	return out
}

// byKind returns the glitches, by kind over every protocol, zero counts omitted.
func (a *abuseCounters) byKind() []nameCount {
	out := []nameCount{}
	for k := range h2guard.NumKinds {
		var n uint64
		for p := range numProtos {
			n += a.glitches[p][k].Load()
		}
		if n > 0 {
			out = append(out, nameCount{h2guard.Kind(k).String(), n})
		}
	}
	sortCounts(out)
	return out
}

// requestTotals reads the request and deny counters from the metrics registry, so the page shows the
// same numbers as GET /metrics.
func (s *Server) requestTotals() statusRequests {
	out := statusRequests{ByClass: []nameCount{}, Denied: []nameCount{}}
	families, _ := s.m.reg.Gather()
	for _, mf := range families {
		switch mf.GetName() {
		case "edge_requests_total":
			for _, m := range mf.GetMetric() {
				v := uint64(m.GetCounter().GetValue())
				out.Total += v
				out.ByClass = addCount(out.ByClass, labelValue(m.GetLabel(), "code"), v)
			}
		case "edge_denied_total":
			for _, m := range mf.GetMetric() {
				if v := uint64(m.GetCounter().GetValue()); v > 0 { // every reason is exported, most at 0
					out.Denied = addCount(out.Denied, labelValue(m.GetLabel(), "reason"), v)
				}
			}
		}
	}
	sortCounts(out.ByClass)
	sortCounts(out.Denied)
	return out
}

func labelValue[L interface {
	GetName() string
	GetValue() string
}](labels []L, name string) string {
	for _, l := range labels {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func addCount(c []nameCount, name string, v uint64) []nameCount {
	for i := range c {
		if c[i].Name == name {
			c[i].Count += v
			return c
		}
	}
	return append(c, nameCount{name, v})
}
