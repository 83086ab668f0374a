package verdict

import (
	"fmt"
	"hash/fnv"
	"iter"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// Scope is the instrumentation scope verdict spans are written under: the
// verdict processor's.
const Scope = "github.com/percause/percause/processors/verdictprocessor"

// Record is one percause.verdict span: what Append writes and what FromSpan
// reads back. The verdict span is the project's central contract: the
// counters, the verdict file, the page, the day report, the live check and
// the lab all read it through FromSpan.
type Record struct {
	TraceID pcommon.TraceID
	// TurnSpan is the voice.turn span the verdict is a child of; SpanID is
	// derived from the trace and the turn (SpanIDFor), so a turn always
	// yields the same verdict span.
	TurnSpan pcommon.SpanID
	SpanID   pcommon.SpanID
	// Decided is when the turn was decided (the span's times).
	Decided pcommon.Timestamp
	Verdict
	// Rules is the rules' edition the verdict was decided by.
	Rules string

	// The turn as the verdict carries it, so a reader of verdicts alone
	// (the page, `percause lines`, the day report) has when it was, its
	// route and the done reading's readings.
	TurnTime        pcommon.Timestamp
	Bluetooth       Opt[bool]
	Outputs         []string
	SpeechEndToPost Opt[float64]
	NotSent         Opt[float64]
	PoolResets      Opt[int64]

	// CountedAs is the installation named on the counted events ("": none,
	// the fleet setting), within the holder's label budget.
	CountedAs string
	// Implicated are the causes of the span's percause.implicated events
	// (read back; Append writes one per cause of Causes).
	Implicated []string

	// Of the resource the verdict came under (the phone's), read back.
	Installation string
	Launch       string
	Version      string
}

// RecordOf is the record of trace t's verdict v, decided at decided, with
// the counted events naming countedAs.
func RecordOf(t *Trace, v Verdict, countedAs string, decided pcommon.Timestamp) Record {
	r := Record{TraceID: t.ID, TurnSpan: t.Turn.SpanID, Decided: decided, Verdict: v,
		Rules: semconv.RulesVersion, CountedAs: countedAs}
	r.SpanID = SpanIDFor(r.TraceID, r.TurnSpan)
	tr := t.Turn
	r.TurnTime = tr.EndTime
	r.Bluetooth = Some(tr.Bluetooth)
	r.Outputs = tr.Outputs
	r.SpeechEndToPost = Opt[float64]{V: tr.SpeechEndToPost, OK: tr.HasSpeechEndToPost}
	r.NotSent = Opt[float64]{V: tr.NotSent, OK: tr.HasNotSent}
	r.PoolResets = Opt[int64]{V: tr.PoolResets, OK: tr.HasPoolResets}
	return r
}

// SpanIDFor derives the verdict span's ID from the trace and its turn, so
// the same turn always yields the same verdict span (idempotent for a
// backend that sees a verdict twice, e.g. from two gateways after a
// re-route, or again after a refusal).
func SpanIDFor(traceID pcommon.TraceID, turn pcommon.SpanID) pcommon.SpanID {
	h := fnv.New64a()
	_, _ = h.Write(traceID[:])
	_, _ = h.Write(turn[:])
	_, _ = h.Write([]byte(semconv.SpanVerdict))
	var id pcommon.SpanID
	sum := h.Sum64()
	if sum == 0 {
		sum = 1
	}
	for i := range id {
		id[i] = byte(sum >> (8 * (7 - i)))
	}
	return id
}

// Append writes r as one percause.verdict span, child of voice.turn, under
// res (the phone's resource) in a resource and scope of its own. Its events
// are what the verdict count connector counts: one percause.verdict event
// with the primary cause (percause_turns_total) and one
// percause.implicated event per implicated cause
// (percause_cause_implicated_total; a count connector does not split
// arrays).
//
// The span's times are the decision's (a counter stamps its counts from
// span times, and a turn flushed a day late must still count now). The
// events are stamped with epoch, the holder's start, instead: a count
// connector emits delta counts spanning the times of what it counted, and
// the Prometheus exporter adds a delta to a series only when it starts
// where the previous one ended. Events all stamped with one epoch line up,
// so the counters add up from the holder's start
// (docs/decisions/0200-verdicts-to-counters-through-the-count-connector.md).
func Append(td ptrace.Traces, res pcommon.Resource, r *Record, epoch pcommon.Timestamp) {
	rs := td.ResourceSpans().AppendEmpty()
	res.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(Scope)
	ss.Scope().SetVersion(r.Rules)
	span := ss.Spans().AppendEmpty()
	span.SetTraceID(r.TraceID)
	span.SetSpanID(r.SpanID)
	span.SetParentSpanID(r.TurnSpan)
	span.SetName(semconv.SpanVerdict)
	span.SetKind(ptrace.SpanKindInternal)
	span.SetStartTimestamp(r.Decided)
	span.SetEndTimestamp(r.Decided)
	writeAttributes(span.Attributes(), r)
	writeEvents(span.Events(), r, epoch)
}

func writeAttributes(a pcommon.Map, r *Record) {
	a.EnsureCapacity(18)
	a.PutStr(semconv.VerdictCause, r.Cause)
	putStrs(a, semconv.VerdictCauses, r.Causes)
	a.PutStr(semconv.VerdictEvidence, r.Evidence)
	a.PutStr(semconv.VerdictRulesVersion, r.Rules)
	a.PutStr(semconv.VerdictForced, r.Forced)
	a.PutStr(semconv.NetworkConnectionType, r.Link)
	a.PutInt(semconv.TurnIndex, r.Index)
	a.PutInt(semconv.VerdictUnderruns, r.Underruns)
	a.PutDouble(semconv.VerdictSilent, r.Silent)
	// What a reader of verdicts alone needs of the turn: when it was, its
	// route, and the done reading's readings.
	a.PutInt(semconv.VerdictTurnTime, int64(r.TurnTime))
	if r.Bluetooth.OK {
		a.PutBool(semconv.RouteBluetooth, r.Bluetooth.V)
	}
	if len(r.Outputs) > 0 {
		putStrs(a, semconv.RouteOutputs, r.Outputs)
	}
	if r.SpeechEndToPost.OK {
		a.PutDouble(semconv.TurnSpeechEndPost, r.SpeechEndToPost.V)
	}
	if r.NotSent.OK {
		a.PutDouble(semconv.TurnNotSent, r.NotSent.V)
	}
	if r.PoolResets.OK {
		a.PutInt(semconv.PoolResets, r.PoolResets.V)
		if r.PoolBefore.OK {
			a.PutInt(semconv.PoolResetsBefore, r.PoolBefore.V)
		}
	}
}

func putStrs(a pcommon.Map, key string, vs []string) {
	s := a.PutEmptySlice(key)
	s.EnsureCapacity(len(vs))
	for _, v := range vs {
		s.AppendEmpty().SetStr(v)
	}
}

func writeEvents(evs ptrace.SpanEventSlice, r *Record, epoch pcommon.Timestamp) {
	evs.EnsureCapacity(len(r.Causes) + 1 + len(r.Underran))
	counted := func(name, cause string) {
		ev := evs.AppendEmpty()
		ev.SetName(name)
		ev.SetTimestamp(epoch)
		ea := ev.Attributes()
		ea.EnsureCapacity(3)
		ea.PutStr(semconv.VerdictCause, cause)
		ea.PutStr(semconv.NetworkConnectionType, r.Link)
		if r.CountedAs != "" {
			ea.PutStr(semconv.AppInstallationID, r.CountedAs)
		}
	}
	counted(semconv.SpanVerdict, r.Cause)
	for _, c := range r.Causes {
		counted(semconv.EventImplicated, c)
	}
	// What rule 1 read of each unit that underran: the take's need against
	// the unit's cushion. Stamped with the epoch like the counted events: a
	// count connector spans its delta counts over the times of every event
	// of the span it reads, counted or not.
	for _, b := range r.Underran {
		ev := evs.AppendEmpty()
		ev.SetName(semconv.EventUnderrun)
		ev.SetTimestamp(epoch)
		ea := ev.Attributes()
		ea.EnsureCapacity(7)
		ea.PutInt(semconv.UnitIndex, b.Unit)
		ea.PutStr(semconv.TakeID, b.TakeID)
		ea.PutInt(semconv.UnitUnderruns, b.Underruns)
		ea.PutDouble(semconv.UnitSilent, b.Silent)
		ea.PutDouble(semconv.UnitCushion, b.Cushion)
		if b.Need.OK {
			ea.PutDouble(semconv.TakeNeed, b.Need.V)
		}
		ea.PutStr(semconv.VerdictCause, b.Cause)
	}
}

// FromSpan reads one percause.verdict span and the resource it came under.
// It reads what is there: a span written by an earlier edition lacks some
// attributes, which read as absent (or zero).
func FromSpan(res pcommon.Resource, s ptrace.Span) Record {
	a := s.Attributes()
	r := Record{TraceID: s.TraceID(), SpanID: s.SpanID(), TurnSpan: s.ParentSpanID(), Decided: s.EndTimestamp()}
	r.Cause, r.Evidence, r.Forced = AttrString(a, semconv.VerdictCause), AttrString(a, semconv.VerdictEvidence), AttrString(a, semconv.VerdictForced)
	r.Rules, r.Link = AttrString(a, semconv.VerdictRulesVersion), AttrString(a, semconv.NetworkConnectionType)
	r.Causes = strs(a, semconv.VerdictCauses)
	r.Index, _ = AttrInt(a, semconv.TurnIndex)
	r.Underruns, _ = AttrInt(a, semconv.VerdictUnderruns)
	r.Silent, _ = AttrNumber(a, semconv.VerdictSilent)
	if n, ok := AttrInt(a, semconv.VerdictTurnTime); ok {
		r.TurnTime = pcommon.Timestamp(n)
	}
	if v, ok := a.Get(semconv.RouteBluetooth); ok && v.Type() == pcommon.ValueTypeBool {
		r.Bluetooth = Some(v.Bool())
	}
	r.Outputs = strs(a, semconv.RouteOutputs)
	if v, ok := AttrNumber(a, semconv.TurnSpeechEndPost); ok {
		r.SpeechEndToPost = Some(v)
	}
	if v, ok := AttrNumber(a, semconv.TurnNotSent); ok {
		r.NotSent = Some(v)
	}
	if n, ok := AttrInt(a, semconv.PoolResets); ok {
		r.PoolResets = Some(n)
	}
	if n, ok := AttrInt(a, semconv.PoolResetsBefore); ok {
		r.PoolBefore = Some(n)
	}
	readEvents(&r, s.Events())
	ra := res.Attributes()
	r.Installation, r.Launch, r.Version = AttrString(ra, semconv.AppInstallationID), AttrString(ra, semconv.ServiceInstanceID), AttrString(ra, semconv.ServiceVersion)
	return r
}

func readEvents(r *Record, evs ptrace.SpanEventSlice) {
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		ea := ev.Attributes()
		switch ev.Name() {
		case semconv.SpanVerdict:
			r.CountedAs = AttrString(ea, semconv.AppInstallationID)
		case semconv.EventImplicated:
			r.Implicated = append(r.Implicated, AttrString(ea, semconv.VerdictCause))
		case semconv.EventUnderrun:
			u := Underrun{TakeID: AttrString(ea, semconv.TakeID), Cause: AttrString(ea, semconv.VerdictCause)}
			u.Unit, _ = AttrInt(ea, semconv.UnitIndex)
			u.Underruns, _ = AttrInt(ea, semconv.UnitUnderruns)
			u.Silent, _ = AttrNumber(ea, semconv.UnitSilent)
			u.Cushion, _ = AttrNumber(ea, semconv.UnitCushion)
			if need, ok := AttrNumber(ea, semconv.TakeNeed); ok {
				u.Need = Some(need)
			}
			r.Underran = append(r.Underran, u)
		}
	}
}

