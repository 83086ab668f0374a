package verdictcountconnector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/countconnector"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/components/verdictcountconnector/internal/metadata"
)

// countConfig is the contrib count connector's configuration for the
// verdict events, as the configurations here used it.
var countConfig = map[string]any{
	"spanevents": map[string]any{
		MetricTurns: map[string]any{
			"description": descTurns,
			"conditions":  []any{`spanevent.name == "percause.verdict"`},
			"attributes": []any{
				map[string]any{"key": "percause.cause"},
				map[string]any{"key": "network.connection.type", "default_value": "unknown"},
				map[string]any{"key": "app.installation.id", "default_value": "unknown"},
			},
		},
		MetricImplicated: map[string]any{
			"description": descImplicated,
			"conditions":  []any{`spanevent.name == "percause.implicated"`},
			"attributes": []any{
				map[string]any{"key": "percause.cause"},
				map[string]any{"key": "network.connection.type", "default_value": "unknown"},
				map[string]any{"key": "app.installation.id", "default_value": "unknown"},
			},
		},
	},
}

func newCounter(t *testing.T, next consumer.Metrics) *counter {
	t.Helper()
	c, err := createTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), createDefaultConfig(), next)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*counter)
}

// verdictBatches reads the verdict processor's golden outputs: every rule
// case's verdict spans, as the processor sends them on.
func verdictBatches(t *testing.T) []ptrace.Traces {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "processors", "verdictprocessor", "testdata", "rules", "*.out.json"))
	if err != nil || len(files) < 20 {
		t.Fatalf("golden verdicts: %v (%d files)", err, len(files))
	}
	var out []ptrace.Traces
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, td)
	}
	return out
}

// points flattens metrics to sorted lines: resource, metric, attributes,
// value, times (the scope, which names the component, aside).
func points(mds []pmetric.Metrics) []string {
	var out []string
	for _, md := range mds {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			res := fmt.Sprint(rm.Resource().Attributes().AsRaw())
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				ms := rm.ScopeMetrics().At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					if m.Name() != MetricTurns && m.Name() != MetricImplicated {
						// The count connector also counts every span by
						// default (trace.span.count); the verdict counters
						// are the two.
						continue
					}
					dps := m.Sum().DataPoints()
					for d := 0; d < dps.Len(); d++ {
						dp := dps.At(d)
						attrs := dp.Attributes().AsRaw()
						keys := make([]string, 0, len(attrs))
						for key := range attrs {
							keys = append(keys, fmt.Sprintf("%s=%v", key, attrs[key]))
						}
						sort.Strings(keys)
						out = append(out, fmt.Sprintf("%s %s %s [%s] %d %d..%d temporality=%s monotonic=%v desc=%q",
							res, m.Name(), m.Type(), strings.Join(keys, ","), dp.IntValue(), dp.StartTimestamp(), dp.Timestamp(),
							m.Sum().AggregationTemporality(), m.Sum().IsMonotonic(), m.Description()))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestCountsAsTheCountConnector: on every golden verdict of the verdict
// processor, the connector writes exactly the data points the contrib count
// connector configured for the verdict events writes: same resources, names,
// attributes, values, times, temporality and descriptions.
func TestCountsAsTheCountConnector(t *testing.T) {
	batches := verdictBatches(t)

	cf := countconnector.NewFactory()
	ccfg := cf.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(countConfig).Unmarshal(ccfg); err != nil {
		t.Fatal(err)
	}
	countSink := new(consumertest.MetricsSink)
	cc, err := cf.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(cf.Type()), ccfg, countSink)
	if err != nil {
		t.Fatal(err)
	}
	ours := new(consumertest.MetricsSink)
	for _, td := range batches {
		if err := cc.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		// One connector per case: the cases reuse trace and span IDs, and
		// the connector counts a verdict span once.
		if err := newCounter(t, ours).ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	want, got := points(countSink.AllMetrics()), points(ours.AllMetrics())
	if len(want) == 0 {
		t.Fatal("the count connector counted nothing: the golden verdicts have no events")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the connector's points differ from the count connector's:\n got\n  %s\n want\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestCountsEachVerdictOnce: a verdict span delivered again, in the same
// batch or a later one, is not counted again; a batch the next consumer
// refused is counted when it comes again.
func TestCountsEachVerdictOnce(t *testing.T) {
	batches := verdictBatches(t)
	td := batches[0]
	refuse := true
	sink := new(consumertest.MetricsSink)
	next, _ := consumer.NewMetrics(func(ctx context.Context, md pmetric.Metrics) error {
		if refuse {
			return errors.New("refused")
		}
		return sink.ConsumeMetrics(ctx, md)
	})
	c := newCounter(t, next)
	if err := c.ConsumeTraces(context.Background(), td); err == nil {
		t.Fatal("a refusal further on was not passed back")
	}
	refuse = false
	twice := ptrace.NewTraces()
	td.ResourceSpans().CopyTo(twice.ResourceSpans())
	td.ResourceSpans().At(0).CopyTo(twice.ResourceSpans().AppendEmpty())
	for range 3 {
		if err := c.ConsumeTraces(context.Background(), twice); err != nil {
			t.Fatal(err)
		}
	}
	var turns int64
	for _, md := range sink.AllMetrics() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() == MetricTurns {
					for d := 0; d < ms.At(k).Sum().DataPoints().Len(); d++ {
						turns += ms.At(k).Sum().DataPoints().At(d).IntValue()
					}
				}
			}
		}
	}
	if want := int64(td.SpanCount()); turns != want {
		t.Fatalf("counted %d turns, want %d (each verdict once)", turns, want)
	}
}

// TestConfig: the default and a bad recent.
func TestConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := cfg.Validate(); err != nil || cfg.Recent != DefaultRecent {
		t.Fatalf("default %+v: %v", cfg, err)
	}
	if cfg.FlushInterval != DefaultFlushInterval || len(cfg.ResourceAttributes) != 0 {
		t.Fatalf("default %+v", cfg)
	}
	cfg.Recent = 0
	if err := cfg.Validate(); !errors.Is(err, ErrRecentNotPositive) {
		t.Fatalf("recent 0: %v", err)
	}
	cfg = NewFactory().CreateDefaultConfig().(*Config)
	cfg.FlushInterval = -time.Millisecond
	if err := cfg.Validate(); !errors.Is(err, ErrFlushIntervalNegative) {
		t.Fatalf("flush_interval -1ms: %v", err)
	}
	cfg.FlushInterval = 0 // each commit's counts at once
	if err := cfg.Validate(); err != nil {
		t.Fatalf("flush_interval 0: %v", err)
	}
	cfg.ResourceAttributes = []string{"service.name", ""}
	if err := cfg.Validate(); !errors.Is(err, ErrResourceAttributeEmpty) {
		t.Fatalf("resource_attributes with an empty name: %v", err)
	}
	var _ component.Config = cfg
}

// slowSink is a metrics consumer that holds each call until released, so
// two deliveries of one verdict can be in the connector at once.
type slowSink struct {
	consumertest.MetricsSink
	entered chan struct{}
	release chan struct{}
}

func (s *slowSink) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	s.entered <- struct{}{}
	<-s.release
	return s.MetricsSink.ConsumeMetrics(ctx, md)
}

