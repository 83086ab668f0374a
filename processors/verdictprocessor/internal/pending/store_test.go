package pending

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func nth(n int) pcommon.TraceID {
	var id pcommon.TraceID
	id[0] = 0xEE
	binary.BigEndian.PutUint64(id[8:], uint64(n)+1)
	return id
}

// recorder is a Changes that remembers what it heard.
type recorder struct {
	changed  map[pcommon.TraceID]int
	released map[pcommon.TraceID]int
	slots    []int
}

func newRecorder() *recorder {
	return &recorder{changed: map[pcommon.TraceID]int{}, released: map[pcommon.TraceID]int{}}
}

func (r *recorder) Changed(e *Entry)            { r.changed[e.ID]++ }
func (r *recorder) Released(id pcommon.TraceID) { r.released[id]++ }
func (r *recorder) DecidedSlot(slot int)        { r.slots = append(r.slots, slot) }

// TestDecidedRingBounded: the ring of decided IDs holds exactly its size,
// the oldest ID leaves first, and deciding an ID it holds changes nothing
// (no second slot reported).
func TestDecidedRingBounded(t *testing.T) {
	const size = 8
	r := newRecorder()
	s := New(size, r)
	for i := range 3 * size {
		s.MarkDecided(nth(i))
		s.MarkDecided(nth(i))
		if n := s.DecidedRing().Len(); n > size {
			t.Fatalf("after %d IDs the ring holds %d, size %d", i+1, n, size)
		}
	}
	if len(r.slots) != 3*size {
		t.Fatalf("%d slot changes reported for %d IDs", len(r.slots), 3*size)
	}
	for i := range 3 * size {
		if want := i >= 2*size; s.Decided(nth(i)) != want {
			t.Errorf("Decided(trace %d) = %v, want %v (the last %d are kept)", i, !want, want, size)
		}
	}
}

// TestEvictKeepsStorageReleaseForgets: an eviction takes a trace out of
// memory without a word to storage; only a release tells it. A trace held
// again under the same ID after an eviction is not taken out by the
// evicted entry's release.
func TestEvictKeepsStorageReleaseForgets(t *testing.T) {
	r := newRecorder()
	s := New(4, r)
	now := time.Unix(1, 0)
	e := s.Add(nth(1), now)
	s.Changed(e)
	s.Evict(e)
	if e.Held() || s.Get(nth(1)) != nil || s.Len() != 0 {
		t.Fatal("an evicted trace is still held")
	}
	if r.released[nth(1)] != 0 {
		t.Fatal("an eviction told storage to forget the trace")
	}
	again := s.Add(nth(1), now)
	s.Release(e)
	if r.released[nth(1)] != 1 {
		t.Fatal("the release of an evicted trace did not reach storage")
	}
	if s.Get(nth(1)) != again || !again.Held() {
		t.Fatal("releasing the evicted entry took out the one held since")
	}
}

// TestStoreStaysConsistent: over random adds, evictions and releases, the
// map and the order agree, oldest first.
func TestStoreStaysConsistent(t *testing.T) {
	s := New(16, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var held []*Entry
	for i := range 2000 {
		switch rng.IntN(3) {
		case 0:
			if s.Get(nth(i%50)) == nil {
				held = append(held, s.Add(nth(i%50), time.Unix(int64(i), 0)))
			}
		case 1, 2:
			if len(held) == 0 {
				continue
			}
			j := rng.IntN(len(held))
			if rng.IntN(2) == 0 {
				s.Evict(held[j])
			} else {
				s.Release(held[j])
			}
			held = append(held[:j], held[j+1:]...)
		}
		n := 0
		var last time.Time
		s.Each(func(e *Entry) {
			n++
			if e.Created.Before(last) || s.Get(e.ID) != e {
				t.Fatalf("step %d: the order and the map disagree", i)
			}
			last = e.Created
		})
		if n != s.Len() || n != len(held) {
			t.Fatalf("step %d: order %d, map %d, held %d", i, n, s.Len(), len(held))
		}
	}
}
