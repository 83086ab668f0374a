package verdictprocessor

import (
	"container/list"
	"slices"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/internal/idring"
)

// pendingTrace is everything held for one trace until its turn is decided:
// the readings of its voice.turn, voice.unit and tts.take spans (never the
// spans themselves, which pass through at once).
type pendingTrace struct {
	traceID    pcommon.TraceID
	created    time.Time // when its first span arrived
	turnAt     time.Time // when its voice.turn arrived
	turn       *turnReading
	extraTurns int // further voice.turn spans (other span IDs) in the same trace
	// unitSpans is every voice.unit that arrived (to count them and to
	// recognise a duplicate); units keeps the readings of only those a rule
	// can fire on (an underrun, a late lead, bad input), which keeps a
	// pending turn small.
	unitSpans []pcommon.SpanID
	units     []unitReading
	takes     []takeReading
	elem      *list.Element // in store.order, oldest first

	lastAt time.Time // when a reading of this trace last arrived (the quiet window)
	// emitting: its verdict is on its way downstream; nothing else decides
	// it meanwhile. If it is refused the trace stays held, retryAt says when
	// the sweep may send it again and refusals counts the attempts.
	emitting bool
	retryAt  time.Time
	refusals int
	// firstRefusal starts the time a refused verdict is retried for: a
	// verdict refused for max_age after its first refusal is given up.
	firstRefusal time.Time
	forcedAs     string // the forced reason of a refused verdict, kept for its retry
	storeKey     uint64 // its storage key once stored (0: never stored)
	encodedRs    []byte // the turn's resource as stored, encoded once
}

func (p *pendingTrace) take(id string) (takeReading, bool) {
	for _, t := range p.takes {
		if t.id == id {
			return t, true
		}
	}
	return takeReading{}, false
}

func (p *pendingTrace) hasSpan(id pcommon.SpanID) bool {
	if p.turn != nil && p.turn.spanID == id {
		return true
	}
	for _, s := range p.unitSpans {
		if s == id {
			return true
		}
	}
	for i := range p.takes {
		if p.takes[i].spanID == id {
			return true
		}
	}
	return false
}

// missingTakes lists, sorted, the takes the rules read (the takes of the
// units that underran) that have not arrived.
func (p *pendingTrace) missingTakes(c *RulesConfig) []string {
	var out []string
	for i := range p.units {
		u := &p.units[i]
		if !needsTake(u, c) {
			continue
		}
		if _, ok := p.take(u.takeID); !ok && !slices.Contains(out, u.takeID) {
			out = append(out, u.takeID)
		}
	}
	sort.Strings(out)
	return out
}

// waitsForTake reports whether a take the rules read has not arrived (what
// missingTakes lists, without listing it: asked of every held turn on
// every request and sweep).
func (p *pendingTrace) waitsForTake(c *RulesConfig) bool {
	for i := range p.units {
		if u := &p.units[i]; needsTake(u, c) {
			if _, ok := p.take(u.takeID); !ok {
				return true
			}
		}
	}
	return false
}

// complete reports whether the turn can be decided the moment its last
// reading arrives: its voice.turn has arrived, it says how many units it
// read and all of them have arrived, and every take an underrun is read
// against has arrived.
func (p *pendingTrace) complete(c *RulesConfig) bool {
	return p.turn != nil && p.turn.units >= 0 && int64(len(p.unitSpans)) >= p.turn.units && !p.waitsForTake(c)
}

// settled reports whether a turn that does not say how many units it read
// can be decided: every take its underruns name has arrived and nothing of
// the trace has arrived for quiet.
func (p *pendingTrace) settled(now time.Time, quiet time.Duration, c *RulesConfig) bool {
	return p.turn != nil && p.turn.units < 0 && !p.waitsForTake(c) && now.Sub(p.lastAt) >= quiet
}

// store holds the pending traces, bounded in number, oldest first.
type store struct {
	pending map[pcommon.TraceID]*pendingTrace
	order   *list.List
}

func newStore() *store {
	return &store{pending: map[pcommon.TraceID]*pendingTrace{}, order: list.New()}
}

func (s *store) get(id pcommon.TraceID) *pendingTrace { return s.pending[id] }

func (s *store) add(id pcommon.TraceID, now time.Time) *pendingTrace {
	p := &pendingTrace{traceID: id}
	s.insert(p, now)
	return p
}

// insert holds p (new, or read back from storage) as arriving now.
func (s *store) insert(p *pendingTrace, now time.Time) {
	p.created, p.lastAt = now, now
	p.elem = s.order.PushBack(p)
	s.pending[p.traceID] = p
}

func (s *store) remove(p *pendingTrace) {
	s.order.Remove(p.elem)
	delete(s.pending, p.traceID)
}

func (s *store) oldest() *pendingTrace {
	if e := s.order.Front(); e != nil {
		return e.Value.(*pendingTrace)
	}
	return nil
}

func (s *store) len() int { return len(s.pending) }

// decidedSet remembers the most recently decided trace IDs (a fixed-size
// ring), so a turn delivered twice yields one verdict while the set stays
// bounded.
type decidedSet struct {
	*idring.Ring[pcommon.TraceID]
	// dirty holds the chunks of the ring (decidedChunk slots each) changed
	// since they were last stored.
	dirty map[int]struct{}
}

// decidedChunk is how many ring slots are stored under one key: the ring
// fills in order, so a commit rewrites one or two chunks however many turns
// it decided.
const decidedChunk = 64

func newDecidedSet(size int) *decidedSet {
	return &decidedSet{Ring: idring.New[pcommon.TraceID](size)}
}

func (d *decidedSet) has(id pcommon.TraceID) bool { return d.Has(id) }

func (d *decidedSet) add(id pcommon.TraceID) {
	if slot := d.Add(id); slot >= 0 && d.dirty != nil {
		d.dirty[slot/decidedChunk] = struct{}{}
	}
}

// track starts recording which chunks change (when the set is stored).
func (d *decidedSet) track() {
	if d.dirty == nil {
		d.dirty = map[int]struct{}{}
	}
}
