package waf

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

func TestDebugTime(t *testing.T) {
	rs := loadRules(t)
	tm := map[string]time.Duration{}
	cnt := map[string]int{}
	p := &Policy{Mode: ModeBlock, Paranoia: 1, Threshold: 5, BodyLimitBytes: 1 << 17, MaxValues: 1024}
	for _, req := range []*Request{benignGET(), benignPOST()} {
		st := rs.getState()
		st.req = req
		st.pol = p
		st.extract()
		for i := range st.values {
			v := &st.values[i]
			st.stamp++
			st.tbuf = st.tbuf[:0]
			st.nforms = 1
			for _, ri := range rs.byZone[v.zone] {
				r := rs.rules[ri]
				if r.Paranoia > 1 || !r.accepts(v) {
					continue
				}
				for _, c := range r.chains {
					data := st.transformed(c, v.data)
					if r.pf && !st.candidate(c, ri, data) {
						continue
					}
					t0 := time.Now()
					for k := 0; k < 20; k++ {
						r.matchValue(st, data)
					}
					tm[r.ID] += time.Since(t0) / 20
					cnt[r.ID]++
				}
			}
		}
	}
	var ks []string
	for k := range tm {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return tm[ks[i]] > tm[ks[j]] })
	for _, k := range ks[:25] {
		fmt.Println(k, cnt[k], tm[k])
	}
}
