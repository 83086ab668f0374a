package linesconnector

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/components/linesconnector/internal/metadata"
	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// The spans a line becomes: the trace the SDK records for the same turn
// (instr.Turn, instr.Take), with the names of instr/semconv. A reading the
// line does not carry is left out, as the SDK leaves out what was not
// recorded. Span IDs derive from the trace and what the span is, so the same
// line read twice makes the same spans.

// traceIDOf reads a trace ID as the reader gives it (32 hex digits).
func traceIDOf(hexID string) pcommon.TraceID {
	var id pcommon.TraceID
	_, _ = hex.Decode(id[:], []byte(hexID))
	return id
}

// spanID derives a span's ID from its trace and what it is.
func spanID(trace pcommon.TraceID, what string, n int) pcommon.SpanID {
	h := sha256.New()
	h.Write(trace[:])
	h.Write([]byte(what))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
	var id pcommon.SpanID
	copy(id[:], h.Sum(nil))
	if id.IsEmpty() {
		id[7] = 1
	}
	return id
}

// TurnSpanID is the span ID of the voice.turn span made for a turn line of
// the trace: what the takes of the trace name as their parent.
func TurnSpanID(trace pcommon.TraceID) pcommon.SpanID { return spanID(trace, semconv.SpanVoiceTurn, 0) }

func takeSpanID(trace pcommon.TraceID, take string) pcommon.SpanID {
	h := sha256.Sum256([]byte(take))
	return spanID(trace, semconv.SpanTTSTake+"/"+string(h[:8]), 0)
}

func scopeSpans(rss ptrace.ResourceSpansSlice, l *line, service string, assumed []string) ptrace.SpanSlice {
	rs := rss.AppendEmpty()
	l.resource.CopyTo(rs.Resource())
	if _, ok := rs.Resource().Attributes().Get(semconv.ServiceName); !ok {
		rs.Resource().Attributes().PutStr(semconv.ServiceName, service)
	}
	if l.launch != "" {
		rs.Resource().Attributes().PutStr(semconv.ServiceInstanceID, l.launch)
	}
	if len(assumed) > 0 {
		// Beside the launch it qualifies: the verdict is made under this
		// resource, and its evidence repeats what was assumed.
		putStrings(rs.Resource().Attributes(), semconv.LinesAssumed, assumed)
	}
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	return ss.Spans()
}

