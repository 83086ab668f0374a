package verdict

import (
	"cmp"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// Reading the three spans a turn's trace has into their readings.

// ReadTurn extracts a voice.turn span's readings. The resource is cloned
// because the verdict span is emitted under the phone's resource later, when
// the batch that carried the turn is long gone.
func ReadTurn(res pcommon.Resource, span ptrace.Span) *TurnReadings {
	own := pcommon.NewResource()
	res.CopyTo(own)
	return ReadTurnUnder(own, span)
}

// ReadTurnUnder is ReadTurn with the resource already the caller's own
// copy, which the turn keeps as it is: the turns of one batch read under
// one resource share one copy. Nothing changes a turn's resource once
// read.
func ReadTurnUnder(own pcommon.Resource, span ptrace.Span) *TurnReadings {
	attrs := span.Attributes()
	r := attrReader{attrs: attrs, what: semconv.SpanVoiceTurn}
	r.carry()
	t := &TurnReadings{SpanID: span.SpanID(), Units: -1, Resource: own}

	t.EndTime = span.EndTimestamp()
	t.Index, _ = r.count(semconv.TurnIndex)
	if link, ok := r.str(semconv.NetworkConnectionType); ok && link != "" {
		t.Link = link
	}
	t.Stutter, _ = r.boolean(semconv.TurnStutter)
	t.readRoute(&r, span)
	t.Live = readLive(&r, attrs)
	t.readPool(&r)

	// Those no rule reads too: a negative or impossible one is bad input
	// all the same (docs/domain.md), as the done reading would count it.
	for _, s := range TurnSeconds {
		v, ok := s.At(t)
		*v, *ok = r.seconds(s.Name)
	}
	if n, ok := r.count(semconv.TurnUnits); ok {
		t.Units = n
	}
	t.Problems = r.problems
	return t
}

// readRoute reads the turn's audio route: its outputs, whether one is
// Bluetooth (said, or known from an output's port), and its route change
// events, each list bounded.
func (t *TurnReadings) readRoute(r *attrReader, span ptrace.Span) {
	bt, hasBT := r.boolean(semconv.RouteBluetooth)
	for _, o := range r.strings(semconv.RouteOutputs) {
		if len(t.Outputs) < MaxOutputs {
			t.Outputs = append(t.Outputs, o)
		}
		if semconv.IsBluetoothPort(o) {
			if t.BTOutput == "" {
				t.BTOutput = o
			}
			if !hasBT {
				bt = true
			}
		}
	}
	t.Bluetooth = bt
	if t.Bluetooth && t.BTOutput == "" {
		t.BTOutput = "a Bluetooth output"
	}

	events := span.Events()
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		if ev.Name() != semconv.EventRouteChange || len(t.RouteChanges) >= MaxRouteChanges {
			continue
		}
		er := attrReader{attrs: ev.Attributes(), what: semconv.EventRouteChange}
		at, ok := er.number(semconv.RouteChangeAt)
		reason, _ := er.str(semconv.RouteChangeReason)
		r.problems = appendUpTo(r.problems, er.problems, MaxProblems)
		if ok {
			t.RouteChanges = append(t.RouteChanges, RouteChange{At: at, Reason: reason})
		}
	}
}

// readPool reads the pool's tally since launch and the history the turn
// carries of it, if any.
func (t *TurnReadings) readPool(r *attrReader) {
	t.PoolResets, t.HasPoolResets = r.count(semconv.PoolResets)
	t.PoolBefore, t.HasPoolBefore = r.count(semconv.PoolResetsBefore)
	if t.HasPoolResets && t.HasPoolBefore && t.PoolResets < t.PoolBefore {
		// The tally of one launch never counts down; a report that says so
		// cannot be read.
		r.note("%s went down within a launch (%d → %d)", semconv.PoolResets, t.PoolBefore, t.PoolResets)
		t.HasPoolResets = false
	}
}

// liveBeforeKeys are the known kinds' history keys, made once: a turn's
// live counts were a key built for each.
var liveBeforeKeys = func() (keys [semconv.NumLiveKinds]string) {
	for i, k := range semconv.LiveKinds {
		keys[i] = semconv.LiveBeforeAttr(k)
	}
	return keys
}()

// liveBeforeKey is the attribute holding the earlier turns' counts of kind.
func liveBeforeKey(kind string) string {
	if i := slices.Index(semconv.LiveKinds, kind); i >= 0 {
		return liveBeforeKeys[i]
	}
	return semconv.LiveBeforeAttr(kind)
}

