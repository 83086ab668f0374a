package verdictprocessor

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// FuzzProcessor feeds arbitrary OTLP protobuf batches to the processor. It
// must never panic, never hold more than its limits, and every verdict it
// writes must be well formed. Seeds are the golden inputs of the rule tests;
// the committed corpus is under testdata/fuzz/FuzzProcessor.
func FuzzProcessor(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rules", "*.in.jsonl"))
	m := ptrace.ProtoMarshaler{}
	for _, path := range files {
		for _, td := range readBatches(f, path) {
			b, err := m.MarshalTraces(td)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(data)
		if err != nil {
			return
		}
		cfg := createDefaultConfig().(*Config)
		cfg.MaxPending = 4
		cfg.DecidedCacheSize = 8
		h := newHarness(t, cfg)
		// Twice: the second delivery is a duplicate.
		h.deliver(td)
		td2, _ := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(data)
		h.deliver(td2)
		if n := h.p.held.Len(); n > cfg.MaxPending {
			t.Fatalf("%d traces pending over the limit %d", n, cfg.MaxPending)
		}
		h.advance(cfg.Wait)
		h.advance(cfg.MaxAge)
		if n := h.p.held.Len(); n != 0 {
			t.Fatalf("%d traces still pending after max_age", n)
		}
		h.shutdown()
		seen := map[string]bool{}
		for _, v := range h.verdicts() {
			a := v.Attributes()
			cause, _ := a.Get(semconv.VerdictCause)
			if !slices.Contains(semconv.Causes, cause.Str()) {
				t.Fatalf("cause %q", cause.Str())
			}
			causes, _ := a.Get(semconv.VerdictCauses)
			if causes.Slice().Len() == 0 || causes.Slice().At(0).Str() != cause.Str() {
				t.Fatalf("causes %v do not start with the cause %q", causes.AsRaw(), cause.Str())
			}
			ev, _ := a.Get(semconv.VerdictEvidence)
			if ev.Str() == "" || len(ev.Str()) > verdict.MaxEvidence+len("…") {
				t.Fatalf("evidence %q", ev.Str())
			}
			key := v.TraceID().String()
			if seen[key] {
				t.Fatalf("two verdicts for trace %s", key)
			}
			seen[key] = true
		}
	})
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met within 5 s")
}
