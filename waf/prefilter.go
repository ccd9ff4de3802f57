package waf

import (
	"sort"
)

// acPattern is one prefilter literal (lower-case ASCII folding applies)
// and the rule it admits.
type acPattern struct {
	lit  string
	rule int
}

// acMatcher is an Aho–Corasick automaton over ASCII-case-folded bytes,
// compiled to a dense DFA over byte classes.
type acMatcher struct {
	classes [256]uint8
	// cclasses are classes for the compact scan: blanks map to cclsNL or
	// cclsSP, whose symbols' classes are nlClass and spClass.
	cclasses         [256]uint8
	nlClass, spClass uint32
	nclass           int
	// tab is the scan's transition table: at state*nclass + class, the
	// next state's row offset (state*nclass) shifted left once, with the
	// low bit set when that state has outputs. Rows pre-multiplied keep a
	// multiplication off the chain of dependent loads each byte waits on.
	tab []uint32
	// rowDiv turns a row offset into its state: s = off*rowDiv >> 32,
	// exact because offsets are multiples of nclass below 2^31.
	rowDiv uint64
	// keys[start[s]:start[s+1]] are the keys found on reaching state s.
	keys     []uint32
	start    []uint32
	patterns int
	// emptyTrig: scanning an empty value finds a trigger key (value
	// boundary keys); when false an empty form triggers nothing.
	emptyTrig bool
}

// acBuild is an automaton while it is built: the transitions (state*nclass
// + class), the keys of the patterns ending at each state, its nearest
// proper suffix state with outputs (or -1), and whether it or a suffix has
// outputs.
type acBuild struct {
	next   []int32
	out    [][]int
	dict   []int32
	hasOut []bool
}

func buildAC(ps []acPattern) *acMatcher {
	m := &acMatcher{patterns: len(ps)}
	// Byte classes: every ASCII byte used in a literal (and its upper case)
	// gets its own class; all bytes ≥ 0x80 share one (so a literal's
	// non-ASCII byte stands for any of them: more hits, never fewer); all
	// others share class 0.
	cls := 1
	for _, p := range ps {
		for i := 0; i < len(p.lit); i++ {
			c := lower(p.lit[i])
			if m.classes[c] != 0 {
				continue
			}
			switch {
			case c >= 0x80:
				for h := 0x80; h < 0x100; h++ {
					m.classes[h] = uint8(cls)
				}
			case 'a' <= c && c <= 'z':
				m.classes[c], m.classes[c-32] = uint8(cls), uint8(cls)
			default:
				m.classes[c] = uint8(cls)
			}
			cls++
		}
	}
	m.nclass = cls
	m.cclasses = m.classes
	for c := range 256 {
		if blankByte[c] {
			m.cclasses[c] = cclsSP
			if c == '\n' || c == '\r' {
				m.cclasses[c] = cclsNL
			}
		}
	}
	m.nlClass, m.spClass = uint32(m.classes[symNL[0]]), uint32(m.classes[symSP[0]])
	// Trie.
	type node struct {
		child map[uint8]int
		out   []int
	}
	nodes := []node{{child: map[uint8]int{}}}
	for _, p := range ps {
		s := 0
		for i := 0; i < len(p.lit); i++ {
			c := m.classes[lower(p.lit[i])]
			nx, ok := nodes[s].child[c]
			if !ok {
				nx = len(nodes)
				nodes = append(nodes, node{child: map[uint8]int{}})
				nodes[s].child[c] = nx
			}
			s = nx
		}
		nodes[s].out = append(nodes[s].out, p.rule)
	}
	n := len(nodes)
	b := &acBuild{next: make([]int32, n*cls), out: make([][]int, n), dict: make([]int32, n), hasOut: make([]bool, n)}
	b.dict[0] = -1
	fail := make([]int, n)
	// BFS.
	queue := []int{}
	for c := 0; c < cls; c++ {
		if nx, ok := nodes[0].child[uint8(c)]; ok {
			b.next[c] = int32(nx)
			fail[nx] = 0
			queue = append(queue, nx)
		}
	}
	order := append(make([]int, 0, n), 0)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		order = append(order, s)
		// Own outputs, and the nearest proper suffix state with some.
		b.out[s] = dedupe(append([]int(nil), nodes[s].out...))
		if f := int32(fail[s]); len(b.out[f]) > 0 {
			b.dict[s] = f
		} else {
			b.dict[s] = b.dict[f]
		}
		b.hasOut[s] = len(b.out[s]) > 0 || b.dict[s] >= 0
		for c := 0; c < cls; c++ {
			if nx, ok := nodes[s].child[uint8(c)]; ok {
				b.next[s*cls+c] = int32(nx)
				fail[nx] = int(b.next[fail[s]*cls+c])
				queue = append(queue, nx)
			} else {
				b.next[s*cls+c] = b.next[fail[s]*cls+c]
			}
		}
	}
	b.renumber(order, cls)
	m.rowDiv = (1<<32 + uint64(cls) - 1) / uint64(cls)
	m.tab = make([]uint32, len(b.next))
	for i, x := range b.next {
		m.tab[i] = uint32(int(x)*cls) << 1
		if b.hasOut[x] {
			m.tab[i] |= 1
		}
	}
	m.flatten(b)
	return m
}

