// Package idring remembers the last n IDs seen (span IDs, trace IDs): a
// fixed ring with a map for lookups, so a component can tell what it has
// handled from what is new in bounded memory (about 40 bytes a span ID).
// The verdicts exporter and the verdict count connector remember verdict
// span IDs with it; the verdict processor remembers decided trace IDs, and
// stores the ring's slots as they are.
package idring

// Ring holds the last n IDs added. It is not safe for concurrent use.
type Ring[ID comparable] struct {
	ring []ID
	next int
	full bool
	set  map[ID]int // each ID's slot
}

// New returns a ring of n (at least 1) IDs.
func New[ID comparable](n int) *Ring[ID] {
	n = max(n, 1)
	return &Ring[ID]{ring: make([]ID, n), set: make(map[ID]int, min(n, 1<<16))}
}

// Has reports whether id is among the last n added.
func (r *Ring[ID]) Has(id ID) bool { _, ok := r.set[id]; return ok }

// Add remembers id, forgetting the oldest when the ring is full, and
// returns the slot it took. Adding an ID it holds changes nothing (-1).
func (r *Ring[ID]) Add(id ID) int {
	if r.Has(id) {
		return -1
	}
	if old := r.ring[r.next]; r.full {
		if s, ok := r.set[old]; ok && s == r.next {
			delete(r.set, old)
		}
	}
	slot := r.next
	r.ring[slot] = id
	r.set[id] = slot
	r.next++
	if r.next == len(r.ring) {
		r.next, r.full = 0, true
	}
	return slot
}

// Remove forgets id, emptying its slot (the zero ID), and returns the
// slot (-1: it held no such ID). The slot is taken again in its turn.
func (r *Ring[ID]) Remove(id ID) int {
	slot, ok := r.set[id]
	if !ok {
		return -1
	}
	delete(r.set, id)
	var zero ID
	r.ring[slot] = zero
	return slot
}

// Len is how many IDs it holds.
func (r *Ring[ID]) Len() int { return len(r.set) }

// Size is how many IDs it can hold.
func (r *Ring[ID]) Size() int { return len(r.ring) }

// Slots is the ring as it is, for storing it: slot i holds the ID added
// i-th since the last wrap (the zero ID in a slot not yet taken). The caller
// must not change it.
func (r *Ring[ID]) Slots() []ID { return r.ring }

// Next is the slot the next ID takes; Full whether the ring has wrapped
// (the oldest ID is then at Next).
func (r *Ring[ID]) Next() int { return r.next }

// Full reports whether the ring has wrapped: every slot holds an ID.
func (r *Ring[ID]) Full() bool { return r.full }
