package verdictprocessor

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// Reasons readings are dropped without a verdict (the reason attribute of
// otelcol_processor_verdict_dropped), beside the verdict model's own
// (verdict.DropDuplicateSpan, …).
const (
	dropNoTurn        = "no_turn"       // a trace aged out without its voice.turn
	dropPendingLimit  = "pending_limit" // evicted without its voice.turn
	dropShutdown      = "shutdown"      // held without its voice.turn at shutdown
	dropDecided       = "decided"       // a span of a trace already decided (a late or duplicate delivery)
	dropTakeWithoutID = "take_without_id"
	dropExportFailed  = "export_failed" // a verdict refused downstream past its bounds
	dropMoved         = "moved"         // held for a partition another gateway took over (changelog)
)

// observation is one span's readings, gathered before the lock is taken:
// a unit's or a take's readings sit in observations' own lists, at index, so
// the list of every span's observation stays small (a batch processor
// ahead hands over thousands of spans).
type observation struct {
	traceID pcommon.TraceID
	kind    obsKind
	turn    *verdict.TurnReadings
	index   int32
}

type obsKind uint8

const (
	obsTurn obsKind = iota + 1
	obsUnit
	obsTake
	obsTakeWithoutID
)

// observations is one batch's readings; its lists are recycled.
type observations struct {
	list  []observation
	units []verdict.Unit
	takes []verdict.Take
}

var observationsPool = sync.Pool{New: func() any {
	return &observations{list: make([]observation, 0, 128), units: make([]verdict.Unit, 0, 64), takes: make([]verdict.Take, 0, 64)}
}}

func getObservations() *observations { return observationsPool.Get().(*observations) }

func putObservations(o *observations) {
	clear(o.list)
	clear(o.units)
	clear(o.takes)
	o.list, o.units, o.takes = o.list[:0], o.units[:0], o.takes[:0]
	observationsPool.Put(o)
}

// read extracts the readings of the spans the rules read. Other spans
// (HTTP calls, …) cost one name comparison.
func (o *observations) read(td ptrace.Traces) {
	// One allocation at most, sized by the batch: growing the list by
	// appending copied it about twice over (each copy scanned by the GC).
	o.list = slices.Grow(o.list, td.SpanCount())
	// The turns under one resource (a phone's, for all its turns in the
	// batch) share one copy of it. under starts as the zero Resource, which
	// no batch's resource is.
	var under, own pcommon.Resource
	for res, span := range verdict.Spans(td) {
		switch span.Name() {
		case semconv.SpanVoiceTurn:
			if res != under {
				under, own = res, pcommon.NewResource()
				res.CopyTo(own)
			}
			o.list = append(o.list, observation{traceID: span.TraceID(), kind: obsTurn, turn: verdict.ReadTurnUnder(own, span)})
		case semconv.SpanVoiceUnit:
			o.units = append(o.units, verdict.ReadUnit(span))
			o.list = append(o.list, observation{traceID: span.TraceID(), kind: obsUnit, index: int32(len(o.units) - 1)})
		case semconv.SpanTTSTake:
			t, ok := verdict.ReadTake(span)
			kind := obsTake
			if !ok {
				kind = obsTakeWithoutID // counted under the lock with the rest
			}
			o.takes = append(o.takes, t)
			o.list = append(o.list, observation{traceID: span.TraceID(), kind: kind, index: int32(len(o.takes) - 1)})
		}
	}
}

// holding is what one batch did to the held traces: the verdicts it
// decided (the evicted ones first), whether what it leaves held must be
// stored before it returns, and the cycle that will do it.
type holding struct {
	decisions []decision
	durable   bool
	queued    bool // the decisions wait for the cycle (emit: verdicts)
	cycle     *cycle
	// full: a new trace found no room (every trace held waits for its
	// refused verdict); its spans were not held, and the batch is refused.
	full bool
}

// hold adds a batch's readings to their traces, making room at
// max_pending, and decides the turns the batch completed.
func (p *verdictProcessor) hold(ctx context.Context, batch *observations) holding {
	obs := batch.list
	now := p.now()
	var out tally
	var h holding
	touched := make([]*pending.Entry, 0, 4)
	var woken []*pending.Entry // traces of a later turn, waiting for one this batch brought
	// A trace's spans come in runs (a resource's units, then its voice.turn;
	// the engine's takes): the trace is looked up once a run. Within a run
	// nothing can decide, release or evict it, since all of that happens
	// after the loop or for another trace.
	var run *pending.Entry
	p.mu.Lock()
	for i := range obs {
		o := &obs[i]
		e := run
		if e == nil || e.ID != o.traceID {
			run = nil
			if p.held.Decided(o.traceID) || p.inflight[o.traceID] > 0 {
				out.inc(&out.dropped, dropDecided)
				continue
			}
			if e = p.held.Get(o.traceID); e == nil {
				var room bool
				if h.decisions, room = p.makeRoomLocked(h.decisions, &out); !room {
					h.full = true
					continue
				}
				e = p.held.Add(o.traceID, now)
				out.pendingDelta++
			}
			e.Reserve(runOf(obs[i:]))
			run = e
		}
		if p.mergeLocked(e, batch, o, now, &out) {
			p.held.Changed(e)
			if o.kind == obsTurn && e.Turn == o.turn {
				woken = p.recordTurnLocked(e, now, &out, woken)
			}
		}
		if len(touched) == 0 || touched[len(touched)-1] != e {
			touched = append(touched, e)
		}
	}
	evicted := len(h.decisions)
	for _, e := range append(touched, woken...) {
		if e.Held() && !e.Delivery.Sending && p.decidable(e) {
			h.decisions = append(h.decisions, p.decideLocked(e, verdict.Forced{}, &out))
		}
	}
	// What this batch leaves held must be stored before it is acknowledged;
	// the traces it decides need not be (a refusal is returned, an
	// acceptance releases them).
	h.durable = p.state != nil && leavesHeld(touched, h.decisions[evicted:])
	h.cycle, h.queued = p.cycles.queueLocked(h.decisions)
	p.mu.Unlock()
	p.tel.record(ctx, &out)
	return h
}

