package verdictprocessor

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/storagetest"
	"github.com/percause/percause/verdict"
)

// storageHost is a host with one file_storage extension on a folder.
type storageHost = storagetest.Host

func newStorageHost(t testing.TB, dir string) *storageHost { return storagetest.FileStorage(t, dir) }

// storedHarness is a started harness whose processor keeps its state in
// file_storage under dir.
func storedHarness(t *testing.T, dir string, emit string) (*harness, *storageHost) {
	t.Helper()
	host := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = emit
	cfg.Storage = &host.ID
	h := newHarness(t, cfg)
	if err := h.p.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return h, host
}

func (h *harness) stop(host *storageHost) {
	h.t.Helper()
	if err := h.p.Shutdown(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	if err := host.Ext.Shutdown(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// TestStorageKeepsHeldTurnsAcrossARestart: with storage, a shutdown does
// not force the turns held: they are stored, and the next start restores
// them and decides them properly when the rest arrives. Decided trace IDs
// are restored too, so a duplicate after the restart yields nothing.
func TestStorageKeepsHeldTurnsAcrossARestart(t *testing.T) {
	for _, emit := range []string{EmitAll, EmitVerdicts} {
		t.Run("emit_"+emit, func(t *testing.T) {
			dir := t.TempDir()
			h, host := storedHarness(t, dir, emit)
			// Trace 1: the phone's half, held for its take.
			h.deliver(sdk(1, underrun(1, 2, 1.4, nil), turn(nil)))
			// Trace 2: decided.
			h.deliver(sdk(2, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)))
			// Trace 3: an engine take whose turn has not come.
			h.deliver(sdk(3, take("t1", 0.1, nil)))
			h.stop(host)
			if n := len(h.verdicts()); n != 1 {
				t.Fatalf("%d verdicts before the restart, want 1 (nothing forced at shutdown)", n)
			}
			if got := h.counter("otelcol_processor_verdict_forced")[verdict.ForcedShutdown]; got != 0 {
				t.Fatalf("forced{shutdown} = %d with storage, want 0", got)
			}

			h2, host2 := storedHarness(t, dir, emit)
			defer h2.stop(host2)
			if got := h2.counter("otelcol_processor_verdict_restored")[""]; got != 2 {
				t.Fatalf("restored %d traces, want 2", got)
			}
			if got := h2.counter("otelcol_processor_verdict_pending_turns")[""]; got != 2 {
				t.Fatalf("pending_turns %d after the restore, want 2", got)
			}
			h2.deliver(sdk(1, take("t1", 0.4, nil)))
			h2.deliver(sdk(2, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil))) // a duplicate
			h2.deliver(sdk(3, underrun(1, 1, 0.5, nil), turn(nil)))
			v := h2.verdicts()
			if len(v) != 2 {
				t.Fatalf("%d verdicts after the restart, want 2", len(v))
			}
			got := map[byte]string{}
			for _, s := range v {
				c, _ := s.Attributes().Get(semconv.VerdictCause)
				got[s.TraceID()[15]] = c.Str()
			}
			if got[1] != semconv.CauseNetwork || got[3] != semconv.CauseNetwork {
				t.Errorf("verdicts after the restart %v, want trace 1 and 3 network (their parts joined across it)", got)
			}
			if d := h2.counter("otelcol_processor_verdict_dropped")[dropDecided]; d != 3 {
				t.Errorf("dropped{decided} = %d, want 3 (the duplicate of trace 2)", d)
			}
		})
	}
}

// TestStorageFollowsEveryRequest: what a request leaves held is stored by
// the time it returns; what it decides leaves storage.
func TestStorageFollowsEveryRequest(t *testing.T) {
	h, host := storedHarness(t, t.TempDir(), EmitVerdicts)
	defer h.stop(host)
	stored := func(n byte) bool {
		c, err := h.p.state.Contents(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(c.Traces, traceID(n))
	}
	h.deliver(sdk(1, underrun(1, 2, 1.4, nil), turn(nil)))
	if !stored(1) {
		t.Fatal("a held turn is not stored when its request returns")
	}
	h.deliver(sdk(1, take("t1", 0.4, nil)))
	h.p.cycles.runNext() // the decision's storage change is not waited for: run it
	if stored(1) {
		t.Fatal("a decided turn is still stored")
	}
	c, err := h.p.state.Contents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Decided) == 0 || c.Decided[0] != traceID(1) {
		t.Fatalf("the stored decided ring holds %v first, want trace 1", c.Decided[:min(1, len(c.Decided))])
	}
}

// TestStoredRingResized: decided IDs stored with one decided_cache_size are
// read back into another, the newest kept.
func TestStoredRingResized(t *testing.T) {
	dir := t.TempDir()
	h, host := storedHarness(t, dir, EmitAll)
	for i := 0; i < 200; i++ {
		td := sdk(1, unit(1, nil), turn(nil))
		setTrace(td, nthTrace(i))
		h.deliver(td)
	}
	h.stop(host)

	host2 := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Storage = &host2.ID
	cfg.DecidedCacheSize = 70
	h2 := newHarness(t, cfg)
	if err := h2.p.Start(context.Background(), host2); err != nil {
		t.Fatal(err)
	}
	defer h2.stop(host2)
	if n := h2.p.held.DecidedRing().Len(); n != 70 {
		t.Fatalf("%d decided IDs restored into a ring of 70", n)
	}
	for i := 0; i < 200; i++ {
		if want := i >= 130; h2.p.held.Decided(nthTrace(i)) != want {
			t.Fatalf("trace %d restored %v, want %v (the newest 70 kept)", i, !want, want)
		}
	}
}

// TestLabelBudget: the installations named on the counted events are
// bounded; the most recently seen keep their name, one idle long enough
// gives its place up, the rest count as other.
func TestLabelBudget(t *testing.T) {
	t0 := baseTime
	b := newLabelBudget(2, time.Hour)
	steps := []struct {
		id   string
		at   time.Duration
		want string
	}{
		{"a", 0, "a"},
		{"b", time.Minute, "b"},
		{"c", 2 * time.Minute, OtherInstallation}, // full, nobody idle
		{"a", 3 * time.Minute, "a"},               // a is seen again: b is now the oldest
		{"", 4 * time.Minute, NoInstallation},
		{"c", time.Minute + time.Hour, "c"}, // b idle an hour: c takes its place
		{"b", time.Minute + time.Hour, OtherInstallation},
		{"a", time.Minute + time.Hour, "a"},
	}
	for i, s := range steps {
		if got := b.label(s.id, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d: %q at +%s labelled %q, want %q", i, s.id, s.at, got, s.want)
		}
		if b.order.Len() > b.max || len(b.by) != b.order.Len() {
			t.Fatalf("step %d: %d named, %d indexed, budget %d", i, b.order.Len(), len(b.by), b.max)
		}
	}
	none := newLabelBudget(0, time.Hour)
	if got := none.label("a", t0); got != "" {
		t.Errorf("with no budget an installation is labelled %q, want none", got)
	}
}

// TestRestoredSurplusDecidedOldestFirst: restored under a smaller
// max_pending, the oldest held turns are decided by the sweep (forced:
// pending_limit), oldest first, and the rest stay held.
func TestRestoredSurplusDecidedOldestFirst(t *testing.T) {
	dir := t.TempDir()
	h, host := storedHarness(t, dir, EmitVerdicts)
	for i := 0; i < 5; i++ {
		td := sdk(1, underrun(1, 1, 0.4, nil), turn(nil)) // waits for its take
		setTrace(td, nthTrace(i))
		h.deliver(td)
	}
	h.stop(host)

	host2 := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = EmitVerdicts
	cfg.Storage = &host2.ID
	cfg.MaxPending = 2
	h2 := newHarness(t, cfg)
	if err := h2.p.Start(context.Background(), host2); err != nil {
		t.Fatal(err)
	}
	defer h2.stop(host2)
	h2.advance(h2.p.sweepInterval)
	v := h2.verdicts()
	if len(v) != 3 || h2.p.held.Len() != 2 {
		t.Fatalf("%d verdicts, %d held after the first sweep; want 3 decided, 2 held", len(v), h2.p.held.Len())
	}
	for i, s := range v {
		if s.TraceID() != nthTrace(i) {
			t.Errorf("verdict %d is trace %v, want the oldest first (%v)", i, s.TraceID(), nthTrace(i))
		}
	}
	if got := h2.counter("otelcol_processor_verdict_forced")[verdict.ForcedPendingLimit]; got != 3 {
		t.Errorf("forced{pending_limit} = %d, want 3", got)
	}
}