// TestConcurrentDeliveriesCountOnce: two deliveries of the same verdicts
// at once (a sender's retry racing the original, two pipelines fanning in)
// count each once: the check that a verdict was not counted and the claim
// that it is being counted are one step.
func TestConcurrentDeliveriesCountOnce(t *testing.T) {
	sink := &slowSink{entered: make(chan struct{}, 2), release: make(chan struct{})}
	c := newCounter(t, sink)
	td := verdictBatches(t)[0]
	errs := make(chan error, 2)
	go func() { errs <- c.ConsumeTraces(context.Background(), td) }()
	<-sink.entered // the first delivery is counting, held downstream
	go func() { errs <- c.ConsumeTraces(context.Background(), td) }()
	// The second waits for the first's outcome, returns, or counts the
	// verdicts too (and reaches the sink); a moment tells which of the
	// last two it does, and the count says whether it counted.
	select {
	case <-sink.entered:
	case err := <-errs:
		errs <- err
	case <-time.After(200 * time.Millisecond):
	}
	close(sink.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var turns int64
	for _, md := range sink.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); m.Name() == MetricTurns {
						for d := 0; d < m.Sum().DataPoints().Len(); d++ {
							turns += m.Sum().DataPoints().At(d).IntValue()
						}
					}
				}
			}
		}
	}
	if want := int64(td.SpanCount()); turns != want {
		t.Fatalf("%d verdicts delivered twice at once counted %d times, want %d", want, turns, want)
	}
}

// overlapSink notes how many deliveries of counts are inside it at once,
// holding each a moment so that two that overlap are seen to.
type overlapSink struct {
	consumertest.MetricsSink
	in, most atomic.Int32
}

func (s *overlapSink) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	n := s.in.Add(1)
	defer s.in.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(5 * time.Millisecond)
	return s.MetricsSink.ConsumeMetrics(ctx, md)
}

// TestCountsHandedOnOneAtATime: verdicts of different requests counted at
// once reach the counters' pipeline one delivery at a time. The
// Prometheus exporter turns each delta into its cumulative value by
// reading the series and storing the sum, with no lock between the two:
// two deliveries to one series at once could both read the old value,
// and one of them would be lost (a fleet run on a busy CI machine counted
// 5 of 100,000 turns short; TestEveryCountReachesPrometheus shows the loss
// through the real exporter).
func TestCountsHandedOnOneAtATime(t *testing.T) {
	sink := &overlapSink{}
	c := newCounter(t, sink)
	batches := verdictBatches(t)
	var wg sync.WaitGroup
	for _, td := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.ConsumeTraces(context.Background(), td); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(sink.AllMetrics()) < 2 {
		t.Fatalf("%d deliveries of counts from %d batches: nothing could overlap, so this test proves nothing", len(sink.AllMetrics()), len(batches))
	}
	if most := sink.most.Load(); most != 1 {
		t.Errorf("%d deliveries of counts were in the counters' pipeline at once, want 1", most)
	}
}
