package verdictprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// emitAll (emit: all) passes every span on at once and adds the verdict
// spans to the batch that completed their turn.
type emitAll struct{}

func (emitAll) decide(p *verdictProcessor, e *pending.Entry, forced verdict.Forced, out *tally) decision {
	return p.verdictLocked(e, forced, out)
}

func (emitAll) write(p *verdictProcessor, ds []decision) ptrace.Traces { return p.verdictSpans(ds) }

func (emitAll) passOn(context.Context, *verdictProcessor, ptrace.Traces) error { return nil }

func (emitAll) forwardUnread(ctx context.Context, p *verdictProcessor, td ptrace.Traces) error {
	return p.next.ConsumeTraces(ctx, td)
}

// deliver sends the batch on with its verdicts added.
func (emitAll) deliver(ctx context.Context, p *verdictProcessor, td ptrace.Traces, h holding) error {
	if h.durable {
		p.cycles.poke() // the cycle stores while the next consumer works
	}
	now := p.now()
	for i := range h.decisions {
		p.appendVerdict(td, &h.decisions[i], now)
	}
	err := p.next.ConsumeTraces(ctx, td)
	if len(h.decisions) > 0 {
		p.settle(ctx, h.decisions, err)
	}
	if err != nil {
		return err
	}
	if p.state == nil || !h.durable && len(h.decisions) == 0 {
		return nil
	}
	// The acceptances ride the next commit (the stored traces go, the ring
	// grows, the count connector's IDs beside): the batch waits for it.
	cy := p.cycles.ride(h.decisions)
	if err := p.cycles.await(ctx, cy); err != nil {
		return err
	}
	if err := cy.commitErr; err != nil {
		return err
	}
	if h.full {
		return errPendingFull
	}
	return nil
}

func (emitAll) sendsBatch() bool    { return true }
func (emitAll) keepsLaunches() bool { return true }
