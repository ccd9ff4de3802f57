package waf

import (
	"fmt"
	"sort"
	"unsafe"
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
	// tab is the scan's transition table. A state's row is nclass entries;
	// the entry for a class is the next state's row as a byte offset in
	// tab (state*nclass*4). A scan step is then one load at the previous
	// load's result plus four times the class (computed off that chain):
	// the chain of dependent loads each byte waits on holds no shift, add
	// or multiplication.
	tab []uint32
	// States are numbered so that those with outputs come last: a row
	// offset at or above emitFrom has keys to emit.
	emitFrom uint32
	// rowDiv turns a row offset into its state: s = off*rowDiv >> 32,
	// exact because offsets are multiples of 4*nclass below 2^32.
	rowDiv uint64
	// outs[ostart[s-first]:ostart[s-first+1]] are the keys found on
	// reaching state s (first: the first state with outputs), as bit masks
	// of key words: a state's keys are few and mostly share a word.
	outs   []keyWord
	ostart []uint32
	first  int32
	// emptyTrig: scanning an empty value finds a trigger key (value
	// boundary keys); when false an empty form triggers nothing.
	emptyTrig bool
}

// keyWord is some keys of one word of a key bitset.
type keyWord struct {
	mask uint64
	word uint32
}

// acBuild is an automaton while it is built: the transitions (state*nclass
// + class), the keys of the patterns ending at each state, its nearest
// proper suffix state with outputs (or -1).
type acBuild struct {
	next []int32
	out  [][]int
	dict []int32
}

// emits reports whether reaching state s finds keys: its own or a suffix's.
func (b *acBuild) emits(s int) bool { return len(b.out[s]) > 0 || b.dict[s] >= 0 }

// maxACStates bounds an automaton's states (12 times the catalogue's
// largest): its transition table stays under ~200 MB and its row offsets
// far below the 32 bits they are stored in, whatever the rule files hold.
// The trie is built first and its size checked before the table exists.
const maxACStates = 1 << 19

func buildAC(ps []acPattern) (*acMatcher, error) {
	m := &acMatcher{}
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
				if len(nodes) >= maxACStates {
					return nil, fmt.Errorf("waf: the rules' prefilter literals make an automaton of more than %d states", maxACStates)
				}
				nx = len(nodes)
				nodes = append(nodes, node{child: map[uint8]int{}})
				nodes[s].child[c] = nx
			}
			s = nx
		}
		nodes[s].out = append(nodes[s].out, p.rule)
	}
	n := len(nodes)
	b := &acBuild{next: make([]int32, n*cls), out: make([][]int, n), dict: make([]int32, n)}
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
	// States with outputs last (each group breadth first, the root first).
	emitting := make([]int, 0, n)
	numbered := append(make([]int, 0, n), 0)
	for _, st := range order[1:] {
		if b.emits(st) {
			emitting = append(emitting, st)
		} else {
			numbered = append(numbered, st)
		}
	}
	first := len(numbered) // the root never emits: no key is empty (prune, literalKeys)
	numbered = append(numbered, emitting...)
	b.renumber(numbered, cls)
	row := uint64(cls) * 4 // n*row < 2^32: n ≤ maxACStates, cls ≤ 130
	m.first = int32(first)
	m.emitFrom = uint32(uint64(first) * row)
	m.rowDiv = (1<<32 + row - 1) / row
	m.tab = make([]uint32, len(b.next))
	for i, x := range b.next {
		m.tab[i] = uint32(uint64(x) * row)
	}
	m.flatten(b)
	return m, nil
}

// flatten lists, per state from m.first on, every key found on reaching
// it (its own and those of its suffix states) as key words, in one array:
// an emit is one contiguous loop instead of a walk of the suffix chain.
func (m *acMatcher) flatten(b *acBuild) {
	n := len(b.out)
	m.ostart = make([]uint32, 0, n-int(m.first)+1)
	var keys []int
	for s := int(m.first); s < n; s++ {
		m.ostart = append(m.ostart, uint32(len(m.outs)))
		keys = keys[:0]
		for d := int32(s); d >= 0; d = b.dict[d] {
			keys = append(keys, b.out[d]...)
		}
		keys = dedupe(keys)
		for i := 0; i < len(keys); {
			kw := keyWord{word: uint32(keys[i] >> 6)}
			for ; i < len(keys) && uint32(keys[i]>>6) == kw.word; i++ {
				kw.mask |= 1 << (uint(keys[i]) & 63)
			}
			m.outs = append(m.outs, kw)
		}
	}
	m.ostart = append(m.ostart, uint32(len(m.outs)))
}