// runOf counts the units and takes among the observations that start obs
// and share its first's trace.
func runOf(obs []observation) (units, takes int) {
	id := obs[0].traceID
	for i := range obs {
		if obs[i].traceID != id {
			break
		}
		switch obs[i].kind {
		case obsUnit:
			units++
		case obsTake:
			takes++
		}
	}
	return units, takes
}

// leavesHeld reports whether any trace touched stays held: one not among
// the decisions.
func leavesHeld(touched []*pending.Entry, decided []decision) bool {
	for _, e := range touched {
		if !e.Held() {
			continue
		}
		deciding := false
		for i := range decided {
			if decided[i].entry == e {
				deciding = true
				break
			}
		}
		if !deciding {
			return true
		}
	}
	return false
}

// decidable reports whether a held trace's turn can be decided now that a
// reading arrived: everything it names has, and its launch's previous
// turn when it reads it.
func (p *verdictProcessor) decidable(e *pending.Entry) bool {
	return e.Turn != nil && e.Complete(&p.cfg.Rules) && p.previousKnown(e)
}

// makeRoomLocked evicts the oldest traces while the store is full, and
// reports false when none can be: every trace held waits for its refused
// verdict to be sent again.
func (p *verdictProcessor) makeRoomLocked(ds []decision, out *tally) ([]decision, bool) {
	for p.held.Len() >= p.cfg.MaxPending {
		e := p.held.OldestToEvict()
		if e == nil {
			return ds, false
		}
		if d, ok := p.evictLocked(e, verdict.ForcedPendingLimit, dropPendingLimit, out); ok {
			ds = append(ds, d)
		}
	}
	return ds, true
}

// mergeLocked adds one span's readings to its trace and reports whether
// the trace changed.
func (p *verdictProcessor) mergeLocked(e *pending.Entry, batch *observations, o *observation, now time.Time, out *tally) bool {
	var drop string
	switch o.kind {
	case obsTurn:
		drop = e.AddTurn(o.turn)
		if drop == "" && e.Turn == o.turn {
			e.TurnAt = now
		}
	case obsUnit:
		drop = e.AddUnit(&batch.units[o.index], &p.cfg.Rules) // the batch's own list: no copy moves to the heap
	case obsTake:
		drop = e.AddTake(batch.takes[o.index])
	default:
		drop = dropTakeWithoutID
	}
	if drop != "" {
		out.inc(&out.dropped, drop)
		return false
	}
	e.LastAt = now
	return true
}

// leaveMemoryLocked takes e out of memory; what is stored of it stays.
func (p *verdictProcessor) leaveMemoryLocked(e *pending.Entry, out *tally) {
	if e.Held() {
		out.pendingDelta--
	}
	p.held.Evict(e)
}

// releaseLocked is done with e: out of memory and out of storage.
func (p *verdictProcessor) releaseLocked(e *pending.Entry, out *tally) {
	if e.Held() {
		out.pendingDelta--
	}
	p.held.Release(e)
}

// evictLocked takes a held trace out of memory now, deciding it if its
// turn has arrived (its stored form stays until its verdict is accepted),
// or dropping it.
func (p *verdictProcessor) evictLocked(e *pending.Entry, forced, drop string, out *tally) (decision, bool) {
	switch {
	case e.Delivery.Sending:
		// Its sender settles it; here it only leaves memory.
		p.leaveMemoryLocked(e, out)
		p.inflight[e.ID]++
		return decision{}, false
	case e.Turn == nil:
		p.releaseLocked(e, out)
		out.inc(&out.dropped, drop)
		return decision{}, false
	}
	f := p.forced(forced)
	if forced == verdict.ForcedShutdown && (e.Complete(&p.cfg.Rules) || !e.Sized() && !e.WaitsForTake(&p.cfg.Rules)) {
		// Everything of its own trace came: nothing more will, so it is
		// decided as it is, not forced (its launch's unseen turns are
		// named in the evidence).
		f = verdict.Forced{}
	}
	d := p.decideLocked(e, f, out)
	d.evicted = true
	p.leaveMemoryLocked(e, out)
	p.inflight[e.ID]++
	return d, true
}

// endFlightLocked ends the flight of a verdict whose trace left memory
// while it was on its way (evicted at max_pending).
func (p *verdictProcessor) endFlightLocked(id pcommon.TraceID) {
	if p.inflight[id] <= 1 {
		delete(p.inflight, id)
		return
	}
	p.inflight[id]--
}
