package verdict

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/carried"
)

// TestEveryCarriedReadingArrives (the verdict's part): each reading the
// registry puts on both the voice.turn and the verdict span is read off the
// turn (readings.go), written on the verdict span and read back from it
// (span.go), and survives the joined form (joined.go). The lines
// connector, the stored codec and the page have their own part, under the
// same name.
func TestEveryCarriedReadingArrives(t *testing.T) {
	if !slices.Contains(carried.Names(), semconv.TurnSpeechEndPost) {
		t.Fatalf("the registry's carried readings %v leave out %s", carried.Names(), semconv.TurnSpeechEndPost)
	}
	turn := ptrace.NewSpan()
	turn.SetName(semconv.SpanVoiceTurn)
	turn.SetSpanID(pcommon.SpanID{1})
	carried.Put(turn.Attributes())
	tr := &Trace{ID: pcommon.TraceID{1}, Turn: ReadTurn(pcommon.NewResource(), turn)}
	if len(tr.Turn.Problems) > 0 {
		t.Fatalf("the readings are refused: %v", tr.Turn.Problems)
	}

	span := verdictSpanOf(t, tr)
	if m := carried.Missing(span.Attributes()); len(m) > 0 {
		t.Errorf("the verdict span lacks %v: the turn's readers (readings.go) or the verdict span's writer (span.go) leave them out", m)
	}
	back := FromSpan(pcommon.NewResource(), span)
	td := ptrace.NewTraces()
	Append(td, pcommon.NewResource(), &back, 0)
	if m := carried.Missing(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()); len(m) > 0 {
		t.Errorf("a verdict span read back (FromSpan) and written again lacks %v", m)
	}

	joined := ptrace.NewTraces()
	AppendTrace(joined, tr)
	var again *TurnReadings
	for res, s := range Spans(joined) {
		if s.Name() == semconv.SpanVoiceTurn {
			again = ReadTurn(res, s)
		}
	}
	if again == nil {
		t.Fatal("the joined form has no voice.turn")
	}
	if m := carried.Missing(verdictSpanOf(t, &Trace{ID: tr.ID, Turn: again}).Attributes()); len(m) > 0 {
		t.Errorf("the joined form (joined.go) loses %v", m)
	}
}

// verdictSpanOf is the verdict span of tr's turn.
func verdictSpanOf(t *testing.T, tr *Trace) ptrace.Span {
	t.Helper()
	c := DefaultRules()
	r := RecordOf(tr, Decide(tr, nil, &c, Forced{}), "", 1)
	td := ptrace.NewTraces()
	Append(td, tr.Turn.Resource, &r, 0)
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}
