package livecheck

import (
	"context"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/linestest"
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
