package verdictprocessor

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// emitTurns (emit: turns) decides nothing: once a turn could be decided,
// its trace goes on joined (the voice.turn, its units and its takes under
// the phone's resource), for the stage that keeps its launch to decide.
type emitTurns struct{}

// decide takes a copy of the trace's readings under the lock (a late
// span may still add to the held trace while it is sent), with why it
// was forced, if it was, for the processor's counters.
func (emitTurns) decide(_ *verdictProcessor, e *pending.Entry, forced verdict.Forced, _ *tally) decision {
	t := e.Trace
	t.UnitSpans, t.Units, t.Takes = slices.Clone(t.UnitSpans), slices.Clone(t.Units), slices.Clone(t.Takes)
	return decision{entry: e, resource: e.Turn.Resource, turnAt: e.TurnAt, joined: t,
		v: verdict.Verdict{Forced: forced.Reason}}
}

func (emitTurns) write(_ *verdictProcessor, ds []decision) ptrace.Traces {
	td := ptrace.NewTraces()
	for i := range ds {
		verdict.AppendTrace(td, &ds[i].joined)
	}
	return td
}

func (emitTurns) passOn(context.Context, *verdictProcessor, ptrace.Traces) error { return nil }

func (emitTurns) forwardUnread(context.Context, *verdictProcessor, ptrace.Traces) error {
	return nil
}

func (emitTurns) deliver(ctx context.Context, p *verdictProcessor, _ ptrace.Traces, h holding) error {
	return p.deliverThroughCycle(ctx, h)
}

func (emitTurns) sendsBatch() bool    { return false }
func (emitTurns) keepsLaunches() bool { return false }