// readLive collects every live count (any kind: pippa.live.<kind> holding an
// int) with its history, in semconv.LiveKinds order and then by name.
func readLive(r *attrReader, attrs pcommon.Map) []LiveSeries {
	var out []LiveSeries
	attrs.Range(func(k string, v pcommon.Value) bool {
		if !strings.HasPrefix(k, semconv.LivePrefix) || strings.HasSuffix(k, semconv.LiveBeforeSuffix) {
			return true
		}
		if k == semconv.LiveKind || k == semconv.MetricLiveObjects {
			// Names of the live-objects metric and its attribute, under
			// the same prefix but no count: never read as a kind.
			return true
		}
		kind := strings.TrimPrefix(k, semconv.LivePrefix)
		if kind == "" || strings.Contains(kind, ".") {
			return true
		}
		if len(kind) > MaxValueBytes || len(out) >= MaxLiveKinds {
			r.note("live counts: more than %d kinds, or a kind name over %d bytes", MaxLiveKinds, MaxValueBytes)
			return true
		}
		now, ok := r.count(k)
		if !ok {
			return true
		}
		series, _ := r.counts(liveBeforeKey(kind))
		out = append(out, LiveSeries{Kind: kind, Series: append(series, now)})
		return true
	})
	rank := func(kind string) int {
		if i := slices.Index(semconv.LiveKinds, kind); i >= 0 {
			return i
		}
		return len(semconv.LiveKinds)
	}
	// slices.SortFunc, not sort.Slice: read for every turn, and sort.Slice
	// allocates its swapper even for the one kind a turn usually has.
	slices.SortFunc(out, func(a, b LiveSeries) int {
		return cmp.Or(cmp.Compare(rank(a.Kind), rank(b.Kind)), strings.Compare(a.Kind, b.Kind))
	})
	return out
}

// ReadUnit extracts a voice.unit span's readings.
func ReadUnit(span ptrace.Span) Unit {
	attrs := span.Attributes()
	r := attrReader{attrs: attrs, what: "unit", index: -1}
	r.idx.index(indexUnit, attrs)
	if r.idx.joined {
		r.carry()
	}
	u := Unit{SpanID: span.SpanID(), Index: -1}
	if idx, ok := r.integer(semconv.UnitIndex); ok {
		u.Index, r.index = idx, idx
	}
	u.TakeID, _ = r.str(semconv.TakeID)
	if n, ok := r.count(semconv.UnitUnderruns); ok {
		u.Underruns = n
	} else if _, present := r.get(semconv.UnitUnderruns); !present {
		r.note("%s missing", semconv.UnitUnderruns)
	}
	if u.Underruns > 0 {
		// What rule 1 needs to read an underrun.
		var ok bool
		if u.Silent, ok = r.seconds(semconv.UnitSilent); !ok {
			if _, present := r.get(semconv.UnitSilent); !present {
				r.note("%s missing", semconv.UnitSilent)
			}
		}
		if u.Cushion, ok = r.seconds(semconv.UnitCushion); !ok {
			if _, present := r.get(semconv.UnitCushion); !present {
				r.note("%s missing", semconv.UnitCushion)
			}
		}
		if u.TakeID == "" {
			r.note("underran but names no take (%s)", semconv.TakeID)
		}
	}
	// A problem carried alone says nothing of the underrun (it may be the
	// lead's): a joined unit says whether its underrun was readable.
	u.UnderrunBad = len(r.problems) > r.carried || r.idx.joined && r.unreadable()
	u.Lead, u.HasLead = r.number(semconv.UnitLead)
	u.Problems = r.problems
	return u
}

// ReadTake extracts a tts.take span's readings; ok is false when it names no
// take (it cannot be matched to a unit, so it is dropped and counted).
func ReadTake(span ptrace.Span) (Take, bool) {
	attrs := span.Attributes()
	r := attrReader{attrs: attrs}
	r.idx.index(indexTake, attrs)
	id, ok := r.str(semconv.TakeID)
	if !ok || id == "" {
		return Take{}, false
	}
	r.what, r.id = "take", id
	if r.idx.joined {
		r.carry()
	}
	t := Take{SpanID: span.SpanID(), ID: id}
	need, ok := r.seconds(semconv.TakeNeed)
	switch {
	case ok:
		t.Need = need
	case len(r.problems) > 0:
		t.Problem = r.problems[0]
	default:
		t.Problem = r.where() + ": " + semconv.TakeNeed + " missing"
	}
	return t, true
}
