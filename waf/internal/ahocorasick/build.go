package ahocorasick

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// Pattern is one literal to look for, ASCII case-insensitively, and the key
// a scan reports when it occurs. Several patterns may share a key (any one
// of them sets it).
type Pattern struct {
	Lit string // the literal
	Key int    // the key it stands for: its bit in the scan's key bitset
}

// Matcher is an Aho–Corasick automaton over ASCII-case-folded bytes,
// compiled to a dense DFA over byte classes. It is immutable once built.
type Matcher struct {
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
	// or multiplication. Build checks that every entry is a row (verify).
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

// MaxStates bounds an automaton's states (12 times the largest that edge's
// rule catalogue makes): its transition table stays under ~200 MB and its
// row offsets far below the 32 bits they are stored in, whatever the
// patterns. The trie is built first and its size checked before the table
// exists.
const MaxStates = 1 << 19

// ErrTooManyStates is Build's error for patterns that make an automaton of
// more than MaxStates states.
var ErrTooManyStates = errors.New("ahocorasick: more than " + strconv.Itoa(MaxStates) + " states")

// ErrEmptyPattern is Build's error for a pattern with no bytes: it would be
// found in every text, and the scan's state numbering relies on the root
// finding nothing.
var ErrEmptyPattern = errors.New("ahocorasick: empty pattern")

// Build compiles the patterns into a Matcher, and verifies it.
func Build(ps []Pattern) (*Matcher, error) {
	m := &Matcher{}
	for _, p := range ps {
		if p.Lit == "" {
			return nil, ErrEmptyPattern
		}
	}
	// Byte classes: every ASCII byte used in a literal (and its upper case)
	// gets its own class; all bytes ≥ 0x80 share one (so a literal's
	// non-ASCII byte stands for any of them: more hits, never fewer); all
	// others share class 0.
	cls := 1
	for _, p := range ps {
		for i := 0; i < len(p.Lit); i++ {
			c := lower(p.Lit[i])
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
	m.nlClass, m.spClass = uint32(m.classes[SymBreak[0]]), uint32(m.classes[SymSpace[0]])
	// Trie.
	type node struct {
		child map[uint8]int
		out   []int
	}
	nodes := []node{{child: map[uint8]int{}}}
	for _, p := range ps {
		s := 0
		for i := 0; i < len(p.Lit); i++ {
			c := m.classes[lower(p.Lit[i])]
			nx, ok := nodes[s].child[c]
			if !ok {
				if len(nodes) >= MaxStates {
					return nil, ErrTooManyStates
				}
				nx = len(nodes)
				nodes = append(nodes, node{child: map[uint8]int{}})
				nodes[s].child[c] = nx
			}
			s = nx
		}
		nodes[s].out = append(nodes[s].out, p.Key)
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
	first := len(numbered) // the root never emits: no pattern is empty
	numbered = append(numbered, emitting...)
	b.renumber(numbered, cls)
	row := uint64(cls) * 4 // n*row < 2^32: n ≤ MaxStates, cls ≤ 130
	m.first = int32(first)
	m.emitFrom = uint32(uint64(first) * row)
	m.rowDiv = (1<<32 + row - 1) / row
	m.tab = make([]uint32, len(b.next))
	for i, x := range b.next {
		m.tab[i] = uint32(uint64(x) * row)
	}
	m.flatten(b)
	if err := m.verify(); err != nil {
		return nil, err
	}
	return m, nil
}

// verify checks what the unchecked scan step takes for granted (step), so
// that a fault in Build is an error at load and never a scan that reads
// outside the table: every class a scan can look up is a column (below
// nclass), every entry of the table is the byte offset of a row inside it,
// and the emitting states' key lists are where emit looks for them.
func (m *Matcher) verify() error {
	n := uint64(m.nclass)
	row := 4 * n
	size := 4 * uint64(len(m.tab)) // the table's bytes
	if n == 0 || size%row != 0 || size >= 1<<32 {
		return fmt.Errorf("ahocorasick: a table of %d entries is not whole rows of %d", len(m.tab), n)
	}
	for c, k := range m.classes {
		if uint64(k) >= n {
			return fmt.Errorf("ahocorasick: byte %#x has class %d of %d", c, k, n)
		}
	}
	for c, k := range m.cclasses {
		if k < cclsNL && uint64(k) >= n {
			return fmt.Errorf("ahocorasick: byte %#x has compact class %d of %d", c, k, n)
		}
	}
	if uint64(m.nlClass) >= n || uint64(m.spClass) >= n {
		return fmt.Errorf("ahocorasick: blank-run classes %d and %d of %d", m.nlClass, m.spClass, n)
	}
	for i, x := range m.tab {
		if uint64(x)%row != 0 || uint64(x) >= size {
			return fmt.Errorf("ahocorasick: table entry %d is %d, not the offset of a row of a %d-byte table", i, x, size)
		}
	}
	states := int(size / row)
	if m.first < 1 || int(m.first) > states || uint64(m.emitFrom) != uint64(m.first)*row || len(m.ostart) != states-int(m.first)+1 {
		return fmt.Errorf("ahocorasick: %d emitting states of %d (first %d) with %d key lists", states-int(m.first), states, m.first, len(m.ostart)-1)
	}
	for s := int(m.first); s < states; s++ {
		if got := int(uint64(s) * row * m.rowDiv >> 32); got != s {
			return fmt.Errorf("ahocorasick: row %d maps back to state %d, not %d", uint64(s)*row, got, s)
		}
	}
	for i := 1; i < len(m.ostart); i++ {
		if m.ostart[i] < m.ostart[i-1] || int(m.ostart[i]) > len(m.outs) {
			return fmt.Errorf("ahocorasick: key list %d ends at %d of %d", i-1, m.ostart[i], len(m.outs))
		}
	}
	return nil
}

// flatten lists, per state from m.first on, every key found on reaching
// it (its own and those of its suffix states) as key words, in one array:
// an emit is one contiguous loop instead of a walk of the suffix chain.
func (m *Matcher) flatten(b *acBuild) {
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

// lower returns c with A–Z mapped to a–z.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 32
	}
	return c
}
