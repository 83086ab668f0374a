package verdictprocessor

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// emitTurns (emit: turns) decides nothing: once a turn could be decided,
// its trace goes on joined (the voice.turn, its units and its takes under
// the phone's resource), for the stage that keeps its launch to decide.
// What it sends goes on as emit: verdicts' does, through the cycle, and
// nothing else of a request (pass_spans is emit: verdicts' alone); only
// what it decides and writes differ, and it keeps no launches.
type emitTurns struct{ emitVerdicts }

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

func (emitTurns) keepsLaunches() bool { return false }
