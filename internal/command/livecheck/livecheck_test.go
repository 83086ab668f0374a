package livecheck

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/linestest"
	"github.com/percause/percause/verdict"
)

func byTrace(traces []ptrace.Traces) map[string][]Span {
	out := map[string][]Span{}
	for _, td := range traces {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					id := ss.At(k).TraceID().String()
					out[id] = append(out[id], Span{rss.At(i).Resource(), ss.At(k)})
				}
			}
		}
	}
	return out
}

// TestTheSDKsTurnsAreClean: every turn the Go SDK records passes the check
// with no fault (advice for what a turn did not record is not a fault).
func TestTheSDKsTurnsAreClean(t *testing.T) {
	rec, err := linestest.Record(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	traces := byTrace(rec.Traces)
	if len(traces) != len(linestest.Turns) {
		t.Fatalf("%d traces", len(traces))
	}
	for id, spans := range traces {
		r := Check(id, spans)
		for _, p := range r.Problems {
			if p.Fault() {
				t.Errorf("%s: %s", rec.Names[id], p)
			}
		}
		if !r.Clean {
			t.Errorf("%s: not clean", rec.Names[id])
		}
	}
}

func TestCheckNamesFaults(t *testing.T) {
	for name, tc := range map[string]struct {
		mut  func(turn, unit, take ptrace.Span, phone, engine pcommon.Resource)
		want string
	}{
		"units as a double holding a whole number is fine": {func(turn, _, _ ptrace.Span, _, _ pcommon.Resource) {
			turn.Attributes().PutDouble(semconv.TurnUnits, 1)
		}, ""},
		"units as 1.5": {func(turn, _, _ ptrace.Span, _, _ pcommon.Resource) {
			turn.Attributes().PutDouble(semconv.TurnUnits, 1.5)
		}, "mistyped  voice.turn: pippa.turn.units is 1.5, want an int"},
		"units do not add up": {func(turn, _, _ ptrace.Span, _, _ pcommon.Resource) {
			turn.Attributes().PutInt(semconv.TurnUnits, 2)
		}, "structure voice.turn: pippa.turn.units says 2 units, 1 voice.unit spans arrived"},
		"NaN need": {func(_, _, take ptrace.Span, _, _ pcommon.Resource) {
			take.Attributes().PutDouble(semconv.TakeNeed, nan())
		}, "range     tts.take t1: pippa.take.need is NaN"},
		"negative lead is fine": {func(_, unit, _ ptrace.Span, _, _ pcommon.Resource) {
			unit.Attributes().PutDouble(semconv.UnitLead, -0.3)
		}, ""},
		"a take attribute on a unit": {func(_, unit, _ ptrace.Span, _, _ pcommon.Resource) {
			unit.Attributes().PutDouble(semconv.TakeNeed, 0.3)
		}, "structure voice.unit 1: pippa.take.need belongs on tts.take"},
		"an unknown span": {func(turn, _, _ ptrace.Span, _, _ pcommon.Resource) {
			turn.SetName("voice.turns")
		}, "unknown   voice.turns is not a span of the registry"},
		"no service": {func(_, _, _ ptrace.Span, phone, _ pcommon.Resource) {
			phone.Attributes().Remove(semconv.ServiceName)
		}, "missing   resource of voice.turn: service.name (required: pippa-phone)"},
		"a route change without its time": {func(turn, _, _ ptrace.Span, _, _ pcommon.Resource) {
			turn.Events().AppendEmpty().SetName(semconv.EventRouteChange)
		}, "missing   event pippa.route_change #1: pippa.route_change.at"},
	} {
		t.Run(name, func(t *testing.T) {
			phone, engine := pcommon.NewResource(), pcommon.NewResource()
			phone.Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
			engine.Attributes().PutStr(semconv.ServiceName, semconv.ServiceEngine)
			spans := ptrace.NewSpanSlice()
			turn, unit, take := spans.AppendEmpty(), spans.AppendEmpty(), spans.AppendEmpty()
			turn.SetName(semconv.SpanVoiceTurn)
			turn.SetSpanID(pcommon.SpanID{1})
			turn.Attributes().PutInt(semconv.TurnUnits, 1)
			unit.SetName(semconv.SpanVoiceUnit)
			unit.SetParentSpanID(pcommon.SpanID{1})
			unit.Attributes().PutInt(semconv.UnitIndex, 1)
			unit.Attributes().PutInt(semconv.UnitUnderruns, 0)
			take.SetName(semconv.SpanTTSTake)
			take.Attributes().PutStr(semconv.TakeID, "t1")
			take.Attributes().PutDouble(semconv.TakeNeed, 0.2)
			tc.mut(turn, unit, take, phone, engine)
			r := Check("t", []Span{{phone, turn}, {phone, unit}, {engine, take}})
			var faults []string
			for _, p := range r.Problems {
				if p.Fault() {
					faults = append(faults, p.String())
				}
			}
			all := strings.Join(faults, "\n")
			if tc.want == "" {
				if len(faults) > 0 {
					t.Fatalf("faults:\n%s", all)
				}
				return
			}
			if !strings.Contains(all, tc.want) {
				t.Fatalf("want %q in:\n%s", tc.want, all)
			}
		})
	}
}

func nan() float64 { return math.NaN() }

// TestALinkAttributeIsNamedForTheLink: a client that sends the link under a
// name of its own is told the OpenTelemetry name, whatever its spelling
// (the closest registered spelling of pippa.link.type is pippa.link.code,
// which is not what it means).
func TestALinkAttributeIsNamedForTheLink(t *testing.T) {
	for name, want := range map[string]string{
		"pippa.link.type":    "network.connection.type",
		"pippa.link":         "network.connection.type",
		"pippa.turn.network": "network.connection.type",
		"pippa.link_subtype": "network.connection.subtype",
		"pippa.net.rtt":      "",
		"pippa.turn.stuter":  "",
	} {
		if got := linkName(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	phone := pcommon.NewResource()
	phone.Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
	spans := ptrace.NewSpanSlice()
	turn := spans.AppendEmpty()
	turn.SetName(semconv.SpanVoiceTurn)
	turn.Attributes().PutInt(semconv.TurnUnits, 0)
	turn.Attributes().PutStr("pippa.link.type", semconv.LinkWifi)
	r := Check("t", []Span{{phone, turn}})
	var all []string
	for _, p := range r.Problems {
		all = append(all, p.String())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		"unknown   voice.turn: pippa.link.type is not in the registry (did you mean network.connection.type? the link is named as in OpenTelemetry)",
		`advice    voice.turn: network.connection.type absent (recommended: the verdict's link (unknown without it)); pippa.link.type holds "wifi": name it network.connection.type`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say\n%s\nit says\n%s", want, text)
		}
	}
}

// TestTakesWithoutTheirTurnAreReported: a trace that has only tts.take
// spans once the decision window is over is reported, once; a turn that
// comes later is reported with its verdict as any other.
func TestTakesWithoutTheirTurnAreReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	w := NewWatcher(path, WithDecisionWindow(5*time.Second), withClock(func() time.Time { return now }))
	write := func(names ...string) {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServiceEngine)
		for i, n := range names {
			s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			s.SetName(n)
			s.SetTraceID(pcommon.TraceID{1})
			s.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if n == semconv.SpanTTSTake {
				s.Attributes().PutStr(semconv.TakeID, "t"+string(rune('1'+i)))
			}
		}
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	refresh := func() []Report {
		t.Helper()
		rs, err := w.Refresh()
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	write(semconv.SpanTTSTake, semconv.SpanTTSTake)
	if rs := refresh(); len(rs) != 0 {
		t.Fatalf("reported before the window: %+v", rs)
	}
	now = now.Add(5 * time.Second)
	rs := refresh()
	if len(rs) != 1 || !rs[0].TakesOnly || rs[0].Clean || len(rs[0].Problems) != 1 ||
		!strings.Contains(rs[0].Problems[0].Detail, "has only tts.take spans (t1, t2) after the decision window (5s)") {
		t.Fatalf("after the window: %+v", rs)
	}
	if rs := refresh(); len(rs) != 0 {
		t.Fatalf("reported twice: %+v", rs)
	}
	var s Summary
	s.Add(rs[0])
	s.Add(Report{Verdict: &Verdict{}, Clean: true})
	if s != (Summary{Turns: 1, Clean: 1, TakesOnly: 1}) {
		t.Errorf("summary %+v", s)
	}
	write(semconv.SpanVoiceTurn, semconv.SpanVerdict)
	if rs := refresh(); len(rs) != 1 || rs[0].Verdict == nil || rs[0].TakesOnly {
		t.Fatalf("the turn that came later: %+v", rs)
	}
}

// TestCheckSaysWhatTheEvidenceSays: every value the check finds mistyped
// or out of range on a turn is bad input the verdict's evidence names, in
// the same words ("voice.turn: <name> <detail>"): one place
// (verdict.ValueFault and the readers' words) says what is bad for both.
func TestCheckSaysWhatTheEvidenceSays(t *testing.T) {
	res := pcommon.NewResource()
	res.Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName(semconv.SpanVoiceTurn)
	a := sp.Attributes()
	a.PutStr(semconv.TurnUnits, "3")
	a.PutInt(semconv.TurnIndex, -3)
	a.PutDouble(semconv.ListenTotal, -0.5)
	a.PutDouble(semconv.TurnSpeechEndPost, -1)
	a.PutStr(semconv.TurnStutter, "yes")
	a.PutDouble(semconv.PoolResets, 1.5)
	a.PutDouble(semconv.ListenGrant, math.NaN())

	r := Check("t", []Span{{Resource: res, Span: sp}})
	turn := verdict.ReadTurn(res, sp)
	found := 0
	for _, p := range r.Problems {
		if p.Kind != Mistyped && p.Kind != Range {
			continue
		}
		found++
		want := p.Span + ": " + p.Attribute + " " + p.Detail
		if !slices.Contains(turn.Problems, want) {
			t.Errorf("the check says %q; the evidence's bad input says %q", want, turn.Problems)
		}
	}
	if found != 7 {
		t.Errorf("the check found %d mistyped or out-of-range values, want 7: %v", found, r.Problems)
	}
}
