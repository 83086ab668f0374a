package verdictprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
	"github.com/percause/percause/verdict"
)

// floorStage stands in the verdict processor's place to measure the least
// a processor writing the verdict format pays (formatFloor, writeFloor): it
// writes each turn's verdict span as a copy of one the processor wrote for
// the benchmark's request, and with read, reads what the rules read of
// every span first. It holds and decides nothing.
//
// The processor that wrote the templates stays alive, idle, until the
// pipeline stops. A processor at rest holds about 3.8 MB (its decided ring
// and the map beside it), and the process's live heap sets how often the
// garbage collector runs for both pipelines of a run: with it shut down
// the floor benchmarks' pass-through cost 7.2 CPU-µs a span against 4.5 in
// BenchmarkCollectorPipeline's, and their ratios were read against a
// different denominator than the processor's.
type floorStage struct {
	read     bool
	verdicts []ptrace.ResourceSpans // the processor's, one a turn of the request
	next     consumer.Traces
	kept     int // what was read, so the reading is not optimised away
	// writer wrote the templates; it is shut down with the pipeline.
	writer processor.Traces
}

func newFloorStage(tb testing.TB, read bool, next consumer.Traces) *floorStage {
	ctx := context.Background()
	sink := new(consumertest.TracesSink)
	f := NewFactory()
	p, err := f.CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), sink)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.ConsumeTraces(ctx, benchRequest()); err != nil {
		tb.Fatal(err)
	}
	s := &floorStage{read: read, next: next, writer: p}
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				if ss.Spans().Len() > 0 && ss.Spans().At(0).Name() == semconv.SpanVerdict {
					s.verdicts = append(s.verdicts, rs)
				}
			}
		}
	}
	if len(s.verdicts) != 2 {
		tb.Fatalf("the processor wrote %d verdict spans for the request's 2 turns", len(s.verdicts))
	}
	return s
}

// Start starts nothing: the writer is never started, so it sweeps
// nothing while the floor is measured.
func (s *floorStage) Start(context.Context, component.Host) error { return nil }

// Shutdown shuts down the processor that wrote the templates.
func (s *floorStage) Shutdown(ctx context.Context) error { return s.writer.Shutdown(ctx) }

func (s *floorStage) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (s *floorStage) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var turns []ptrace.Span
	var under, own pcommon.Resource
	for res, span := range verdict.Spans(td) {
		switch span.Name() {
		case semconv.SpanVoiceTurn:
			turns = append(turns, span)
			if !s.read {
				continue
			}
			if res != under {
				under, own = res, pcommon.NewResource()
				res.CopyTo(own)
			}
			if verdict.ReadTurnUnder(own, span) != nil {
				s.kept++
			}
		case semconv.SpanVoiceUnit:
			if s.read {
				s.kept += int(verdict.ReadUnit(span).Underruns)
			}
		case semconv.SpanTTSTake:
			if s.read {
				if _, ok := verdict.ReadTake(span); ok {
					s.kept++
				}
			}
		}
	}
	for i, turn := range turns {
		rs := td.ResourceSpans().AppendEmpty()
		s.verdicts[i%len(s.verdicts)].CopyTo(rs)
		v := rs.ScopeSpans().At(0).Spans().At(0)
		v.SetTraceID(turn.TraceID())
		v.SetParentSpanID(turn.SpanID())
	}
	return s.next.ConsumeTraces(ctx, td)
}
