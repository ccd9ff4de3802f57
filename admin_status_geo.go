package edge

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"edge/geoip"
)

// Limits of the status page's country and network tables: fixed-size, so a flood of addresses
// from every network of the world cannot grow memory.
const (
	// statusGeoMinutes is the window: one bucket per minute, this many minutes.
	statusGeoMinutes = 15
	// statusGeoSlots bounds the distinct countries, and the distinct networks, counted per minute;
	// more fall into "other" (there are about 250 countries; the busiest networks of a minute are
	// what the page is for).
	statusGeoSlots = 64
	// statusGeoShown is how many countries and networks GET /status reports.
	statusGeoShown = 10
)

// geoWindow counts requests by client country and network, per minute over the last
// statusGeoMinutes. Safe for concurrent use; observe does not allocate.
type geoWindow struct {
	mu      sync.Mutex
	minutes [statusGeoMinutes]geoMinute
}

type geoMinute struct {
	minute    int64 // Unix minute of the bucket; 0 = empty
	countries [statusGeoSlots]geoCount
	nCountry  int
	networks  [statusGeoSlots]geoCount
	nNetwork  int
	otherC    uint64 // countries past the slots
	otherN    uint64 // networks past the slots
}

// geoCount is one row: a country (code) or a network (asn, org); "" and 0 stand for unknown.
type geoCount struct {
	code  string
	asn   uint32
	org   string
	count uint64
}

// observe counts one request of a client with in at now.
func (w *geoWindow) observe(in geoip.Info, now time.Time) {
	m := now.Unix() / 60
	w.mu.Lock()
	defer w.mu.Unlock()
	b := &w.minutes[m%statusGeoMinutes]
	switch {
	case b.minute > m:
		return // a request from a minute that has left the window (it started long ago)
	case b.minute < m:
		*b = geoMinute{minute: m}
	}
	if i := slices.IndexFunc(b.countries[:b.nCountry], func(c geoCount) bool { return c.code == in.Country }); i >= 0 {
		b.countries[i].count++
	} else if b.nCountry < statusGeoSlots {
		b.countries[b.nCountry] = geoCount{code: in.Country, count: 1}
		b.nCountry++
	} else {
		b.otherC++
	}
	if i := slices.IndexFunc(b.networks[:b.nNetwork], func(c geoCount) bool { return c.asn == in.ASN }); i >= 0 {
		b.networks[i].count++
	} else if b.nNetwork < statusGeoSlots {
		b.networks[b.nNetwork] = geoCount{asn: in.ASN, org: in.ASOrg, count: 1}
		b.nNetwork++
	} else {
		b.otherN++
	}
}

// statusGeo is the "geo" part of GET /status: requests by client country and network over the
// window, the busiest first. "unknown" is a client the databases do not know; "other" counts
// the rows past a minute's bounded table.
type statusGeo struct {
	WindowMinutes int             `json:"window_minutes"`
	Countries     []nameCount     `json:"countries"`
	Networks      []statusNetwork `json:"networks"`
}

type statusNetwork struct {
	ASN   uint32 `json:"asn"` // 0: unknown, or other (Name says which)
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

func (w *geoWindow) summary(now time.Time) statusGeo {
	cur := now.Unix() / 60
	countries := map[string]uint64{}
	networks := map[uint32]*statusNetwork{}
	var otherC, otherN uint64
	w.mu.Lock()
	for m := cur - statusGeoMinutes + 1; m <= cur; m++ {
		b := &w.minutes[m%statusGeoMinutes]
		if b.minute != m {
			continue
		}
		for _, c := range b.countries[:b.nCountry] {
			countries[c.code] += c.count
		}
		for _, n := range b.networks[:b.nNetwork] {
			sn := networks[n.asn]
			if sn == nil {
				sn = &statusNetwork{ASN: n.asn, Name: n.org}
				networks[n.asn] = sn
			}
			sn.Count += n.count
		}
		otherC += b.otherC
		otherN += b.otherN
	}
	w.mu.Unlock()
	out := statusGeo{WindowMinutes: statusGeoMinutes, Countries: []nameCount{}, Networks: []statusNetwork{}}
	for code, n := range countries {
		if code == "" {
			code = "unknown"
		}
		out.Countries = append(out.Countries, nameCount{code, n})
	}
	sortCounts(out.Countries)
	out.Countries = out.Countries[:min(len(out.Countries), statusGeoShown)]
	if otherC > 0 {
		out.Countries = append(out.Countries, nameCount{statusOther, otherC})
	}
	for _, n := range networks {
		switch {
		case n.ASN == 0:
			n.Name = "unknown"
		case n.Name == "":
			n.Name = "AS" + strconv.FormatUint(uint64(n.ASN), 10)
		}
		out.Networks = append(out.Networks, *n)
	}
	slices.SortFunc(out.Networks, func(a, b statusNetwork) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.ASN, b.ASN))
	})
	out.Networks = out.Networks[:min(len(out.Networks), statusGeoShown)]
	if otherN > 0 {
		out.Networks = append(out.Networks, statusNetwork{Name: statusOther, Count: otherN})
	}
	return out
}
