package verdictprocessor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// gate is a next consumer that, while closed, answers as
// consumertest.NewErr does (a pipeline whose exporter is failing), and hands
// what it accepts to a sink.
type gate struct {
	consumer.Traces
	refuse  atomic.Bool
	refused atomic.Int64
}

var errRefused = errors.New("downstream refused")

func newGate(sink *consumertest.TracesSink) *gate {
	g := &gate{}
	failing := consumertest.NewErr(errRefused)
	g.Traces, _ = consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		if g.refuse.Load() {
			g.refused.Add(1)
			return failing.ConsumeTraces(ctx, td)
		}
		return sink.ConsumeTraces(ctx, td)
	})
	return g
}

// startedHarness is a harness whose processor sends on through a gate and is
// started (its cycles run; the sweep is still the test's).
func startedHarness(t *testing.T, cfg *Config) (*harness, *gate) {
	t.Helper()
	h := newHarness(t, cfg)
	g := newGate(h.sink)
	h.p.next = g
	if err := h.p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.p.Shutdown(context.Background()) })
	return h, g
}

// sdk builds a batch as the Go SDK sends it: each turn says how many units
// it read.
func sdk(n byte, spans ...sp) ptrace.Traces { return build(n, withUnitCount(spans)...) }

// try hands a batch to the processor and returns its answer.
func (h *harness) try(td ptrace.Traces) error {
	err := h.p.ConsumeTraces(context.Background(), td)
	h.drainSink()
	return err
}

func bothEmits(t *testing.T, fn func(t *testing.T, cfg *Config)) {
	for _, emit := range []string{EmitAll, EmitVerdicts} {
		t.Run("emit_"+emit, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Emit = emit
			fn(t, cfg)
		})
	}
}

// TestRefusedBatchIsNotDecided: a turn whose batch the next consumer refuses
// is not remembered as decided; the sender's retry of the same batch yields
// its verdict, once, with the same span ID.
func TestRefusedBatchIsNotDecided(t *testing.T) {
	bothEmits(t, func(t *testing.T, cfg *Config) {
		h, g := startedHarness(t, cfg)
		td := sdk(1, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil))
		retry := ptrace.NewTraces()
		td.CopyTo(retry)

		g.refuse.Store(true)
		if err := h.try(td); !errors.Is(err, errRefused) {
			t.Fatalf("refused batch answered %v, want the refusal", err)
		}
		if n := len(h.verdicts()); n != 0 {
			t.Fatalf("%d verdicts got through a refusal", n)
		}
		if h.p.held.Decided(traceID(1)) || h.p.held.Len() != 1 {
			t.Fatalf("after the refusal: decided %v, %d held; want not decided, still held", h.p.held.Decided(traceID(1)), h.p.held.Len())
		}
		if got := h.counter("otelcol_processor_verdict_refused")[""]; got != 1 {
			t.Errorf("refused counter %d, want 1", got)
		}

		g.refuse.Store(false)
		if err := h.try(retry); err != nil {
			t.Fatalf("retry answered %v", err)
		}
		v := h.verdicts()
		if len(v) != 1 {
			t.Fatalf("%d verdicts after the retry, want 1", len(v))
		}
		checkVerdict(t, v[0], want{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis)})
		if v[0].SpanID() != verdict.SpanIDFor(traceID(1), spanID(1, 1)) {
			t.Errorf("verdict span ID %s is not the turn's", v[0].SpanID())
		}
		// A third delivery is a duplicate of a decided turn.
		if err := h.try(sdk(1, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil))); err != nil {
			t.Fatal(err)
		}
		if n := len(h.verdicts()); n != 1 {
			t.Fatalf("%d verdicts after a duplicate, want 1", n)
		}
		if got := h.counter("otelcol_processor_verdict_verdicts")[semconv.CauseSynthesis]; got != 1 {
			t.Errorf("verdicts counted %d, want 1 (a refused verdict is not counted)", got)
		}
	})
}

