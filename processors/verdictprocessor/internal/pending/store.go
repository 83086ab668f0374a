// Package pending holds the verdict processor's traces between their first
// span and their verdict: each trace's readings and when they came, in
// arrival order, and the ring of trace IDs recently decided. It knows
// nothing of storage: what must reach storage it reports to a Changes
// (persistence, or nothing), and the one way a trace leaves storage is
// Release, which the processor calls once the trace's verdict was
// accepted downstream or the trace was dropped
// (docs/decisions/0227-the-processor-in-layers.md).
package pending

import (
	"container/list"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/internal/leaf/idring"
	"github.com/percause/percause/verdict"
)

// Entry is one held trace.
type Entry struct {
	verdict.Trace
	// Created is when its first span arrived, TurnAt when its voice.turn
	// did, LastAt when a reading last did (the quiet window).
	Created, TurnAt, LastAt time.Time
	// Delivery is where its verdict is.
	Delivery Delivery

	elem *list.Element // in Store.order; nil once it left memory
}

// Delivery is where a held trace's verdict is.
type Delivery struct {
	// Sending: its verdict is on its way downstream; nothing else decides
	// it meanwhile.
	Sending bool
	// Refused verdicts are sent again from RetryAt; Refusals counts the
	// attempts, from FirstRefusal (a verdict refused for max_age after its
	// first refusal is given up). Forced is the refused verdict's forced
	// reason, kept for its retry.
	RetryAt      time.Time
	Refusals     int
	FirstRefusal time.Time
	Forced       verdict.Forced
}

// Held reports whether the entry is still in the store's memory.
func (e *Entry) Held() bool { return e.elem != nil }

// Changes hears what must reach storage.
type Changes interface {
	// Changed: e's readings changed (or e is new); they must be kept.
	Changed(e *Entry)
	// Released: the trace is done with (its verdict accepted downstream, or
	// dropped without one); what was kept of it goes.
	Released(id pcommon.TraceID)
	// DecidedSlot: a slot of the decided ring changed.
	DecidedSlot(slot int)
}

// Store is the held traces, oldest first, and the decided ring. It is used
// under its owner's lock.
type Store struct {
	held    map[pcommon.TraceID]*Entry
	order   *list.List
	decided *idring.Ring[pcommon.TraceID]
	changes Changes
}

// New makes a store remembering decidedSize decided trace IDs, telling
// changes (nil: nobody) what must reach storage.
func New(decidedSize int, changes Changes) *Store {
	if changes == nil {
		changes = nobody{}
	}
	return &Store{held: map[pcommon.TraceID]*Entry{}, order: list.New(),
		decided: idring.New[pcommon.TraceID](decidedSize), changes: changes}
}

// ReportTo makes changes hear what must reach storage from now on.
func (s *Store) ReportTo(changes Changes) { s.changes = changes }

// Get returns the held trace with this ID, or nil.
func (s *Store) Get(id pcommon.TraceID) *Entry { return s.held[id] }

// Len is how many traces are held.
func (s *Store) Len() int { return len(s.held) }

// Add holds a new trace whose first span arrives now.
func (s *Store) Add(id pcommon.TraceID, now time.Time) *Entry {
	e := &Entry{Trace: verdict.Trace{ID: id}}
	s.insert(e, now)
	return e
}

// Restore holds a trace read back from storage, as arriving now (a
// restored turn waits afresh).
func (s *Store) Restore(e *Entry, now time.Time) {
	s.insert(e, now)
	if e.Turn != nil {
		e.TurnAt = now
	}
}

func (s *Store) insert(e *Entry, now time.Time) {
	e.Created, e.LastAt = now, now
	e.elem = s.order.PushBack(e)
	s.held[e.ID] = e
}

// Changed records that e's readings changed.
func (s *Store) Changed(e *Entry) { s.changes.Changed(e) }

// Evict takes e out of memory only: its verdict is on its way (or about
// to be), and until it is accepted what storage keeps of e stays there.
func (s *Store) Evict(e *Entry) {
	if e.elem == nil {
		return
	}
	s.order.Remove(e.elem)
	e.elem = nil
	if s.held[e.ID] == e {
		delete(s.held, e.ID)
	}
}

// Release is done with e: its verdict was accepted downstream, or it is
// dropped without one. It leaves memory, if still there, and storage.
func (s *Store) Release(e *Entry) {
	s.Evict(e)
	s.changes.Released(e.ID)
}

// Rehold holds again, as arriving now, a trace that left memory (its
// verdict evicted or let go, then refused, or not stored): it is kept
// until its verdict is accepted. It does nothing to a trace still held.
func (s *Store) Rehold(e *Entry, now time.Time) {
	if e.elem != nil {
		return
	}
	s.insert(e, now)
	s.changes.Changed(e)
}

// Undecide forgets that id was decided: its verdict's acceptance was not
// stored, so it is to be decided again.
func (s *Store) Undecide(id pcommon.TraceID) {
	if slot := s.decided.Remove(id); slot >= 0 {
		s.changes.DecidedSlot(slot)
	}
}

// MarkDecided remembers id as decided.
func (s *Store) MarkDecided(id pcommon.TraceID) {
	if slot := s.decided.Add(id); slot >= 0 {
		s.changes.DecidedSlot(slot)
	}
}

// Decided reports whether id was decided recently.
func (s *Store) Decided(id pcommon.TraceID) bool { return s.decided.Has(id) }

// DecidedRing is the ring of decided IDs, for persistence to store and
// restore.
func (s *Store) DecidedRing() *idring.Ring[pcommon.TraceID] { return s.decided }

// Oldest is the trace held longest, or nil.
func (s *Store) Oldest() *Entry {
	if f := s.order.Front(); f != nil {
		return f.Value.(*Entry)
	}
	return nil
}

// OldestNotSending is the trace held longest whose verdict is not on its
// way (one being sent is settled by its sender), or the oldest of all when
// every one is.
func (s *Store) OldestNotSending() *Entry {
	for f := s.order.Front(); f != nil; f = f.Next() {
		if e := f.Value.(*Entry); !e.Delivery.Sending {
			return e
		}
	}
	return s.Oldest()
}

// OldestToEvict is the trace to make room with: the one held longest
// whose verdict is neither on its way nor refused before (a refused one
// was kept because there is nowhere else to keep it); else the one held
// longest whose verdict is on its way (its sender settles it). Nil: every
// trace held waits to be sent again, and there is no room to make.
func (s *Store) OldestToEvict() *Entry {
	var sending *Entry
	for f := s.order.Front(); f != nil; f = f.Next() {
		e := f.Value.(*Entry)
		switch {
		case !e.Delivery.Sending && e.Delivery.Refusals == 0:
			return e
		case e.Delivery.Sending && sending == nil:
			sending = e
		}
	}
	return sending
}

// Each calls fn for every held trace, oldest first; fn may evict or
// release the trace it is given.
func (s *Store) Each(fn func(e *Entry)) {
	for f := s.order.Front(); f != nil; {
		next := f.Next()
		fn(f.Value.(*Entry))
		f = next
	}
}

// nobody is the Changes of a store kept in memory only.
type nobody struct{}

func (nobody) Changed(*Entry)           {}
func (nobody) Released(pcommon.TraceID) {}
func (nobody) DecidedSlot(int)          {}
