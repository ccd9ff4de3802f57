package ahocorasick

import "unsafe"

// The text a scan sees. Every text is bracketed by MarkStart and MarkEnd, so
// a pattern can require the start or end of the text ("\x02select",
// "--\x03"); the real bytes 0x02 and 0x03 read as the marks too, which only
// finds more keys, never fewer. In a compact scan each run of blanks (IsBlank)
// is one symbol: SymBreak when it holds a line break (\n or \r), else
// SymSpace — so "union select" is found in "UNION\t  SELECT", and
// "union\nselect" in "union \r\n select". Patterns of a compact scan are
// written in that alphabet: Compact turns a text into it.
const (
	MarkStart = "\x02"
	MarkEnd   = "\x03"
	SymSpace  = " "
	SymBreak  = "\n"
)

// Scan sets, in bits, the key bit of every pattern found in data (with
// each run of blanks seen as one symbol, SymBreak or SymSpace, when compact),
// bracketed by MarkStart and MarkEnd, and in dirty the bits of the words it
// wrote (word i as bit i&63). bits must hold every key of m's patterns.
func (m *Matcher) Scan(data []byte, bits []uint64, dirty *uint64, compact bool) {
	if compact {
		m.scanCompact(data, bits, dirty)
		return
	}
	e := m.tab[m.classes[MarkStart[0]]]
	for _, b := range data {
		if e >= m.emitFrom {
			*dirty = m.emit(e, bits, *dirty)
		}
		e = m.step(e, uint32(m.classes[b]))
	}
	if e >= m.emitFrom {
		*dirty = m.emit(e, bits, *dirty)
	}
	e = m.step(e, uint32(m.classes[MarkEnd[0]]))
	if e >= m.emitFrom {
		*dirty = m.emit(e, bits, *dirty)
	}
}

// step returns the row of the state after row e on class c. It is
// unchecked, and safe by construction: e is a byte offset of a row of tab
// and c a class below nclass, so e + 4c is inside tab — Build refuses a
// table where that could fail (verify: every entry is a row offset, every
// class a scan can pass is a column), and FuzzScan builds tables from
// fuzzed patterns and compares every scan with a naive search.
//
// Why unsafe: the scan is one chain of dependent loads, a load per byte of
// every form of every value. Checked, as m.tab[e/4+c] with rows stored as
// indices, it adds an add (and a compare) to that chain. Measured by thread
// CPU time, interleaved over 12 rounds on the shared 2-core machine
// (median ratio checked/unchecked): BenchmarkScan of the User-Agent +11 %,
// EvaluatePOST4K +8 %, EvaluateGET +4 % — above the 3 % a bounds check may
// cost here. Slicing a column first (m.tab[c:][e], or a precomputed slice
// per class) keeps the add off the chain but cost as much or more.
func (m *Matcher) step(e, c uint32) uint32 {
	return *(*uint32)(unsafe.Add(unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.tab)), uintptr(c)*4), uintptr(e)))
}

// Compact classes (Matcher.cclasses): a blank byte's class is one of
// these, above any real class. A run's symbol is SymBreak when the AND of its
// classes is cclsNL (some line break), else SymSpace.
const (
	cclsNL = 0xFE // \n, \r
	cclsSP = 0xFF // other blanks
)

// scanCompact is Scan with each run of blanks seen as one symbol.
func (m *Matcher) scanCompact(data []byte, bits []uint64, dirty *uint64) {
	cls := &m.cclasses
	var d uint64 // dirty, kept in a register
	e := m.tab[cls[MarkStart[0]]]
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
	e = m.step(e, uint32(cls[MarkEnd[0]]))
	if e >= m.emitFrom {
		d = m.emit(e, bits, d)
	}
	*dirty |= d
}

// runClass returns the class of the symbol of a blank run whose classes
// ANDed are c.
func (m *Matcher) runClass(c uint32) uint32 {
	if c == cclsNL {
		return m.nlClass
	}
	return m.spClass
}

// emit sets the bits of the keys of the state whose row is e (at or above
// emitFrom), and returns dirty with the bits of the words it wrote.
func (m *Matcher) emit(e uint32, bits []uint64, dirty uint64) uint64 {
	i := int32(uint64(e)*m.rowDiv>>32) - m.first
	for _, kw := range m.outs[m.ostart[i]:m.ostart[i+1]] {
		bits[kw.word] |= kw.mask
		dirty |= 1 << (kw.word & 63)
	}
	return dirty
}

// states returns the number of automaton states.
func (m *Matcher) States() int {
	if m == nil {
		return 0
	}
	return len(m.tab) / m.nclass
}

// IsBlank reports whether c is a blank: a byte of which the compact scan sees
// each run as one symbol (space, \t, \n, \v, \f, \r).
func IsBlank(c byte) bool { return blankByte[c] }

// blankByte marks the blanks (IsBlank).
var blankByte = func() (t [256]bool) {
	for _, c := range []byte{' ', '\t', '\n', '\v', '\f', '\r'} {
		t[c] = true
	}
	return t
}()

// Compact returns s as the compact scan sees it: each run of blanks as one
// symbol.
func Compact(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if !blankByte[s[i]] {
			b = append(b, s[i])
			i++
			continue
		}
		sym := SymSpace[0]
		for ; i < len(s) && blankByte[s[i]]; i++ {
			if s[i] == '\n' || s[i] == '\r' {
				sym = SymBreak[0]
			}
		}
		b = append(b, sym)
	}
	return string(b)
}