func stamp(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

// appendTurnSpans appends the voice.turn span of a turn line and one
// voice.unit span per unit.
func appendTurnSpans(rss ptrace.ResourceSpansSlice, l *line, trace pcommon.TraceID, assumed []string) {
	spans := scopeSpans(rss, l, semconv.ServicePhone, assumed)
	t := &l.rec.Turn
	has := l.rec.Present.Has
	end := stamp(l.at)

	sp := spans.AppendEmpty()
	sp.SetName(semconv.SpanVoiceTurn)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetTraceID(trace)
	turnID := TurnSpanID(trace)
	sp.SetSpanID(turnID)
	sp.SetStartTimestamp(end)
	sp.SetEndTimestamp(end)
	a := sp.Attributes()
	for _, s := range textlines.TurnScalars {
		switch {
		case !has(s.Given):
		case s.Count != nil:
			a.PutInt(s.Attr, s.Count(t))
		default:
			a.PutDouble(s.Attr, s.Seconds(t))
		}
	}
	// An app line marks a stutter with +stutter: its absence is no stutter.
	a.PutBool(semconv.TurnStutter, t.Stutter)
	if has(textlines.FUnits) && t.DeclaredUnits < 0 {
		// As given: the verdict processor decides it unknown, and names it.
		a.PutInt(semconv.TurnUnits, int64(t.DeclaredUnits))
	} else {
		a.PutInt(semconv.TurnUnits, int64(len(t.Units)))
	}
	if problems := lineProblems(l); len(problems) > 0 {
		putStrings(a, verdict.AttrJoinedProblems, problems)
	}
	if has(textlines.FLink) {
		a.PutStr(semconv.NetworkConnectionType, t.LinkType)
		if t.LinkSubtype != "" {
			a.PutStr(semconv.NetworkConnectionSubtype, t.LinkSubtype)
		}
	}
	if has(textlines.FRoute) {
		putStrings(a, semconv.RouteInputs, t.Inputs)
		putStrings(a, semconv.RouteOutputs, t.Outputs)
	}
	if has(textlines.FBluetooth) || has(textlines.FRoute) {
		a.PutBool(semconv.RouteBluetooth, t.Bluetooth || semconv.Bluetooth(t.Outputs))
	}
	if has(textlines.FSampleRate) && (has(textlines.FRoute) || t.SampleRate > 0) {
		a.PutDouble(semconv.RouteSampleRate, t.SampleRate)
	}
	for _, lv := range t.Live {
		now, before := liveKeys(lv.Kind)
		a.PutInt(now, int64(lv.Now))
		if len(lv.Before) > 0 {
			s := a.PutEmptySlice(before)
			for _, v := range lv.Before {
				s.AppendEmpty().SetInt(int64(v))
			}
		}
	}
	if t.HasPoolResets {
		a.PutInt(semconv.PoolResets, int64(t.PoolResets))
		if t.HasPoolPrior {
			a.PutInt(semconv.PoolResetsBefore, int64(t.PoolResetsBefore))
		}
	}
	// Route changes: each with its time, reason and outputs when the line
	// gives them; an older line gives only their count, and each becomes an
	// event without readings (the rules cannot place it in time).
	if has(textlines.FChanges) {
		for _, c := range t.Changes {
			ev := sp.Events().AppendEmpty()
			ev.SetName(semconv.EventRouteChange)
			ev.SetTimestamp(end)
			ea := ev.Attributes()
			ea.PutDouble(semconv.RouteChangeAt, c.At)
			reason := c.Reason
			if reason == "" {
				reason = semconv.RouteReasonUnknown
			}
			ea.PutStr(semconv.RouteChangeReason, reason)
			putStrings(ea, semconv.RouteOutputs, c.Outputs)
		}
	} else {
		for i := 0; i < t.RouteChanges && i < textlines.MaxChanges; i++ {
			ev := sp.Events().AppendEmpty()
			ev.SetName(semconv.EventRouteChange)
			ev.SetTimestamp(end)
		}
	}

	for _, u := range t.Units {
		us := spans.AppendEmpty()
		us.SetName(semconv.SpanVoiceUnit)
		us.SetKind(ptrace.SpanKindInternal)
		us.SetTraceID(trace)
		us.SetSpanID(spanID(trace, semconv.SpanVoiceUnit, u.Index))
		us.SetParentSpanID(turnID)
		us.SetStartTimestamp(end)
		us.SetEndTimestamp(end)
		ua := us.Attributes()
		ua.PutInt(semconv.UnitIndex, int64(u.Index))
		if u.TakeID != "" {
			ua.PutStr(semconv.TakeID, u.TakeID)
		}
		if u.HasGap {
			ua.PutDouble(semconv.UnitGap, u.Gap)
		}
		if u.HasLead {
			ua.PutDouble(semconv.UnitLead, u.Lead)
		}
		if u.HasUnderruns {
			ua.PutInt(semconv.UnitUnderruns, int64(u.Underruns))
			if u.Underruns == 0 && !u.HasBrokenUnit {
				ua.PutDouble(semconv.UnitSilent, 0) // silent seconds come from underruns
			}
		}
		if u.HasBrokenUnit {
			ua.PutDouble(semconv.UnitSilent, u.Silent)
			ua.PutDouble(semconv.UnitCushion, u.Cushion)
		}
	}
}

// lineProblems are the bad readings of a turn line that no attribute of
// its spans carries (the canonical totals of underruns and silence: the
// spans carry each unit's), in the verdict's words. They ride on the
// voice.turn span as the problems a first stage found
// (verdict.AttrJoinedProblems), which the verdict processor takes as the
// turn's bad input, as it does any reading of the spans it finds bad
// itself (docs/lines.md: a negative duration or count is read as given).
func lineProblems(l *line) []string {
	t, has := &l.rec.Turn, l.rec.Present.Has
	var out []string
	if has(textlines.FUnderruns) && t.Underruns < 0 {
		out = append(out, fmt.Sprintf("%s: the line's underruns=%d is negative (%d)", semconv.SpanVoiceTurn, t.Underruns, t.Underruns))
	}
	if has(textlines.FSilent) && t.Silent < 0 {
		out = append(out, fmt.Sprintf("%s: the line's silent=%.2f is a negative duration (%.2f s)", semconv.SpanVoiceTurn, t.Silent, t.Silent))
	}
	return out
}

// appendTakeSpan appends the tts.take span of a take line, child of the
// turn's voice.turn span.
func appendTakeSpan(rss ptrace.ResourceSpansSlice, l *line, trace pcommon.TraceID) {
	spans := scopeSpans(rss, l, semconv.ServiceEngine, nil)
	t := &l.rec.Take
	has := l.rec.Present.Has
	sp := spans.AppendEmpty()
	sp.SetName(semconv.SpanTTSTake)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetTraceID(trace)
	sp.SetSpanID(takeSpanID(trace, t.ID))
	sp.SetParentSpanID(TurnSpanID(trace))
	end := l.at
	start := end
	if has(textlines.FTotal) && t.Total > 0 && t.Total < math.MaxInt32 {
		start = end.Add(-time.Duration(t.Total * float64(time.Second)))
	}
	sp.SetStartTimestamp(stamp(start))
	sp.SetEndTimestamp(stamp(end))
	a := sp.Attributes()
	a.PutStr(semconv.TakeID, t.ID)
	for _, f := range []struct {
		bit textlines.Fields
		key string
		v   float64
	}{
		{textlines.FFirstByte, semconv.TakeFirstByte, t.FirstByte},
		{textlines.FTotal, semconv.TakeTotal, t.Total},
		{textlines.FAudio, semconv.TakeAudio, t.Audio},
		{textlines.FRate, semconv.TakeRate, t.Rate},
		{textlines.FNeed, semconv.TakeNeed, t.Need},
	} {
		if has(f.bit) {
			a.PutDouble(f.key, f.v)
		}
	}
	if has(textlines.FBeside) {
		a.PutInt(semconv.TakeBeside, int64(t.Beside))
	}
}

// knownLive holds the attribute keys of the known live kinds, made once.
var knownLive = func() map[string][2]string {
	m := make(map[string][2]string, len(semconv.LiveKinds))
	for _, k := range semconv.LiveKinds {
		m[k] = [2]string{semconv.LiveAttr(k), semconv.LiveBeforeAttr(k)}
	}
	return m
}()

// liveKeys are the attribute keys of a live kind's count now and before.
func liveKeys(kind string) (now, before string) {
	if k, ok := knownLive[kind]; ok {
		return k[0], k[1]
	}
	return semconv.LiveAttr(kind), semconv.LiveBeforeAttr(kind)
}

func putStrings(m pcommon.Map, key string, vs []string) {
	s := m.PutEmptySlice(key)
	for _, v := range vs {
		s.AppendEmpty().SetStr(v)
	}
}
