package verdictprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

// TestFactoryPipeline runs the processor the way the collector does: made by
// its factory, started, fed a turn, shut down.
func TestFactoryPipeline(t *testing.T) {
	f := NewFactory()
	if f.Type() != metadata.Type || f.Type().String() != "verdict" {
		t.Fatalf("type %q", f.Type())
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), sink)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities().MutatesData {
		t.Fatal("the processor appends verdict spans: it must declare MutatesData")
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	td := build(1, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil), sp{name: "GET /api/check", id: 50, parent: 1})
	in := td.SpanCount()
	if err := p.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.SpanCount(); got != in+1 {
		t.Fatalf("%d spans out, want the %d in plus one verdict", got, in)
	}
	var causes []string
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					s := ss.At(j).Spans().At(k)
					if s.Name() == semconv.SpanVerdict {
						v, _ := s.Attributes().Get(semconv.VerdictCause)
						causes = append(causes, v.Str())
					}
				}
			}
		}
	}
	if len(causes) != 1 || causes[0] != semconv.CauseSynthesis {
		t.Fatalf("verdicts %v, want one synthesis", causes)
	}
}

// TestBackgroundSweep: with the real clock, a turn whose take never comes is
// decided by the background sweep after its wait.
func TestBackgroundSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the sweep")
	}
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Wait = 50_000_000 // 50 ms
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	if err := p.ConsumeTraces(context.Background(), build(1, underrun(1, 1, 0.9, nil), turn(nil))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return sink.SpanCount() == 3 })
}