// renumber gives the states new numbers in the order given: breadth first
// within the states without and with outputs. The shallow states, where a
// scan of ordinary text spends nearly all its steps, then share a few
// hundred kilobytes of the transition table instead of being spread over
// megabytes of it.
func (b *acBuild) renumber(order []int, cls int) {
	n := len(order)
	id := make([]int32, n)
	for i, s := range order {
		id[s] = int32(i)
	}
	next := make([]int32, len(b.next))
	out := make([][]int, n)
	dict := make([]int32, n)
	for old, s := range id {
		for c := 0; c < cls; c++ {
			next[int(s)*cls+c] = id[b.next[old*cls+c]]
		}
		out[s] = b.out[old]
		dict[s] = -1
		if d := b.dict[old]; d >= 0 {
			dict[s] = id[d]
		}
	}
	b.next, b.out, b.dict = next, out, dict
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
// bracketed by markBOT and markEOT, and in dirty the bits of the words it
// wrote (word i as bit i&63).
func (m *acMatcher) scan(data []byte, bits []uint64, dirty *uint64, compact bool) {
	if compact {
		m.scanCompact(data, bits, dirty)
		return
	}
	e := m.tab[m.classes[markBOT[0]]]
	for _, b := range data {
		if e >= m.emitFrom {
			*dirty = m.emit(e, bits, *dirty)
		}
		e = m.step(e, uint32(m.classes[b]))
	}
	if e >= m.emitFrom {
		*dirty = m.emit(e, bits, *dirty)
	}
	e = m.step(e, uint32(m.classes[markEOT[0]]))
	if e >= m.emitFrom {
		*dirty = m.emit(e, bits, *dirty)
	}
}

// step returns the row of the state after row e on class c. Unchecked:
// buildAC makes every entry of tab a row offset inside it, and every class
// a scan passes is below nclass (TestScanMatchesNaive, FuzzScan).
func (m *acMatcher) step(e, c uint32) uint32 {
	return *(*uint32)(unsafe.Add(unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.tab)), uintptr(c)*4), uintptr(e)))
}

// Compact classes (acMatcher.cclasses): a blank byte's class is one of
// these, above any real class. A run's symbol is symNL when the AND of its
// classes is cclsNL (some line break), else symSP.
const (
	cclsNL = 0xFE // \n, \r
	cclsSP = 0xFF // other blanks
)

// scanCompact is scan with each run of blanks seen as one symbol.
func (m *acMatcher) scanCompact(data []byte, bits []uint64, dirty *uint64) {
	cls := &m.cclasses
	var d uint64 // dirty, kept in a register
	e := m.tab[cls[markBOT[0]]]
	if e >= m.emitFrom {
		d = m.emit(e, bits, d)
	}
	for i := 0; i < len(data); i++ {
		c := uint32(cls[data[i]])
		if c >= cclsNL {
			for i+1 < len(data) && cls[data[i+1]] >= cclsNL {
				i++
				c &= uint32(cls[data[i]])
			}
			c = m.runClass(c)
		}
		e = m.step(e, c)
		if e >= m.emitFrom {
			d = m.emit(e, bits, d)
		}
	}
	e = m.step(e, uint32(cls[markEOT[0]]))
	if e >= m.emitFrom {
		d = m.emit(e, bits, d)
	}
	*dirty |= d
}

// runClass returns the class of the symbol of a blank run whose classes
// ANDed are c.
func (m *acMatcher) runClass(c uint32) uint32 {
	if c == cclsNL {
		return m.nlClass
	}
	return m.spClass
}

// emit sets the bits of the keys of the state whose row is e (at or above
// emitFrom), and returns dirty with the bits of the words it wrote.
func (m *acMatcher) emit(e uint32, bits []uint64, dirty uint64) uint64 {
	i := int32(uint64(e)*m.rowDiv>>32) - m.first
	for _, kw := range m.outs[m.ostart[i]:m.ostart[i+1]] {
		bits[kw.word] |= kw.mask
		dirty |= 1 << (kw.word & 63)
	}
	return dirty
}

// states returns the number of automaton states.
func (m *acMatcher) states() int {
	if m == nil {
		return 0
	}
	return len(m.tab) / m.nclass
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
