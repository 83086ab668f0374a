package verdictprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// emitMode is what the emit setting changes, one implementation a mode:
// emitAll (emit_all.go), emitVerdicts (emit_verdicts.go) and emitTurns
// (emit_turns.go). The rest of the processor asks its mode and branches
// on none.
type emitMode interface {
	// decide makes a held trace's decision, under the processor's lock.
	decide(p *verdictProcessor, e *pending.Entry, forced verdict.Forced, out *tally) decision
	// write writes ds for the next consumer, in a batch of their own.
	write(p *verdictProcessor, ds []decision) ptrace.Traces
	// passOn sends on what a request brings beside its turns' readings:
	// the batch itself, or the spans pass_spans names.
	passOn(ctx context.Context, p *verdictProcessor, td ptrace.Traces) error
	// forwardUnread passes on a batch with nothing the rules read.
	forwardUnread(ctx context.Context, p *verdictProcessor, td ptrace.Traces) error
	// deliver sends what a request decided and waits for what its
	// sender's acknowledgement needs.
	deliver(ctx context.Context, p *verdictProcessor, td ptrace.Traces, h holding) error
	// sendsBatch: the request's own batch goes on, its verdicts added to
	// it (the processor mutates it); else decisions wait for the cycle,
	// which sends them in a batch of their own.
	sendsBatch() bool
	// keepsLaunches: the mode reads a launch's earlier turns (a stage that
	// decides nothing keeps none).
	keepsLaunches() bool
}

// emitModeOf is the mode the emit setting names (Validate checked it).
func emitModeOf(emit string) emitMode {
	switch emit {
	case EmitVerdicts:
		return emitVerdicts{}
	case EmitTurns:
		return emitTurns{}
	default:
		return emitAll{}
	}
}