// Each calls fn for every percause.verdict span of td, with its resource.
func Each(td ptrace.Traces, fn func(res pcommon.Resource, s ptrace.Span)) {
	for res, s := range Spans(td) {
		if s.Name() == semconv.SpanVerdict {
			fn(res, s)
		}
	}
}

// Spans yields every span of td with its resource, in order: what each
// reader of a batch or a verdict file's line walks.
func Spans(td ptrace.Traces) iter.Seq2[pcommon.Resource, ptrace.Span] {
	return func(yield func(pcommon.Resource, ptrace.Span) bool) {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := rss.At(i)
			sss := rs.ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					if !yield(rs.Resource(), spans.At(k)) {
						return
					}
				}
			}
		}
	}
}

var jsonUnmarshaler = &ptrace.JSONUnmarshaler{}

// Parse reads one line of a verdict file (one OTLP JSON export request) and
// returns its verdicts.
func Parse(line []byte) ([]Record, error) {
	td, err := jsonUnmarshaler.UnmarshalTraces(line)
	if err != nil {
		return nil, fmt.Errorf("verdict: %w", err)
	}
	var out []Record
	Each(td, func(res pcommon.Resource, s ptrace.Span) { out = append(out, FromSpan(res, s)) })
	return out, nil
}

// Counted is one counted event of a verdict span: the verdict itself
// (percause_turns_total) or one implicated cause
// (percause_cause_implicated_total).
type Counted struct {
	Implicated   bool
	Cause        string
	Link         string // semconv.LinkUnknown when absent
	Installation string // "" when the event names none
}