// TestRefusedSecondHalf: the phone's half of a turn was accepted and held;
// the engine's half, which completes it, is refused. Its retry alone yields
// the verdict: the phone's readings were kept.
func TestRefusedSecondHalf(t *testing.T) {
	bothEmits(t, func(t *testing.T, cfg *Config) {
		h, g := startedHarness(t, cfg)
		if err := h.try(sdk(1, underrun(1, 2, 1.4, nil), turn(nil))); err != nil {
			t.Fatal(err)
		}
		g.refuse.Store(true)
		if err := h.try(sdk(1, take("t1", 0.4, nil))); !errors.Is(err, errRefused) {
			t.Fatalf("refused batch answered %v", err)
		}
		g.refuse.Store(false)
		if err := h.try(sdk(1, take("t1", 0.4, nil))); err != nil {
			t.Fatal(err)
		}
		v := h.verdicts()
		if len(v) != 1 {
			t.Fatalf("%d verdicts, want 1", len(v))
		}
		checkVerdict(t, v[0], want{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork)})
		if got := h.counter("otelcol_processor_verdict_dropped")[verdict.DropDuplicateSpan]; got != 1 {
			t.Errorf("dropped{duplicate_span} = %d, want 1 (the retried take, held since the refusal)", got)
		}
	})
}

// TestSweepRetriesRefusedVerdicts: a verdict the sweep decided and the next
// consumer refused is held and sent again on a backoff, counted each time;
// once accepted it is counted once. One refused until max_age is dropped
// and counted.
func TestSweepRetriesRefusedVerdicts(t *testing.T) {
	bothEmits(t, func(t *testing.T, cfg *Config) {
		h, g := startedHarness(t, cfg)
		// The take never comes: the sweep decides it after the wait.
		if err := h.try(sdk(1, underrun(1, 1, 0.8, nil), turn(nil))); err != nil {
			t.Fatal(err)
		}
		g.refuse.Store(true)
		h.advance(cfg.Wait)
		if h.p.held.Len() != 1 || len(h.verdicts()) != 0 {
			t.Fatalf("after a refused sweep: %d held, %d verdicts; want the turn held", h.p.held.Len(), len(h.verdicts()))
		}
		// Before its backoff has passed, the sweep leaves it be.
		attempts := g.refused.Load()
		h.advance(time.Millisecond)
		if g.refused.Load() != attempts {
			t.Fatalf("sent again before its backoff")
		}
		// After it, it is sent again (still refused, backing off further).
		h.advance(h.p.sweepInterval)
		if g.refused.Load() != attempts+1 {
			t.Fatalf("not sent again after its backoff: %d attempts", g.refused.Load())
		}
		g.refuse.Store(false)
		h.advance(maxRetryBackoff)
		v := h.verdicts()
		if len(v) != 1 {
			t.Fatalf("%d verdicts once accepted, want 1", len(v))
		}
		checkVerdict(t, v[0], want{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedWait})
		if got := h.counter("otelcol_processor_verdict_refused")[""]; got != 2 {
			t.Errorf("refused counter %d, want 2", got)
		}
		if got := h.counter("otelcol_processor_verdict_forced")[verdict.ForcedWait]; got != 1 {
			t.Errorf("forced{wait} %d, want 1 (counted once, when accepted)", got)
		}

		// Refused for good: dropped at max_age, counted.
		if err := h.try(sdk(2, underrun(1, 1, 0.8, nil), turn(nil))); err != nil {
			t.Fatal(err)
		}
		g.refuse.Store(true)
		for elapsed := time.Duration(0); elapsed <= cfg.MaxAge; elapsed += maxRetryBackoff {
			h.advance(maxRetryBackoff)
		}
		if h.p.held.Len() != 0 {
			t.Fatalf("%d traces held past max_age", h.p.held.Len())
		}
		if got := h.counter("otelcol_processor_verdict_dropped")[dropExportFailed]; got != 1 {
			t.Errorf("dropped{export_failed} = %d, want 1", got)
		}
	})
}

