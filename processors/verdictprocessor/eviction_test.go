package verdictprocessor

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// heldGate is a next consumer that holds every call until the test lets it
// through, one at a time, so a test can stop the processor between its
// cycles.
type heldGate struct {
	consumer.Traces
	arrived chan struct{} // a call is waiting
	pass    chan struct{} // let one call through
}

func newHeldGate(sink *consumertest.TracesSink) *heldGate {
	g := &heldGate{arrived: make(chan struct{}, 16), pass: make(chan struct{})}
	g.Traces, _ = consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		g.arrived <- struct{}{}
		<-g.pass
		return sink.ConsumeTraces(ctx, td)
	})
	return g
}

// waitArrived waits for the next call to reach the gate.
func (g *heldGate) waitArrived(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no call reached the next consumer")
	}
}

// copyDir copies the files of a folder (the stored state as a crash at
// this moment would leave it: no commit runs while the gate holds a call).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		in, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEvictedTraceStaysStoredUntilItsVerdictIsAccepted: a trace whose
// phone half was acknowledged and stored is evicted at max_pending while
// another cycle's verdicts are downstream. Until its own verdict is
// accepted it must stay in storage: a crash in that window (here: the
// stored state copied while its verdict waits at the next consumer, and a
// new processor started on the copy) must find it again.
func TestEvictedTraceStaysStoredUntilItsVerdictIsAccepted(t *testing.T) {
	dir := t.TempDir()
	host := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = EmitVerdicts
	cfg.Storage = &host.ID
	cfg.MaxPending = 2
	h := newHarness(t, cfg)
	g := newHeldGate(h.sink)
	h.p.next = g
	if err := h.p.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			close(g.pass)
		}
		h.stop(host)
	}()

	// Trace 1: the phone's half, acknowledged and stored, waiting for its take.
	if err := h.p.ConsumeTraces(context.Background(), sdk(1, underrun(1, 2, 1.4, nil), turn(nil))); err != nil {
		t.Fatal(err)
	}
	// Trace 2: complete; its verdict goes downstream and is held there.
	done2 := make(chan error, 1)
	go func() {
		done2 <- h.p.ConsumeTraces(context.Background(), sdk(2, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)))
	}()
	g.waitArrived(t)
	// Trace 3's phone half fills the store: trace 1, the oldest not on its
	// way, is evicted and decided (forced: pending_limit); its verdict
	// waits for the next cycle.
	done3 := make(chan error, 1)
	go func() { done3 <- h.p.ConsumeTraces(context.Background(), sdk(3, underrun(1, 1, 0.5, nil), turn(nil))) }()
	evicted := func() bool {
		h.p.mu.Lock()
		defer h.p.mu.Unlock()
		return h.p.held.Get(traceID(1)) == nil && h.p.held.Get(traceID(3)) != nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for !evicted() {
		if time.Now().After(deadline) {
			t.Fatal("trace 3 never evicted trace 1")
		}
		time.Sleep(time.Millisecond)
	}
	// Trace 2's verdict is accepted: its cycle stores what changed. The
	// next cycle sends trace 1's verdict, which the gate holds.
	g.pass <- struct{}{}
	if err := <-done2; err != nil {
		t.Fatal(err)
	}
	g.waitArrived(t)

	// A crash now: the stored state as it is.
	crash := t.TempDir()
	copyDir(t, dir, crash)
	host2 := newStorageHost(t, crash)
	cfg2 := *cfg
	cfg2.Storage = &host2.ID
	h2 := newHarness(t, &cfg2)
	if err := h2.p.Start(context.Background(), host2); err != nil {
		t.Fatal(err)
	}
	restored := h2.p.held.Get(traceID(1)) != nil
	h2.stop(host2)

	close(g.pass)
	released = true
	if err := <-done3; err != nil {
		t.Fatal(err)
	}
	if !restored {
		t.Fatal("trace 1 was acknowledged, then evicted; with its verdict not yet accepted it is no longer stored: a crash now loses it")
	}
	h.drainSink()
	var causes []string
	for _, v := range h.verdicts() {
		if v.TraceID() == traceID(1) {
			c, _ := v.Attributes().Get(semconv.VerdictCause)
			causes = append(causes, c.Str())
		}
	}
	if len(causes) != 1 {
		t.Fatalf("trace 1 got verdicts %v, want one", causes)
	}
}
