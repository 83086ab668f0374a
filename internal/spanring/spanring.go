// Package spanring remembers the last n span IDs seen: a fixed ring with a
// map for lookups, so a component can tell a span it has handled from a new
// one in bounded memory (about 40 bytes an ID).
package spanring

import "go.opentelemetry.io/collector/pdata/pcommon"

// Ring holds the last n span IDs added. It is not safe for concurrent use.
type Ring struct {
	ring []pcommon.SpanID
	next int
	set  map[pcommon.SpanID]struct{}
}

// New returns a ring of n (at least 1) IDs.
func New(n int) *Ring {
	n = max(n, 1)
	return &Ring{ring: make([]pcommon.SpanID, n), set: make(map[pcommon.SpanID]struct{}, min(n, 1<<16))}
}

// Has reports whether id is among the last n added.
func (r *Ring) Has(id pcommon.SpanID) bool { _, ok := r.set[id]; return ok }

// Add remembers id, forgetting the oldest when the ring is full. Adding an
// ID it holds changes nothing.
func (r *Ring) Add(id pcommon.SpanID) {
	if r.Has(id) {
		return
	}
	if old := r.ring[r.next]; !old.IsEmpty() {
		delete(r.set, old)
	}
	r.ring[r.next] = id
	r.set[id] = struct{}{}
	r.next = (r.next + 1) % len(r.ring)
}

// Len is how many IDs it holds.
func (r *Ring) Len() int { return len(r.set) }
