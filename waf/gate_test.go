package waf

import (
	"math/rand/v2"
	"testing"
)

// detectorGateHolds reports a detector that matched a value lacking every
// byte class of its gate (detectorGate): the gate would have hidden a match.
func detectorGateHolds(t *testing.T, in []byte) {
	t.Helper()
	for name, gate := range detectorGate {
		if classMask(in)&gate != 0 {
			continue
		}
		st := &evalState{}
		if _, _, ok := detectors[name](st, nil, in); ok {
			t.Fatalf("%s matched %q, which has none of its gate classes %#x", name, in, gate)
		}
	}
}

// TestDetectorGates: a gated detector never matches a value without its
// gate classes — neither random bytes nor the rules' own should-match
// examples (transformed) with the gate bytes taken out — and each rule's
// should-match examples do have them (a gate too tight would fail here too).
func TestDetectorGates(t *testing.T) {
	rs := loadRules(t)
	for _, r := range rs.Rules() {
		gate := detectorGate[r.Detector]
		if gate == 0 {
			continue
		}
		for _, raw := range r.Match {
			ex := []byte(raw)
			for _, name := range r.Transforms {
				ex = transforms[name](nil, ex)
			}
			if classMask(ex)&gate == 0 {
				t.Errorf("%s: should-match example %q has none of the %s gate classes", r.ID, ex, r.Detector)
			}
			var stripped []byte
			for i := 0; i < len(ex); i++ {
				if byteClass[ex[i]]&gate == 0 {
					stripped = append(stripped, ex[i])
				}
			}
			detectorGateHolds(t, stripped)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcSELECTunion or 1=1'\"<>();-#/*%&\\\x00\x01\x7f\xc3\xa9\xff\t\n({[]})^,.:=+$@`|!?~"
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(8) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		for name, gate := range detectorGate {
			// Drop the gate's bytes so every detector gets inputs it must
			// reject, not only those that happen to lack them.
			var in []byte
			for _, c := range b {
				if byteClass[c]&gate == 0 {
					in = append(in, c)
				}
			}
			st := &evalState{}
			if _, _, ok := detectors[name](st, nil, in); ok {
				t.Fatalf("%s matched %q, which has none of its gate classes", name, in)
			}
		}
	}
}

// FuzzDetectorGate: no gated detector matches a value lacking its gate.
func FuzzDetectorGate(f *testing.F) {
	for _, s := range []string{"abc", "CAST(", "CAST", "<p style=x>", "p style=x>", "a%zz", "\x01", "\xff", "\"onmouseover=alert(1)"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		detectorGateHolds(t, in)
	})
}
