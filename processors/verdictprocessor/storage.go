package verdictprocessor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/percause/percause/processors/verdictprocessor/internal/changelog"
	"github.com/percause/percause/processors/verdictprocessor/internal/persist"
)

// commitRetry is how soon a failed commit is tried again when nothing else
// asks for one.
const commitRetry = 100 * time.Millisecond

// openStorage gets the processor's client from the storage extension the
// config names, reads back what an earlier run left and from then on tells
// persistence what changes
// (docs/decisions/0221-pending-state-in-file-storage.md, on shared_storage
// since docs/decisions/0235-one-commit-for-every-component.md).
func (p *verdictProcessor) openStorage(ctx context.Context, host component.Host) error {
	ext, ok := host.GetExtensions()[*p.cfg.Storage]
	if !ok {
		return fmt.Errorf("verdict processor: storage extension %s is not configured (list it under service.extensions)", p.cfg.Storage)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("verdict processor: extension %s is not a storage extension", p.cfg.Storage)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, p.id, "")
	if err != nil {
		return fmt.Errorf("verdict processor: storage %s: %w", p.cfg.Storage, err)
	}
	ring := p.held.DecidedRing()
	state, restored, err := persist.Open(ctx, client, ring)
	if err != nil {
		_ = client.Close(ctx)
		p.tel.storageError(ctx, opRestore, 1)
		return fmt.Errorf("verdict processor: storage %s: %w", p.cfg.Storage, err)
	}
	// The store tells persistence what changes from now on; what was read
	// back is held again as it is stored.
	p.held.ReportTo(state)
	now := p.now()
	for _, e := range restored.Traces {
		if p.held.Get(e.ID) == nil {
			p.held.Restore(e, now)
		}
	}
	if p.launches != nil {
		p.launches.ReportTo(state)
		for _, l := range restored.Launches {
			p.launches.Restore(l)
		}
		p.tel.b.ProcessorVerdictLaunches.Add(int64(p.launches.Len()))
	}
	p.state = state
	p.reportRestored(ctx, restored)
	return nil
}

func (p *verdictProcessor) reportRestored(ctx context.Context, r persist.Restored) {
	if r.RingDiscarded {
		p.logger.Warn("verdict processor: the stored decided IDs have no valid index; starting without them")
	}
	if n := len(r.Traces); n > 0 {
		// Past the pending limit (a smaller max_pending than before), the
		// sweep decides the oldest (forced: pending_limit), held until
		// accepted.
		p.tel.restored(ctx, int64(n))
		p.logger.Info("verdict processor: restored pending turns from storage",
			zap.Int("traces", n), zap.Int("decided_ids", p.held.DecidedRing().Len()))
	}
	if r.Unreadable > 0 {
		p.logger.Warn("verdict processor: dropped stored values it cannot read", zap.Int("values", r.Unreadable))
		p.tel.storageError(ctx, opRestore, int64(r.Unreadable))
	}
}

// commit stores every change marked since the previous commit in one
// transaction. On failure the changes stay marked, for the next cycle.
func (p *verdictProcessor) commit(ctx context.Context) error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	b := p.state.Prepare()
	var hb changelog.Batch
	if p.handover != nil {
		hb = p.handover.prepareLocked(p)
	}
	p.mu.Unlock()
	// The changelog first: ahead of the store it holds no more than a
	// retry of the commit writes again, while a store ahead of it would
	// let a gateway taking the partition over decide again what this one
	// decided.
	var err error
	if p.handover != nil {
		err = p.writeChangelog(ctx, hb)
	}
	if err == nil {
		err = p.state.Write(ctx, b)
	}
	if err == nil {
		return nil
	}
	p.mu.Lock()
	p.state.Failed(b)
	p.mu.Unlock()
	p.tel.storageError(ctx, opCommit, 1)
	if p.storageErrLog.Allow() {
		p.logger.Error("verdict processor: storing pending turns failed; the requests that needed it are refused for a retry",
			zap.Int("operations", b.Len()), zap.Error(err))
	}
	if !p.simulated { // the simulation's steps retry it, at its own times
		time.AfterFunc(commitRetry, p.cycles.poke)
	}
	return fmt.Errorf("verdict processor: storing the pending turns: %w", err)
}

// closeStorage closes the storage client (the last cycle has stored the
// last changes).
func (p *verdictProcessor) closeStorage(ctx context.Context) error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	p.mu.Unlock()
	err := p.state.Close(ctx)
	if err != nil {
		p.tel.storageError(ctx, opClose, 1)
	}
	if p.handover != nil {
		p.handover.log.Close()
	}
	return err
}