// flatten lists, per state, every key found on reaching it (its own and
// those of its suffix states), sorted and each once, in one array: an emit
// is one contiguous loop instead of a walk of the suffix chain.
func (m *acMatcher) flatten(b *acBuild) {
	n := len(b.out)
	m.start = make([]uint32, n+1)
	var flat []uint32
	var merged []int
	for s := 0; s < n; s++ {
		m.start[s] = uint32(len(flat))
		merged = append(merged[:0], b.out[s]...)
		if d := b.dict[s]; d >= 0 {
			// Breadth-first numbering: a suffix state precedes s.
			for _, k := range flat[m.start[d]:m.start[d+1]] {
				merged = append(merged, int(k))
			}
		}
		for _, k := range dedupe(merged) {
			flat = append(flat, uint32(k))
		}
	}
	m.start[n] = uint32(len(flat))
	m.keys = flat
}

// renumber gives the states new numbers in the order given (breadth
// first): the shallow states, where a scan of ordinary text spends nearly
// all its steps, then share a few hundred kilobytes of the transition table
// instead of being spread over megabytes of it.
func (b *acBuild) renumber(order []int, cls int) {
	n := len(order)
	id := make([]int32, n)
	for i, s := range order {
		id[s] = int32(i)
	}
	next := make([]int32, len(b.next))
	out := make([][]int, n)
	dict := make([]int32, n)
	hasOut := make([]bool, n)
	for old, s := range id {
		for c := 0; c < cls; c++ {
			next[int(s)*cls+c] = id[b.next[old*cls+c]]
		}
		out[s], hasOut[s] = b.out[old], b.hasOut[old]
		dict[s] = -1
		if d := b.dict[old]; d >= 0 {
			dict[s] = id[d]
		}
	}
	b.next, b.out, b.dict, b.hasOut = next, out, dict, hasOut
}

