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

// TestConcurrentConsumers: receivers call the processor from many goroutines
// while the background sweep runs; every turn gets exactly one verdict.
func TestConcurrentConsumers(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Wait = 20_000_000 // 20 ms
	cfg.MaxPending = 64
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	const workers, turns = 4, 60
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			for i := 0; i < turns; i++ {
				n := byte(w*turns + i + 1)
				spans := []sp{underrun(1, 1, 0.5, nil), turn(nil)}
				if i%2 == 0 {
					spans = append(spans, take("t1", 2.0, nil)) // else: decided after the wait
				}
				td := build(0, withTrace(n, spans)...)
				if err := p.ConsumeTraces(context.Background(), td); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return countVerdicts(sink) == workers*turns })
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := countVerdicts(sink); n != workers*turns {
		t.Fatalf("%d verdicts for %d turns (-1: a turn decided twice)", n, workers*turns)
	}
}

// withTrace puts the spans in trace n.
func withTrace(n byte, spans []sp) []sp {
	for i := range spans {
		spans[i].trace = n
	}
	return spans
}

func countVerdicts(sink *consumertest.TracesSink) int {
	seen := map[string]int{}
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					if s := ss.At(j).Spans().At(k); s.Name() == semconv.SpanVerdict {
						seen[s.TraceID().String()]++
					}
				}
			}
		}
	}
	for _, n := range seen {
		if n > 1 {
			return -1 // two verdicts for one turn: never equal to a turn count
		}
	}
	return len(seen)
}
