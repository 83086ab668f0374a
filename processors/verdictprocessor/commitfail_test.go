package verdictprocessor

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// failingCommits offers file_storage's clients with Batch failing while
// fail is set: a commit that does not reach the disk.
type failingCommits struct {
	*storageHost
	fail *atomic.Bool
}

func (h failingCommits) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{h.ID: failingExt{Component: h.Ext, fail: h.fail}}
}

type failingExt struct {
	component.Component
	fail *atomic.Bool
}

func (e failingExt) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := e.Component.(storage.Extension).GetClient(ctx, kind, id, name)
	return failingClient{Client: c, fail: e.fail}, err
}

type failingClient struct {
	storage.Client
	fail *atomic.Bool
}

// Walk is file_storage's: the processor reads back what it stored.
func (c failingClient) Walk(ctx context.Context, fn storage.WalkFunc) error {
	return c.Client.(storage.Walker).Walk(ctx, fn)
}

var errDiskFull = errors.New("no space left on device")

func (c failingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if c.fail.Load() {
		return errDiskFull
	}
	return c.Client.Batch(ctx, ops...)
}

// TestAFailedCommitCountsItsVerdictOnce: a turn decided and accepted
// downstream whose commit fails is refused, held again and sent again
// (unaccept); once a commit holds, the processor's own verdicts counter
// has counted it once, as the count connector and the verdict file do.
func TestAFailedCommitCountsItsVerdictOnce(t *testing.T) {
	fail := new(atomic.Bool)
	host := failingCommits{storageHost: newStorageHost(t, t.TempDir()), fail: fail}
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = EmitVerdicts
	cfg.Storage = &host.ID
	h := newHarness(t, cfg)
	if err := h.p.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.p.Shutdown(context.Background()); _ = host.Ext.Shutdown(context.Background()) }()

	fail.Store(true)
	if err := h.try(sdk(1, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil))); !errors.Is(err, errDiskFull) {
		t.Fatalf("a request whose commit failed answered %v, want the commit's error", err)
	}
	if n := len(h.verdicts()); n != 1 {
		t.Fatalf("%d verdicts sent before the failed commit, want 1", n)
	}
	fail.Store(false)
	h.advance(cfg.Wait) // the retry's backoff passes: sent again, committed
	if n := len(h.verdicts()); n != 2 {
		t.Fatalf("%d verdicts sent in all, want the first and its resend", n)
	}
	var counted int64
	for _, n := range h.counter("otelcol_processor_verdict_verdicts") {
		counted += n
	}
	if counted != 1 {
		t.Errorf("otelcol_processor_verdict_verdicts counted %d (%v), want 1: one turn, decided once, its commit held once",
			counted, h.counter("otelcol_processor_verdict_verdicts"))
	}
}
