package persist

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/carried"
	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/verdict"
)

// TestEveryCarriedReadingArrives (the stored codec's part): a held turn
// stored and read back still gives its verdict every reading the verdict
// carries. The verdict's readers, the lines connector and the page have
// their own part, under the same name.
func TestEveryCarriedReadingArrives(t *testing.T) {
	span := ptrace.NewSpan()
	span.SetName(semconv.SpanVoiceTurn)
	span.SetSpanID(pcommon.SpanID{1})
	carried.Put(span.Attributes())
	held := &verdict.Trace{ID: pcommon.TraceID{1}, Turn: verdict.ReadTurn(pcommon.NewResource(), span)}

	stored := &verdict.Trace{}
	if _, err := decodeTrace(encodeTrace(nil, held, compact.EncodeResource(held.Turn.Resource)), stored); err != nil {
		t.Fatal(err)
	}
	c := verdict.DefaultRules()
	r := verdict.RecordOf(stored, verdict.Decide(stored, nil, &c, verdict.Forced{}), "", 1)
	td := ptrace.NewTraces()
	verdict.Append(td, stored.Turn.Resource, &r, 0)
	if m := carried.Missing(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()); len(m) > 0 {
		t.Errorf("a turn stored and read back (trace_codec.go) gives a verdict without %v", m)
	}
}
