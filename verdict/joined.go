package verdict

import (
	"hash/fnv"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// The joined form of a trace: its readings written back as spans, all under
// the phone's resource, so that a collector that holds a trace's spans
// until its turn can be read (the first stage of a scale-out, routed by
// trace ID) can hand the turn whole to one that keeps its launch's history
// (the second stage, routed by the launch the phone's resource names)
// (docs/decisions/0242-scale-out-by-trace-then-by-launch.md).
//
// AppendTrace writes it; ReadTurn, ReadUnit and ReadTake read it back into
// the same readings. What the readers found wrong with the spans the first
// stage read cannot be written back as the bad values themselves (they were
// never kept), so the joined spans carry the problems as found, and the
// readers take them as their own.

// Names of the joined form: the collector writes them, between the two
// stages of a scale-out; no client sends them.
const (
	// JoinedScope is the instrumentation scope of the joined spans.
	JoinedScope = Scope + "/joined"
	// AttrJoinedProblems (a string array, on any of the three spans) is
	// the bad input the first stage found reading the span, in the order
	// it found it.
	AttrJoinedProblems = "percause.joined.problems"
	// AttrJoinedUnderrunUnreadable (a bool, on a voice.unit) says its
	// underrun could not be read (Unit.UnderrunBad): the problems alone do
	// not say which of them were the underrun's.
	AttrJoinedUnderrunUnreadable = "percause.joined.underrun_unreadable"
)

// joinedPrefix begins the names of the joined form.
const joinedPrefix = "percause.joined."

// maxProblemBytes bounds one carried problem (a problem names at most a
// take ID or a live kind, each at most MaxValueBytes).
const maxProblemBytes = MaxEvidence

// AppendTrace writes t's readings into td as spans in a resource of their
// own, the phone's (t.Turn.Resource): the voice.turn (and, by span ID
// alone, each further voice.turn the trace had), a voice.unit for every
// unit that arrived (the readings of those a rule reads, the span ID of
// the others) and a tts.take for every take. It is the inverse of the
// readers: reading the spans back with the same rules gives the same
// readings (TestAppendTraceRoundTrip, FuzzReadersRoundTrip). A trace
// without its turn has no phone resource, and writes nothing.
func AppendTrace(td ptrace.Traces, t *Trace) {
	if t.Turn == nil {
		return
	}
	rs := td.ResourceSpans().AppendEmpty()
	t.Turn.Resource.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(JoinedScope)
	ss.Scope().SetVersion(semconv.RulesVersion)
	spans := ss.Spans()
	appendTurnSpan(spans.AppendEmpty(), t.ID, t.Turn)
	for i := 0; i < t.ExtraTurns; i++ {
		s := spans.AppendEmpty()
		s.SetTraceID(t.ID)
		s.SetSpanID(extraTurnSpanID(t.ID, t.Turn.SpanID, i))
		s.SetName(semconv.SpanVoiceTurn)
	}
	kept := 0 // Units is in UnitSpans' order (AddUnit appends to both)
	for _, id := range t.UnitSpans {
		s := spans.AppendEmpty()
		s.SetTraceID(t.ID)
		s.SetSpanID(id)
		s.SetParentSpanID(t.Turn.SpanID)
		s.SetName(semconv.SpanVoiceUnit)
		if kept < len(t.Units) && t.Units[kept].SpanID == id {
			putUnit(s.Attributes(), &t.Units[kept])
			kept++
			continue
		}
		// A unit no rule reads: a reading that keeps it out of Units.
		s.Attributes().PutInt(semconv.UnitUnderruns, 0)
	}
	for i := range t.Takes {
		appendTakeSpan(spans.AppendEmpty(), t.ID, &t.Takes[i])
	}
}

// appendTurnSpan writes the voice.turn's readings as the span's
// attributes and events.
func appendTurnSpan(s ptrace.Span, id pcommon.TraceID, t *TurnReadings) {
	s.SetTraceID(id)
	s.SetSpanID(t.SpanID)
	s.SetName(semconv.SpanVoiceTurn)
	s.SetStartTimestamp(t.EndTime)
	s.SetEndTimestamp(t.EndTime)
	a := s.Attributes()
	a.PutInt(semconv.TurnIndex, t.Index)
	if t.Link != "" {
		a.PutStr(semconv.NetworkConnectionType, t.Link)
	}
	a.PutBool(semconv.TurnStutter, t.Stutter)
	a.PutBool(semconv.RouteBluetooth, t.Bluetooth)
	if outs := outputsOf(t); len(outs) > 0 {
		putStrs(a, semconv.RouteOutputs, outs)
	}
	for _, ls := range t.Live {
		n := len(ls.Series)
		if n == 0 {
			continue
		}
		a.PutInt(semconv.LiveAttr(ls.Kind), ls.Series[n-1])
		if n > 1 {
			before := a.PutEmptySlice(semconv.LiveBeforeAttr(ls.Kind))
			for _, c := range ls.Series[:n-1] {
				before.AppendEmpty().SetInt(c)
			}
		}
	}
	// A tally read but refused (it went down within the launch) is
	// written as it was, and refused again.
	if t.HasPoolResets || t.PoolResets != 0 {
		a.PutInt(semconv.PoolResets, t.PoolResets)
	}
	if t.HasPoolBefore {
		a.PutInt(semconv.PoolResetsBefore, t.PoolBefore)
	}
	for _, s := range TurnSeconds {
		if v, ok := s.At(t); *ok {
			a.PutDouble(s.Name, *v)
		}
	}
	if t.Units >= 0 {
		a.PutInt(semconv.TurnUnits, t.Units)
	}
	putProblems(a, t.Problems)
	for _, rc := range t.RouteChanges {
		ev := s.Events().AppendEmpty()
		ev.SetName(semconv.EventRouteChange)
		ev.Attributes().PutDouble(semconv.RouteChangeAt, rc.At)
		ev.Attributes().PutStr(semconv.RouteChangeReason, rc.Reason)
	}
}

// outputsOf is the route outputs that read back as the turn's: those it
// carries, and its first Bluetooth output when that came past them.
func outputsOf(t *TurnReadings) []string {
	if semconv.IsBluetoothPort(t.BTOutput) && !slices.Contains(t.Outputs, t.BTOutput) {
		return append(slices.Clone(t.Outputs), t.BTOutput)
	}
	return t.Outputs
}

// putUnit writes a kept unit's readings.
func putUnit(a pcommon.Map, u *Unit) {
	if u.Index != -1 {
		a.PutInt(semconv.UnitIndex, u.Index)
	}
	if u.TakeID != "" {
		a.PutStr(semconv.TakeID, u.TakeID)
	}
	a.PutInt(semconv.UnitUnderruns, u.Underruns)
	if u.Underruns > 0 {
		a.PutDouble(semconv.UnitSilent, u.Silent)
		a.PutDouble(semconv.UnitCushion, u.Cushion)
	}
	if u.HasLead {
		a.PutDouble(semconv.UnitLead, u.Lead)
	}
	putProblems(a, u.Problems)
	if u.UnderrunBad {
		a.PutBool(AttrJoinedUnderrunUnreadable, true)
	}
}

func appendTakeSpan(s ptrace.Span, id pcommon.TraceID, k *Take) {
	s.SetTraceID(id)
	s.SetSpanID(k.SpanID)
	s.SetName(semconv.SpanTTSTake)
	a := s.Attributes()
	a.PutStr(semconv.TakeID, k.ID)
	if k.Problem != "" {
		putProblems(a, []string{k.Problem})
		return
	}
	a.PutDouble(semconv.TakeNeed, k.Need)
}

func putProblems(a pcommon.Map, problems []string) {
	if len(problems) > 0 {
		putStrs(a, AttrJoinedProblems, problems)
	}
}

// extraTurnSpanID is the span ID written for the trace's i-th further
// voice.turn: derived, and never the turn's own.
func extraTurnSpanID(traceID pcommon.TraceID, turn pcommon.SpanID, i int) pcommon.SpanID {
	h := fnv.New64a()
	_, _ = h.Write(traceID[:])
	_, _ = h.Write(turn[:])
	_, _ = h.Write([]byte{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)})
	var id pcommon.SpanID
	for sum := h.Sum64(); ; sum++ {
		for j := range id {
			id[j] = byte(sum >> (8 * (7 - j)))
		}
		if id != turn && !id.IsEmpty() {
			return id
		}
	}
}