// TestConcurrentRefusalsAndRetries: many senders, a next consumer that
// refuses every third call, every sender retrying what was refused: every
// turn ends with exactly one verdict.
func TestConcurrentRefusalsAndRetries(t *testing.T) {
	bothEmits(t, func(t *testing.T, cfg *Config) {
		h := newHarness(t, cfg)
		var calls atomic.Int64
		var mu sync.Mutex
		sink := new(consumertest.TracesSink)
		h.p.next, _ = consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
			if calls.Add(1)%3 == 0 {
				return errRefused
			}
			mu.Lock()
			defer mu.Unlock()
			return sink.ConsumeTraces(ctx, td)
		})
		if err := h.p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		const workers, turns = 4, 50
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < turns; i++ {
					n := byte(w*turns + i + 1)
					for _, spans := range [][]sp{{underrun(1, 1, 0.5, nil), turn(nil)}, {take("t1", 2.0, nil)}} {
						for {
							if err := h.p.ConsumeTraces(context.Background(), sdk(0, withTrace(n, spans)...)); err == nil {
								break
							}
						}
					}
				}
			}(w)
		}
		wg.Wait()
		if err := h.p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := countVerdicts(sink); n != workers*turns {
			t.Fatalf("%d verdicts for %d turns (-1: a turn decided twice)", n, workers*turns)
		}
	})
}

// TestUnitCountUnknown: a turn that does not say how many units it read
// (pippa.turn.units absent) is never decided at once: its units may still
// come, one request each, in any order. It is decided once its trace has
// been quiet for decision_wait, from every unit that arrived.
func TestUnitCountUnknown(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	h := newHarness(t, cfg)
	// The turn first, alone: as a span-per-request client sends it.
	h.deliver(sdk(1, noUnits(turn(nil))))
	if len(h.verdicts()) != 0 {
		t.Fatal("a turn without its unit count was decided at once")
	}
	h.advance(cfg.DecisionWait / 2)
	h.deliver(sdk(1, unit(2, nil)))
	h.advance(cfg.DecisionWait / 2)
	// Quiet for only half the window since the last unit: still waiting.
	h.deliver(sdk(1, underrun(1, 2, 1.2, nil)))
	h.advance(cfg.DecisionWait / 2)
	h.deliver(sdk(1, take("t1", 0.3, nil)))
	if len(h.verdicts()) != 0 {
		t.Fatal("decided before its trace was quiet for decision_wait")
	}
	h.advance(cfg.DecisionWait)
	v := h.verdicts()
	if len(v) != 1 {
		t.Fatalf("%d verdicts after the quiet window, want 1", len(v))
	}
	checkVerdict(t, v[0], want{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork),
		evidence: "unit 1: 2 underruns, 1.20 s silent; take t1 need 0.30 s ≤ cushion 1.50 s"})
	if got := h.counter("otelcol_processor_verdict_forced"); len(got) != 0 {
		t.Errorf("forced %v: a turn decided after its quiet window is not forced", got)
	}
}

// TestUnitCountUnknownTakeMissing: quiet is not enough while a take an
// underrun names is missing: the turn waits for it until wait, then is
// forced.
func TestUnitCountUnknownTakeMissing(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	h := newHarness(t, cfg)
	h.deliver(sdk(1, underrun(1, 1, 0.6, nil), noUnits(turn(nil))))
	h.advance(cfg.DecisionWait)
	h.advance(cfg.DecisionWait)
	if len(h.verdicts()) != 0 {
		t.Fatal("decided while the take its underrun names is missing")
	}
	h.advance(cfg.Wait)
	v := h.verdicts()
	if len(v) != 1 {
		t.Fatalf("%d verdicts, want 1", len(v))
	}
	checkVerdict(t, v[0], want{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedWait})
}

// TestMaxAgeForcedSaysSo: a turn whose trace was held to max_age (its takes
// came two minutes before it, its own take never) is forced by max_age, and
// its evidence says that, not "after waiting 5s".
func TestMaxAgeForcedSaysSo(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	h := newHarness(t, cfg)
	h.deliver(sdk(1, take("t9", 0.3, nil)))
	h.advance(cfg.MaxAge - cfg.Wait/2)
	h.deliver(sdk(1, underrun(1, 1, 0.6, nil), turn(nil)))
	h.advance(cfg.Wait / 2)
	v := h.verdicts()
	if len(v) != 1 {
		t.Fatalf("%d verdicts, want 1", len(v))
	}
	checkVerdict(t, v[0], want{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedMaxAge,
		contains: []string{"forced at max_age (its trace held 2m0s): missing take t1"}})
	if got := h.counter("otelcol_processor_verdict_forced")[verdict.ForcedMaxAge]; got != 1 {
		t.Errorf("forced{max_age} = %d, want 1", got)
	}
}