func dedupe(xs []int) []int {
	if len(xs) < 2 {
		return xs
	}
	sort.Ints(xs)
	out := xs[:1]
	for _, x := range xs[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// scan sets, in bits, the key bit of every pattern found in data (with
// each run of blanks seen as one symbol, symNL or symSP, when compact),
// bracketed by markBOT and markEOT. seen
// (one entry per state, owned by the caller) and stamp, new for each scan,
// make each state's outputs be emitted once per scan; a nil seen emits
// every time.
func (m *acMatcher) scan(data []byte, bits []uint64, dirty *uint64, compact bool, seen []uint32, stamp uint32) {
	if compact {
		m.scanCompact(data, bits, dirty, seen, stamp)
		return
	}
	tab := m.tab
	e := tab[m.classes[markBOT[0]]]
	for _, b := range data {
		if e&1 != 0 {
			m.emit(m.state(e), bits, dirty, seen, stamp)
		}
		e = tab[e>>1+uint32(m.classes[b])]
	}
	if e&1 != 0 {
		m.emit(m.state(e), bits, dirty, seen, stamp)
	}
	e = tab[e>>1+uint32(m.classes[markEOT[0]])]
	if e&1 != 0 {
		m.emit(m.state(e), bits, dirty, seen, stamp)
	}
}

// state returns the state of table entry e (its row offset times rowDiv).
func (m *acMatcher) state(e uint32) int32 {
	return int32(uint64(e>>1) * m.rowDiv >> 32)
}

// Compact classes (acMatcher.cclasses): a blank byte's class is one of
// these, above any real class, so the compact scan reads one table per byte.
const (
	cclsNL = 0xFE // \n, \r: the run is symNL
	cclsSP = 0xFF // other blanks: symSP unless the run has a line break
)

// scanCompact is scan with each run of blanks seen as one symbol.
func (m *acMatcher) scanCompact(data []byte, bits []uint64, dirty *uint64, seen []uint32, stamp uint32) {
	tab, cls := m.tab, &m.cclasses
	e := tab[cls[markBOT[0]]]
	if e&1 != 0 {
		m.emit(m.state(e), bits, dirty, seen, stamp)
	}
	var run uint32 // the class of the pending run's symbol, plus one (0: none)
	for _, b := range data {
		c := uint32(cls[b])
		if c >= cclsNL {
			if c == cclsNL {
				run = m.nlClass + 1
			} else if run == 0 {
				run = m.spClass + 1
			}
			continue
		}
		if run != 0 {
			e = tab[e>>1+run-1]
			if e&1 != 0 {
				m.emit(m.state(e), bits, dirty, seen, stamp)
			}
			run = 0
		}
		e = tab[e>>1+c]
		if e&1 != 0 {
			m.emit(m.state(e), bits, dirty, seen, stamp)
		}
	}
	if run != 0 {
		e = tab[e>>1+run-1]
		if e&1 != 0 {
			m.emit(m.state(e), bits, dirty, seen, stamp)
		}
	}
	e = tab[e>>1+uint32(cls[markEOT[0]])]
	if e&1 != 0 {
		m.emit(m.state(e), bits, dirty, seen, stamp)
	}
}

// emit sets the bits of state s's keys, and in dirty the bits of the words
// it wrote (word i as bit i&63).
func (m *acMatcher) emit(s int32, bits []uint64, dirty *uint64, seen []uint32, stamp uint32) {
	if seen != nil {
		if seen[s] == stamp {
			return // emitted already in this scan
		}
		seen[s] = stamp
	}
	for _, k := range m.keys[m.start[s]:m.start[s+1]] {
		bits[k>>6] |= 1 << (k & 63)
		*dirty |= 1 << ((k >> 6) & 63)
	}
}

// states returns the number of automaton states.
func (m *acMatcher) states() int {
	if m == nil {
		return 0
	}
	return len(m.start) - 1
}

// blankByte marks the bytes of which the compact scan sees each run as one
// symbol (isBlank).
var blankByte = func() (t [256]bool) {
	for _, c := range []byte{' ', '\t', '\n', '\v', '\f', '\r'} {
		t[c] = true
	}
	return t
}()

// compact returns s as the compact scan sees it: each run of blanks as one
// symbol.
func compact(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if !blankByte[s[i]] {
			b = append(b, s[i])
			i++
			continue
		}
		sym := symSP[0]
		for ; i < len(s) && blankByte[s[i]]; i++ {
			if s[i] == '\n' || s[i] == '\r' {
				sym = symNL[0]
			}
		}
		b = append(b, sym)
	}
	return string(b)
}
