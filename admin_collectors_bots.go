package edge

import (
	"github.com/prometheus/client_golang/prometheus"

	"edge/crawler"
)

// botsCollector exports the crawler verifier's counters and the age of the GeoIP databases, read
// from the current snapshot at scrape time.
type botsCollector struct {
	s *Server
}

var (
	descCrawlerChecks = prometheus.NewDesc("edge_crawler_checks_total",
		"Requests whose User-Agent claimed a search engine crawler, by what DNS said: verified, fake, or pending (not answered in time, or the lookup failed).",
		[]string{"status"}, nil)
	descCrawlerLookups = prometheus.NewDesc("edge_crawler_lookups_total",
		"Reverse-and-forward DNS verifications started.", nil, nil)
	descCrawlerCache = prometheus.NewDesc("edge_crawler_cache_entries",
		"Crawler verification answers cached (and lookups running).", nil, nil)
	descGeoIPBuild = prometheus.NewDesc("edge_geoip_database_build_timestamp_seconds",
		"Build time of each GeoIP database in use ([geoip] country_db, asn_db), as Unix seconds: alert on a stale one.",
		[]string{"db"}, nil)
)

// Describe implements prometheus.Collector.
func (botsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCrawlerChecks
	ch <- descCrawlerLookups
	ch <- descCrawlerCache
	ch <- descGeoIPBuild
}

// Collect implements prometheus.Collector.
func (c botsCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.s.snap.Load()
	if snap == nil {
		return
	}
	if v := snap.crawlers; v != nil {
		st := v.Stats()
		for _, s := range []crawler.Status{crawler.Verified, crawler.Fake, crawler.Pending} {
			ch <- prometheus.MustNewConstMetric(descCrawlerChecks, prometheus.CounterValue, float64(st.Answers[s]), s.String())
		}
		ch <- prometheus.MustNewConstMetric(descCrawlerLookups, prometheus.CounterValue, float64(st.Lookups))
		ch <- prometheus.MustNewConstMetric(descCrawlerCache, prometheus.GaugeValue, float64(st.Entries))
	}
	country, asn := snap.geo.BuildTimes()
	if !country.IsZero() {
		ch <- prometheus.MustNewConstMetric(descGeoIPBuild, prometheus.GaugeValue, float64(country.Unix()), "country")
	}
	if !asn.IsZero() {
		ch <- prometheus.MustNewConstMetric(descGeoIPBuild, prometheus.GaugeValue, float64(asn.Unix()), "asn")
	}
}
