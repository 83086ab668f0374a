package verdictprocessor

import (
	"encoding/binary"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/verdict"
)

// nthTrace is a distinct trace ID for any n (traceID covers only 255).
func nthTrace(n int) pcommon.TraceID {
	var id pcommon.TraceID
	id[0] = 0xEE
	binary.BigEndian.PutUint64(id[8:], uint64(n)+1)
	return id
}

// TestStateBounded: traces beyond max_pending and decided IDs beyond
// decided_cache_size never accumulate, however many turns pass through;
// every trace that left without a verdict is counted.
func TestStateBounded(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxPending = 16
	cfg.DecidedCacheSize = 32
	h := newHarness(t, cfg)

	const traces = 500
	for i := range traces {
		td := build(1, underrun(1, 1, 0.4, nil), turn(nil)) // its take never comes: it waits
		if i%2 == 1 {
			td = build(1, take("t1", 0.3, nil)) // engine spans whose turn never comes
		}
		setTrace(td, nthTrace(i))
		h.deliver(td)
		if n := h.p.held.Len(); n > cfg.MaxPending {
			t.Fatalf("after %d traces %d are pending, max_pending %d", i+1, n, cfg.MaxPending)
		}
		if n := h.p.held.DecidedRing().Len(); n > cfg.DecidedCacheSize {
			t.Fatalf("after %d traces %d decided IDs are held, decided_cache_size %d", i+1, n, cfg.DecidedCacheSize)
		}
	}
	h.advance(cfg.MaxAge)
	if n := h.p.held.Len(); n != 0 {
		t.Fatalf("%d traces pending after max_age", n)
	}

	turns := int64(len(h.verdicts()))
	dropped := h.counter("otelcol_processor_verdict_dropped")
	if turns+dropped[dropPendingLimit]+dropped[dropNoTurn] != traces {
		t.Errorf("%d verdicts + %d evicted + %d aged out, want %d traces accounted for", turns, dropped[dropPendingLimit], dropped[dropNoTurn], traces)
	}
	if turns != traces/2 {
		t.Errorf("%d verdicts, want one per turn (%d)", turns, traces/2)
	}
	forced := h.counter("otelcol_processor_verdict_forced")
	if forced[verdict.ForcedPendingLimit]+forced[verdict.ForcedWait] != turns {
		t.Errorf("forced %v, want every one of the %d turns forced (their takes never came)", forced, turns)
	}

	// A duplicate of a turn still in the ring yields nothing; one that left
	// the ring is decided again (the documented limit of the ring).
	recent := build(1, underrun(1, 1, 0.4, nil), turn(nil))
	setTrace(recent, nthTrace(traces-2))
	h.deliver(recent)
	if h.p.held.Len() != 0 {
		t.Errorf("a duplicate of a recently decided turn is held again")
	}
	if got := h.counter("otelcol_processor_verdict_dropped")[dropDecided]; got != 2 {
		t.Errorf("dropped{decided} = %d, want 2 (the duplicate's two spans)", got)
	}
	old := build(1, underrun(1, 1, 0.4, nil), turn(nil))
	setTrace(old, nthTrace(0))
	h.deliver(old)
	if h.p.held.Len() != 1 {
		t.Errorf("a duplicate of a turn long out of the ring is not held: %d pending", h.p.held.Len())
	}
}

// setTrace moves every span of a batch to trace id.
func setTrace(td ptrace.Traces, id pcommon.TraceID) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				spans.At(k).SetTraceID(id)
			}
		}
	}
}
