// Package launches remembers each launch of the phone: the pool tally and
// live counts of its recent turns, by turn index, which the pool and state
// rules read across turns when a turn carries no history of its own. It is
// bounded (a cap on launches, each idle one forgotten, a few turns each)
// and tells a Changes what must reach storage; the codec of its stored
// form is here too, so every processor that keeps launches stores them
// alike (docs/decisions/0226-the-collector-remembers-each-launch.md).
package launches

import (
	"cmp"
	"container/list"
	"fmt"
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

// KeptTurn is one kept turn of a launch: what a later turn reads of it, its
// trace, what places it among the launch's turns, and the run it was
// placed in.
type KeptTurn struct {
	verdict.PastTurn
	Trace pcommon.TraceID
	// At is the turn's end on the phone's clock (Unix nanoseconds; 0 when
	// not sent): the launch's turns are ordered by it, then by index.
	At int64
	// App and Device are its app_uptime and device_uptime in seconds
	// (NoUptime when not reported).
	App, Device float64
	// Run numbers the launches begun under one service.instance.id (a
	// client that reuses it across a relaunch): a turn reads the earlier
	// turns of its own run only.
	Run uint32
}

// NoUptime marks an uptime not reported.
const NoUptime = -1

// Launch is what is kept of one service.instance.id: its most recent
// turns, and how many runs (launches) it began.
type Launch struct {
	Key Key
	// Turns are its most recent turns in order: by At, then by index.
	Turns []KeptTurn
	// Runs is how many runs were begun under the key; the next is numbered
	// Runs.
	Runs uint32
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

// Record keeps turn t of launch k, arriving now, in the run its place
// among the launch's turns gives it (t.Run is ignored). It returns the
// run, whether the book changed, and which launches it forgot to make
// room.
func (b *Book) Record(k Key, t KeptTurn, now time.Time) (run uint32, changed bool, forgot int) {
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
	run, kept := l.add(t, b.keep)
	if !kept {
		return run, !ok, forgot
	}
	b.changes.LaunchChanged(l)
	return run, true, forgot
}

// before orders a launch's turns: by their end, then by index (turns that
// end at the same time, and a turn without a time (a launch stored before
// times were kept, or a client that sends none) beside any other, are
// taken in index order).
func (t *KeptTurn) before(o *KeptTurn) bool {
	if t.At != o.At && t.At != 0 && o.At != 0 {
		return t.At < o.At
	}
	return t.Index < o.Index
}

// Begins reports whether a launch begins between a and b, the turn after
// it in order (docs/decisions/0249): the turn index does not go up,
// app_uptime drops (a relaunch) or device_uptime drops (a reboot). Where
// the launch's start (the end less app_uptime) moved, nothing else said,
// the turns are one launch: a phone asleep between turns grows its uptime
// more slowly than its clock, and a relaunch under a fresh ID is told by
// the ID.
func Begins(a, b *KeptTurn) bool {
	return b.Index <= a.Index ||
		a.App != NoUptime && b.App != NoUptime && b.App < a.App ||
		a.Device != NoUptime && b.Device != NoUptime && b.Device < a.Device
}

// place finds where t goes among l's turns and the run it belongs to: its
// own run when its trace is kept already (found), else the run of the turn
// before it when no launch begins between them, else the run of the turn
// after it when none begins between those, else a new run (numbered
// l.Runs). A run that holds t's index already is not t's: a new one is.
func (l *Launch) place(t *KeptTurn) (pos int, run uint32, found bool) {
	for i := range l.Turns {
		if l.Turns[i].Trace == t.Trace {
			return i, l.Turns[i].Run, true
		}
	}
	pos = len(l.Turns)
	for pos > 0 && t.before(&l.Turns[pos-1]) {
		pos--
	}
	run = l.Runs
	switch {
	case pos > 0 && !Begins(&l.Turns[pos-1], t):
		run = l.Turns[pos-1].Run
	case pos < len(l.Turns) && !Begins(t, &l.Turns[pos]):
		run = l.Turns[pos].Run
	}
	if run != l.Runs && l.holds(run, t.Index) {
		run = l.Runs
	}
	return pos, run, false
}

// holds reports whether run of l has a turn of this index kept.
func (l *Launch) holds(run uint32, index int64) bool {
	for i := range l.Turns {
		if l.Turns[i].Run == run && l.Turns[i].Index == index {
			return true
		}
	}
	return false
}

// add places t among l's turns, keeping the most recent keep of them; it
// returns t's run and whether t was kept (a turn already kept, or before
// every kept one when full, is not).
func (l *Launch) add(t KeptTurn, keep int) (uint32, bool) {
	pos, run, found := l.place(&t)
	if found || (len(l.Turns) >= keep && pos == 0) {
		return run, false
	}
	if run == l.Runs {
		l.Runs++
	}
	t.Run = run
	l.Turns = slices.Insert(l.Turns, pos, t)
	if len(l.Turns) > keep {
		l.Turns = slices.Delete(l.Turns, 0, len(l.Turns)-keep)
	}
	return run, true
}

// RunOf is the run of launch k that turn t belongs to: the run it was
// kept in, or where it would be placed now (t need carry only its trace,
// index, end and uptimes).
func (b *Book) RunOf(k Key, t *KeptTurn) uint32 {
	l, ok := b.by[k]
	if !ok {
		return 0
	}
	_, run, _ := l.place(t)
	return run
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

// Earlier is what the book kept of run of launch k's turns before index,
// in index order.
func (b *Book) Earlier(k Key, run uint32, index int64) *verdict.Earlier {
	e := &verdict.Earlier{}
	if l, ok := b.by[k]; ok {
		for _, t := range l.Turns {
			if t.Run == run && t.Index < index {
				e.Turns = append(e.Turns, t.PastTurn)
			}
		}
	}
	slices.SortFunc(e.Turns, func(a, b verdict.PastTurn) int { return cmp.Compare(a.Index, b.Index) })
	return e
}

// Began says why run of launch k began with the turn of trace, when that
// turn is the run's first kept and a turn of an earlier run is kept before
// it ("" otherwise): the evidence of a relaunch under a reused
// service.instance.id.
func (b *Book) Began(k Key, run uint32, trace pcommon.TraceID) string {
	l, ok := b.by[k]
	if !ok || run == 0 {
		return ""
	}
	for i := range l.Turns {
		t := &l.Turns[i]
		if t.Run != run {
			continue
		}
		if t.Trace != trace || i == 0 {
			return ""
		}
		return beganSentence(&l.Turns[i-1], t)
	}
	return ""
}

// beganSentence says what began a launch between a and b.
func beganSentence(a, b *KeptTurn) string {
	why := fmt.Sprintf("the turn index did not go up (turn %d after turn %d)", b.Index, a.Index)
	switch {
	case b.Index > a.Index && a.App != NoUptime && b.App != NoUptime && b.App < a.App:
		why = fmt.Sprintf("app_uptime dropped (%.2f s after %.2f s)", b.App, a.App)
	case b.Index > a.Index && a.Device != NoUptime && b.Device != NoUptime && b.Device < a.Device:
		why = fmt.Sprintf("device_uptime dropped (%.2f s after %.2f s: a reboot)", b.Device, a.Device)
	case b.Index > a.Index:
		// placed after a turn of its run's neighbour: no kept turn says more
		return ""
	}
	return "a new launch under the same service.instance.id: " + why
}

// Get is what is kept of launch k (nil when nothing is).
func (b *Book) Get(k Key) *Launch { return b.by[k] }

// Has reports whether turn index of run of launch k was seen.
func (b *Book) Has(k Key, run uint32, index int64) bool {
	_, ok := b.TraceOf(k, run, index)
	return ok
}

// TraceOf is the trace of turn index of run of launch k, when kept.
func (b *Book) TraceOf(k Key, run uint32, index int64) (pcommon.TraceID, bool) {
	if l, ok := b.by[k]; ok {
		for _, t := range l.Turns {
			if t.Run == run && t.Index == index {
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
