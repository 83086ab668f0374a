package verdictprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// emitVerdicts (emit: verdicts) sends on only the verdict spans, each
// cycle's in one batch, and the spans pass_spans names at once.
type emitVerdicts struct{}

func (emitVerdicts) decide(p *verdictProcessor, e *pending.Entry, forced verdict.Forced, out *tally) decision {
	return p.verdictLocked(e, forced, out)
}

func (emitVerdicts) write(p *verdictProcessor, ds []decision) ptrace.Traces {
	return p.verdictSpans(ds)
}

func (emitVerdicts) passOn(ctx context.Context, p *verdictProcessor, td ptrace.Traces) error {
	return p.passSpans(ctx, td)
}

func (emitVerdicts) forwardUnread(context.Context, *verdictProcessor, ptrace.Traces) error {
	return nil
}

func (emitVerdicts) deliver(ctx context.Context, p *verdictProcessor, _ ptrace.Traces, h holding) error {
	return p.deliverThroughCycle(ctx, h)
}

func (emitVerdicts) sendsBatch() bool    { return false }
func (emitVerdicts) keepsLaunches() bool { return true }
