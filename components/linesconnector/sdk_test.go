package linesconnector_test

import (
	"context"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/linestest"
)

// routeChangeSentence is the evidence the bluetooth rule writes for one
// route change.
var routeChangeSentence = regexp.MustCompile(`; route change at [0-9.]+ s \([^)]*\) on a turn that (stuttered|underran)`)

// TestSDKLinesGetTheVerdictsOfItsSpans: the SDK records one turn per cause;
// its spans through the verdict processor and its own text log through the
// lines connector and the same processor give every turn the same verdict.
func TestSDKLinesGetTheVerdictsOfItsSpans(t *testing.T) {
	rec, err := linestest.Record(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	overOTLP := decideSpans(t, rec.Traces)
	lines := decideLines(t, file{"phone.log", rec.Phone}, file{"engine.log", rec.Engine})
	detailed := strings.Contains(string(rec.Phone), " changes=")
	if len(overOTLP) != len(linestest.Turns) || len(lines.verdicts) != len(linestest.Turns) {
		t.Fatalf("%d verdicts over OTLP, %d from lines, want %d each", len(overOTLP), len(lines.verdicts), len(linestest.Turns))
	}
	for _, id := range rec.Order {
		name := rec.Names[id]
		o, l := overOTLP[id], lines.verdicts[id]
		if o.Cause != rec.Expect[id] {
			t.Errorf("%s: over OTLP %s, the set expects %s", name, o.Cause, rec.Expect[id])
		}
		if l.Cause != o.Cause || strings.Join(l.Causes, ",") != strings.Join(o.Causes, ",") || l.Forced != o.Forced || l.Turn != o.Turn || l.Underruns != o.Underruns {
			t.Errorf("%s: from lines %s %v forced %q, over OTLP %s %v forced %q", name, l.Cause, l.Causes, l.Forced, o.Cause, o.Causes, o.Forced)
		}
		want := o.Evidence
		if !detailed {
			// The SDK's line prints only how many route changes there
			// were until its writer passes each change (textlines.Turn
			// Changes): their sentences are then missing, nothing else.
			want = routeChangeSentence.ReplaceAllString(want, "")
		}
		if l.Evidence != want {
			t.Errorf("%s: evidence from lines\n  %s\nover OTLP\n  %s", name, l.Evidence, want)
		}
	}
	if !detailed {
		t.Log("the SDK's [voice-turn] line carries no changes= field yet: route-change sentences compared as absent")
	}
	if len(lines.malformed) != 0 || lines.counts["unknown_fields"] != 0 {
		t.Errorf("the SDK's own lines: malformed %v, unknown fields %d", lines.malformed, lines.counts["unknown_fields"])
	}
}

// notInLine lists the attributes the SDK records that the canonical lines do
// not carry (none of them read by the rules).
var notInLine = map[string]map[string]bool{
	semconv.SpanVoiceTurn: {semconv.RouteCategory: true, semconv.RouteMode: true},
	// Lines print the take of a unit only when it underran, its cushion
	// likewise, its lead only when negative; never its longest silence or
	// its player.
	semconv.SpanVoiceUnit: {semconv.TakeID: true, semconv.UnitCushion: true, semconv.UnitLead: true,
		semconv.UnitLongest: true, semconv.UnitPlayer: true},
	semconv.SpanTTSTake: {},
}

// TestLinesMakeTheSDKsTrace compares the spans the connector makes from the
// SDK's lines with the spans the SDK made for the same turns: the same names,
// kinds, parents and resource service, and the same attribute values (at the
// lines' two decimals), every difference accounted for by notInLine.
func TestLinesMakeTheSDKsTrace(t *testing.T) {
	rec, err := linestest.Record(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lines := decideLines(t, file{"phone.log", rec.Phone}, file{"engine.log", rec.Engine})
	key := func(s ptrace.Span) string {
		k := s.TraceID().String() + "/" + s.Name()
		if v, ok := s.Attributes().Get(semconv.UnitIndex); ok {
			k += "/" + v.AsString()
		}
		if v, ok := s.Attributes().Get(semconv.TakeID); ok && s.Name() == semconv.SpanTTSTake {
			k += "/" + v.AsString()
		}
		return k
	}
	type found struct {
		res  pcommon.Resource
		span ptrace.Span
	}
	sdk, made := map[string]found{}, map[string]found{}
	for _, s := range spansOf(rec.Traces) {
		sdk[key(s.span)] = found{s.res, s.span}
	}
	for _, s := range spansOf(lines.traces) {
		made[key(s.span)] = found{s.res, s.span}
	}
	var keys []string
	for k := range sdk {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(made) != len(sdk) {
		t.Errorf("the connector made %d spans, the SDK %d", len(made), len(sdk))
	}
	turnSpan := map[string]pcommon.SpanID{}
	for _, s := range made {
		if s.span.Name() == semconv.SpanVoiceTurn {
			turnSpan[s.span.TraceID().String()] = s.span.SpanID()
		}
	}
	for _, k := range keys {
		want, got := sdk[k], made[k]
		if got.span == (ptrace.Span{}) {
			t.Errorf("%s: not made from the lines", k)
			continue
		}
		if got.span.Kind() != want.span.Kind() {
			t.Errorf("%s: kind %v, the SDK's %v", k, got.span.Kind(), want.span.Kind())
		}
		if svc, _ := got.res.Attributes().Get(semconv.ServiceName); svc.AsString() != attr(want.res.Attributes(), semconv.ServiceName) {
			t.Errorf("%s: service %s, the SDK's %s", k, svc.AsString(), attr(want.res.Attributes(), semconv.ServiceName))
		}
		switch got.span.Name() {
		case semconv.SpanVoiceTurn:
			if !got.span.ParentSpanID().IsEmpty() {
				t.Errorf("%s: has a parent", k)
			}
		default:
			// The SDK's take is the child of the request that carried the
			// traceparent; from lines, the child of the turn.
			if got.span.ParentSpanID() != turnSpan[got.span.TraceID().String()] {
				t.Errorf("%s: parent %s, want the turn's span", k, got.span.ParentSpanID())
			}
		}
		want.span.Attributes().Range(func(name string, wv pcommon.Value) bool {
			gv, ok := got.span.Attributes().Get(name)
			if !ok {
				if !notInLine[want.span.Name()][name] {
					t.Errorf("%s: %s missing (the SDK's %s)", k, name, wv.AsString())
				}
				return true
			}
			if !sameValue(gv, wv) {
				t.Errorf("%s: %s = %s, the SDK's %s", k, name, gv.AsString(), wv.AsString())
			}
			return true
		})
		got.span.Attributes().Range(func(name string, gv pcommon.Value) bool {
			if _, ok := want.span.Attributes().Get(name); !ok {
				t.Errorf("%s: %s = %s, which the SDK does not record", k, name, gv.AsString())
			}
			return true
		})
		if got.span.Name() == semconv.SpanVoiceTurn && got.span.Events().Len() != want.span.Events().Len() {
			t.Errorf("%s: %d events, the SDK's %d", k, got.span.Events().Len(), want.span.Events().Len())
		}
	}
}

func attr(m pcommon.Map, k string) string {
	v, _ := m.Get(k)
	return v.AsString()
}

// sameValue compares at the lines' precision: doubles to the two decimals a
// line prints.
func sameValue(a, b pcommon.Value) bool {
	if a.Type() == pcommon.ValueTypeDouble && b.Type() == pcommon.ValueTypeDouble {
		return math.Abs(a.Double()-b.Double()) <= 0.005+1e-9
	}
	return a.AsString() == b.AsString() && a.Type() == b.Type()
}