// TestDecisionLatencyRecorded: the self-telemetry's decision latency holds
// one measurement per verdict, the time from the turn's arrival.
func TestDecisionLatencyRecorded(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	h := newHarness(t, cfg)
	h.deliver(sdk(1, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)))
	h.deliver(sdk(2, underrun(1, 1, 0.9, nil), turn(nil)))
	h.advance(cfg.Wait)
	count, sum := h.histogram("otelcol_processor_verdict_decision_latency")
	if count != 2 {
		t.Fatalf("decision latency has %d measurements, want 2", count)
	}
	if want := cfg.Wait.Seconds(); sum != want {
		t.Errorf("decision latencies sum to %v s, want %v (0 for the complete turn, the wait for the forced one)", sum, want)
	}
}

// TestPassSpans: with emit: verdicts, the spans pass_spans names go on
// beside the verdicts; the turn's own spans do not.
func TestPassSpans(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = EmitVerdicts
	cfg.PassSpans = []string{semconv.SpanLinkStatus}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h, _ := startedHarness(t, cfg)
	status := sp{name: semconv.SpanLinkStatus, id: 40, attrs: map[string]any{semconv.LinkStatus: "reconnecting"}}
	if err := h.try(sdk(1, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil), status)); err != nil {
		t.Fatal(err)
	}
	// The harness keeps only verdict scopes: count what a second one sends
	// on straight from its sink.
	names := map[string]int{}
	h2, _ := startedHarness(t, cfg)
	sink := h2.sink
	if err := h2.p.ConsumeTraces(context.Background(), sdk(2, unit(1, nil), turn(nil), status)); err != nil {
		t.Fatal(err)
	}
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					names[ss.At(j).Spans().At(k).Name()]++
				}
			}
		}
	}
	if names[semconv.SpanLinkStatus] != 1 || names[semconv.SpanVerdict] != 1 || names[semconv.SpanVoiceTurn] != 0 || names[semconv.SpanVoiceUnit] != 0 {
		t.Fatalf("sent on %v, want the link status span and the verdict only", names)
	}
	if n := len(h.verdicts()); n != 1 {
		t.Fatalf("%d verdicts, want 1", n)
	}
}

// TestEvictedVerdictInFlightIsNotDecidedAgain: a trace evicted at
// max_pending while its verdict is on its way is not held again by a span of
// it arriving meanwhile (a sender's retry): it yields one verdict.
func TestEvictedVerdictInFlightIsNotDecidedAgain(t *testing.T) {
	bothEmits(t, func(t *testing.T, cfg *Config) {
		cfg.MaxPending = 1
		h, _ := startedHarness(t, cfg)
		one := map[string]any{semconv.TurnUnits: int64(1)}
		// Trace 1's turn waits for its one unit.
		if err := h.try(build(1, turn(one))); err != nil {
			t.Fatal(err)
		}
		// One batch: trace 2's turn (evicting trace 1, whose verdict now
		// goes downstream), then trace 1's turn again (a retry upstream).
		dup := turn(one)
		dup.trace = 1
		if err := h.try(build(2, turn(one), dup)); err != nil {
			t.Fatal(err)
		}
		h.advance(cfg.Wait)
		h.advance(cfg.Wait)
		n := 0
		for _, v := range h.verdicts() {
			if v.TraceID() == traceID(1) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("trace 1 got %d verdicts, want 1", n)
		}
	})
}

// TestRefusedAtMaxAgeIsRetried: a verdict forced at max_age and refused is
// retried like any other: its retries are bounded from its first refusal,
// not from its trace's first span.
func TestRefusedAtMaxAgeIsRetried(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = EmitVerdicts
	h, g := startedHarness(t, cfg)
	if err := h.try(sdk(1, take("t1", 2.0, nil))); err != nil {
		t.Fatal(err)
	}
	h.advance(cfg.MaxAge - time.Second)
	if err := h.try(build(1, underrun(1, 1, 0.9, nil), turn(map[string]any{semconv.TurnUnits: int64(2)}))); err != nil {
		t.Fatal(err)
	}
	g.refuse.Store(true)
	h.advance(time.Second) // max_age: forced, refused
	g.refuse.Store(false)
	h.advance(maxRetryBackoff)
	if n := len(h.verdicts()); n != 1 {
		t.Fatalf("refused once at max_age, downstream back a moment later: %d verdicts, want 1 (dropped %v)", n, h.counter("otelcol_processor_verdict_dropped"))
	}
}
