// Package launches remembers each launch of the phone: the pool tally and
// live counts of its recent turns, by turn index, which the pool and state
// rules read across turns when a turn carries no history of its own. It is
// bounded (a cap on launches, each idle one forgotten, a few turns each)
// and tells a Changes what must reach storage; the codec of its stored
// form is here too, so every processor that keeps launches stores them
// alike (docs/decisions/0226-the-collector-remembers-each-launch.md).
package launches

import (
	"container/list"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// Key is one launch: the phone's app.installation.id and
// service.instance.id.
type Key struct {
	Installation string
	Instance     string
}

// KeyOf is the launch a phone's resource names; ok is false when it names
// no service.instance.id (its turns cannot be told apart from another
// launch's).
func KeyOf(res pcommon.Resource) (Key, bool) {
	a := res.Attributes()
	var k Key
	if v, ok := a.Get(semconv.ServiceInstanceID); ok && v.Type() == pcommon.ValueTypeStr {
		k.Instance = v.Str()
	}
	if v, ok := a.Get(semconv.AppInstallationID); ok && v.Type() == pcommon.ValueTypeStr {
		k.Installation = v.Str()
	}
	if k.Instance == "" || len(k.Instance) > verdict.MaxValueBytes || len(k.Installation) > verdict.MaxValueBytes {
		return Key{}, false
	}
	return k, true
}

// Turn is one kept turn of a launch: what a later turn reads of it, and
// its trace.
type Turn struct {
	verdict.PastTurn
	Trace pcommon.TraceID
}

// Launch is what is kept of one launch.
type Launch struct {
	Key Key
	// Turns are its most recent turns by index, ascending.
	Turns []Turn
	// Seen is when a turn of it last arrived.
	Seen time.Time

	elem *list.Element
}

// Changes hears what must reach storage.
type Changes interface {
	// LaunchChanged: l gained a turn (or is new).
	LaunchChanged(l *Launch)
	// LaunchForgotten: the launch was evicted or idled out.
	LaunchForgotten(k Key)
}

type nobody struct{}

func (nobody) LaunchChanged(*Launch) {}
func (nobody) LaunchForgotten(Key)   {}

// Book is the launches, most recently seen first. It is used under its
// owner's lock.
type Book struct {
	max     int
	idle    time.Duration
	keep    int
	by      map[Key]*Launch
	order   *list.List
	changes Changes
}

// Reasons a launch is forgotten.
const (
	ForgotLimit = "limit"
	ForgotIdle  = "idle"
)

// KeptTurns is how many recent turns of each launch a processor keeps: a
// turn reads up to semconv.LiveHistory earlier turns, and twice a turn
// and its history are kept, so a turn that arrives late still finds its
// neighbours.
const KeptTurns = 2 * (semconv.LiveHistory + 1)

// New keeps at most max launches, none idle longer than idle, and of each
// its most recent keep turns.
func New(max int, idle time.Duration, keep int) *Book {
	return &Book{max: max, idle: idle, keep: max1(keep), by: map[Key]*Launch{}, order: list.New(), changes: nobody{}}
}

func max1(n int) int { return max(n, 1) }

// ReportTo makes c hear what must reach storage from now on.
func (b *Book) ReportTo(c Changes) { b.changes = c }

// Len is how many launches are kept.
func (b *Book) Len() int { return len(b.by) }

// Record keeps turn t of launch k, arriving now. It reports whether the
// book changed, and which launches it forgot to make room.
func (b *Book) Record(k Key, t Turn, now time.Time) (changed bool, forgot int) {
	l, ok := b.by[k]
	if !ok {
		for b.max > 0 && len(b.by) >= b.max {
			b.forget(b.order.Back().Value.(*Launch))
			forgot++
		}
		l = &Launch{Key: k}
		l.elem = b.order.PushFront(l)
		b.by[k] = l
	} else {
		b.order.MoveToFront(l.elem)
	}
	l.Seen = now
	if !l.add(t, b.keep) {
		return !ok, forgot
	}
	b.changes.LaunchChanged(l)
	return true, forgot
}

// add inserts t in index order, keeping the most recent keep turns; it
// reports whether t was kept (a turn already kept, or older than every
// kept one when full, is not).
func (l *Launch) add(t Turn, keep int) bool {
	i, found := slices.BinarySearchFunc(l.Turns, t.Index, func(e Turn, idx int64) int {
		switch {
		case e.Index < idx:
			return -1
		case e.Index > idx:
			return 1
		}
		return 0
	})
	if found || (len(l.Turns) >= keep && i == 0) {
		return false
	}
	l.Turns = slices.Insert(l.Turns, i, t)
	if len(l.Turns) > keep {
		l.Turns = slices.Delete(l.Turns, 0, len(l.Turns)-keep)
	}
	return true
}

// Restore keeps a launch read back from storage, as it was.
func (b *Book) Restore(l *Launch) {
	if old, ok := b.by[l.Key]; ok {
		b.order.Remove(old.elem)
	}
	// Oldest seen last, so restoring in any order keeps the recency.
	e := b.order.Front()
	for e != nil && e.Value.(*Launch).Seen.After(l.Seen) {
		e = e.Next()
	}
	if e == nil {
		l.elem = b.order.PushBack(l)
	} else {
		l.elem = b.order.InsertBefore(l, e)
	}
	b.by[l.Key] = l
}

// Earlier is what the book kept of launch k's turns before index.
func (b *Book) Earlier(k Key, index int64) *verdict.Earlier {
	e := &verdict.Earlier{}
	if l, ok := b.by[k]; ok {
		for _, t := range l.Turns {
			if t.Index < index {
				e.Turns = append(e.Turns, t.PastTurn)
			}
		}
	}
	return e
}

// Has reports whether turn index of launch k was seen.
func (b *Book) Has(k Key, index int64) bool {
	_, ok := b.TraceOf(k, index)
	return ok
}

// TraceOf is the trace of turn index of launch k, when kept.
func (b *Book) TraceOf(k Key, index int64) (pcommon.TraceID, bool) {
	if l, ok := b.by[k]; ok {
		for _, t := range l.Turns {
			if t.Index == index {
				return t.Trace, true
			}
		}
	}
	return pcommon.TraceID{}, false
}

// Expire forgets the launches idle since before now minus the idle time;
// it returns how many.
func (b *Book) Expire(now time.Time) int {
	n := 0
	for e := b.order.Back(); e != nil; {
		l := e.Value.(*Launch)
		if now.Sub(l.Seen) < b.idle {
			break
		}
		e = e.Prev()
		b.forget(l)
		n++
	}
	return n
}

func (b *Book) forget(l *Launch) {
	b.order.Remove(l.elem)
	delete(b.by, l.Key)
	b.changes.LaunchForgotten(l.Key)
}
