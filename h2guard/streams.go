package h2guard

// Stream state bits.
const (
	stReqEnded  = 1 << iota // the client ended its side (END_STREAM)
	stRespBegan             // the server sent HEADERS on the stream
	stRespEnded             // the server ended its side (END_STREAM)
)

// streamSlot is one entry of a streamTable; id 0 marks a free slot (stream 0 is the connection).
type streamSlot struct {
	id    uint32
	state uint8
}

// streamTable is an open-addressing hash table of the client's live streams (linear probing,
// deletion by backward shift, so no tombstones). It starts empty, grows by doubling up to twice max
// slots and never shrinks: allocation happens only when a connection first holds more streams at
// once than before.
type streamTable struct {
	slots []streamSlot
	n     int
	max   int // most live entries; insert fails beyond
}

const minStreamSlots = 8

func (t *streamTable) index(id uint32) int {
	return int((id * 0x9e3779b1) >> 8 & uint32(len(t.slots)-1))
}

// get returns the slot of id, or nil.
func (t *streamTable) get(id uint32) *streamSlot {
	if len(t.slots) == 0 || id == 0 {
		return nil
	}
	mask := len(t.slots) - 1
	for i := t.index(id); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == id {
			return s
		}
		if s.id == 0 {
			return nil
		}
	}
}

// insert adds id with state and reports whether it did: false when the table already holds max
// entries (the stream is then not tracked). id must not be present.
func (t *streamTable) insert(id uint32, state uint8) bool {
	if id == 0 || t.n >= t.max {
		return false
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	i := t.index(id)
	for t.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = streamSlot{id: id, state: state}
	t.n++
	return true
}

func (t *streamTable) grow() {
	old := t.slots
	size := max(minStreamSlots, 2*len(old))
	t.slots = make([]streamSlot, size)
	mask := size - 1
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := t.index(s.id)
		for t.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// remove deletes id if present, shifting later entries of its probe run back so lookups never stop
// early at the hole.
func (t *streamTable) remove(id uint32) {
	if len(t.slots) == 0 || id == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.index(id)
	for t.slots[i].id != id {
		if t.slots[i].id == 0 {
			return
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s.id == 0 {
			break
		}
		// s may move into the hole at i when its home slot is not in the cyclic range (i, j].
		home := t.index(s.id)
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = streamSlot{}
}
