package verdictprocessor

import (
	"testing"

	"github.com/percause/percause/instr/semconv"
)

// TestInterleavedTracesInOneBatch: a batch whose traces' spans are
// interleaved, with a span of a trace already decided among them, decides
// each turn as if it had come alone. The processor looks a trace up once a
// run of its spans; a run ends at any span of another trace.
func TestInterleavedTracesInOneBatch(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config))
	h.deliver(sdk(3, unit(1, nil), turn(nil), take("t1", 0.5, nil)))
	in := func(n byte, s sp) sp { s.trace = n; return s }
	h.deliver(sdk(0,
		in(1, unit(1, nil)),
		in(2, unit(1, nil)),
		in(1, underrun(2, 1, 0.4, nil)),
		in(3, unit(2, nil)), // decided in the batch before: dropped
		in(2, unit(2, nil)),
		in(1, turn(nil)),
		in(2, turn(nil)),
		in(2, take("t1", 0.5, nil)),
		in(1, take("t1", 0.5, nil)),
		in(2, take("t2", 0.5, nil)),
		in(1, take("t2", 0.5, nil)),
	))
	causes := map[byte]string{}
	for _, v := range h.verdicts() {
		c, _ := v.Attributes().Get(semconv.VerdictCause)
		causes[v.TraceID()[15]] = c.Str()
	}
	want := map[byte]string{3: semconv.CauseNone, 1: semconv.CauseNetwork, 2: semconv.CauseNone}
	if len(causes) != len(want) {
		t.Fatalf("verdicts %v, want %v", causes, want)
	}
	for n, c := range want {
		if causes[n] != c {
			t.Errorf("trace %d: cause %q, want %q", n, causes[n], c)
		}
	}
	if got := h.counter("otelcol_processor_verdict_dropped")[dropDecided]; got != 1 {
		t.Errorf("dropped{decided} = %d, want 1 (the decided trace's unit)", got)
	}
	if h.p.held.Len() != 0 {
		t.Errorf("%d traces left held", h.p.held.Len())
	}
}
