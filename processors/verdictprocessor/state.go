package verdictprocessor

import (
	"container/list"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// missingTakes lists, sorted, the takes that units which underran name and
// that have not arrived: the only takes the rules read.
func (p *pendingTrace) missingTakes() []string {
	var out []string
	for i := range p.units {
		u := &p.units[i]
		if u.underruns == 0 || u.takeID == "" || u.underrunBad {
			continue
		}
		if _, ok := p.take(u.takeID); ok {
			continue
		}
		dup := false
		for _, m := range out {
			if m == u.takeID {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, u.takeID)
		}
	}
	sort.Strings(out)
	return out
}

// ready reports whether the turn can be decided without waiting: its
// voice.turn has arrived, every unit it says it read has arrived, and every
// take an underrun is read against has arrived.
func (p *pendingTrace) ready() bool {
	if p.turn == nil {
		return false
	}
	if p.turn.units >= 0 && int64(len(p.unitSpans)) < p.turn.units {
		return false
	}
	return len(p.missingTakes()) == 0
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
	p := &pendingTrace{traceID: id, created: now}
	p.elem = s.order.PushBack(p)
	s.pending[id] = p
	return p
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
	ring []pcommon.TraceID
	next int
	full bool
	set  map[pcommon.TraceID]struct{}
}

func newDecidedSet(size int) *decidedSet {
	return &decidedSet{ring: make([]pcommon.TraceID, size), set: make(map[pcommon.TraceID]struct{}, size)}
}

func (d *decidedSet) has(id pcommon.TraceID) bool {
	_, ok := d.set[id]
	return ok
}

func (d *decidedSet) add(id pcommon.TraceID) {
	if d.has(id) {
		return
	}
	if d.full {
		delete(d.set, d.ring[d.next])
	}
	d.ring[d.next] = id
	d.set[id] = struct{}{}
	d.next++
	if d.next == len(d.ring) {
		d.next, d.full = 0, true
	}
}