// EachCounted calls fn for every counted event of a verdict span, in
// order; an event without a cause cannot be counted and is skipped, as a
// count connector leaves it.
func EachCounted(s ptrace.Span, fn func(Counted)) {
	evs := s.Events()
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		var c Counted
		switch ev.Name() {
		case semconv.SpanVerdict:
		case semconv.EventImplicated:
			c.Implicated = true
		default:
			continue
		}
		ea := ev.Attributes()
		v, ok := ea.Get(semconv.VerdictCause)
		if !ok {
			continue
		}
		c.Cause, c.Link = v.AsString(), semconv.LinkUnknown
		if v, ok := ea.Get(semconv.NetworkConnectionType); ok {
			c.Link = v.AsString()
		}
		if v, ok := ea.Get(semconv.AppInstallationID); ok {
			c.Installation = v.AsString()
		}
		fn(c)
	}
}

// AttrString is the attribute k of m as a string ("" when absent).
func AttrString(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func strs(m pcommon.Map, k string) []string {
	v, ok := m.Get(k)
	if !ok || v.Type() != pcommon.ValueTypeSlice {
		return nil
	}
	s := v.Slice()
	out := make([]string, 0, s.Len())
	for i := 0; i < s.Len(); i++ {
		out = append(out, s.At(i).AsString())
	}
	return out
}

// AttrInt is the integer attribute k of m (false when absent or of
// another type).
func AttrInt(m pcommon.Map, k string) (int64, bool) {
	v, ok := m.Get(k)
	if !ok || v.Type() != pcommon.ValueTypeInt {
		return 0, false
	}
	return v.Int(), true
}

// AttrNumber is the attribute k of m as a number, a double or an integer
// (false when absent, NaN or of another type).
func AttrNumber(m pcommon.Map, k string) (float64, bool) {
	v, ok := m.Get(k)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), !math.IsNaN(v.Double())
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	}
	return 0, false
}
