package verdictprocessor

import (
	"time"

	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// The launches: the pool and state rules read a launch's previous turns,
// and a turn that carries no history of its own (the app's lines, most
// clients) is read against what the processor kept of its launch: each
// launch's recent turns by turn index, bounded by launches.max and
// launches.idle, stored beside the held turns
// (docs/decisions/0226-the-collector-remembers-each-launch.md). A client
// that reuses its service.instance.id across a relaunch has its launches
// told apart by the turns' order, index and uptimes (runs,
// docs/decisions/0249-launch-boundaries-from-evidence-that-holds.md).

// launchOf is the launch of a held trace's turn (ok false without a turn,
// without a launch named, or with launches off).
func (p *verdictProcessor) launchOf(e *pending.Entry) (launches.Key, bool) {
	if e.Turn == nil || p.launches == nil {
		return launches.Key{}, false
	}
	return launches.KeyOf(e.Turn.Resource)
}

// placeOf is what places a held trace's turn among its launch's turns
// (docs/decisions/0249): its trace, index, end and uptimes.
func placeOf(e *pending.Entry) launches.KeptTurn {
	t := e.Turn
	l := launches.KeptTurn{PastTurn: verdict.PastTurn{Index: t.Index}, Trace: e.ID, At: int64(t.EndTime),
		App: launches.NoUptime, Device: launches.NoUptime}
	if t.AppUptime.OK {
		l.App = t.AppUptime.V
	}
	if t.DeviceUptime.OK {
		l.Device = t.DeviceUptime.V
	}
	return l
}

// runOf is the run (the launch under its service.instance.id) a held
// trace's turn belongs to.
func (p *verdictProcessor) runOf(e *pending.Entry, k launches.Key) uint32 {
	t := placeOf(e)
	return p.launches.RunOf(k, &t)
}

// recordTurnLocked keeps the turn that just arrived in its launch's
// history, and adds to woken the held traces of the launch's later turns
// that read it: they may have been waiting for it.
func (p *verdictProcessor) recordTurnLocked(e *pending.Entry, now time.Time, out *tally, woken []*pending.Entry) []*pending.Entry {
	k, ok := p.launchOf(e)
	if !ok {
		return woken
	}
	before := p.launches.Len()
	t := placeOf(e)
	t.PastTurn = verdict.PastOf(e.Turn)
	run, _, forgot := p.launches.Record(k, t, now)
	out.launchesDelta += int64(p.launches.Len() - before)
	if forgot > 0 {
		out.add(&out.forgotten, launches.ForgotLimit, int64(forgot))
	}
	// A later turn reads this one if it is among the turns before it that
	// its rules read: up to rising_turns back.
	for j := int64(1); j <= int64(p.cfg.Rules.RisingTurns); j++ {
		if id, ok := p.launches.TraceOf(k, run, e.Turn.Index+j); ok {
			if next := p.held.Get(id); next != nil && !next.Delivery.Sending {
				woken = append(woken, next)
			}
		}
	}
	return woken
}

// previousKnown reports whether the turn can be read across turns now: it
// carries its history, reads none, or the earlier turns of its launch its
// rules read have been seen (the previous one for the pool rule, the
// rising_turns before it for the state rule; arrival order is not turn
// order). A turn with bad input is decided unknown whatever came before
// it, so it waits for nothing.
func (p *verdictProcessor) previousKnown(e *pending.Entry) bool {
	t := e.Turn
	if !t.NeedsEarlier(p.cfg.Rules.RisingTurns) || len(t.Problems) > 0 {
		return true
	}
	k, ok := p.launchOf(e)
	if !ok {
		return true
	}
	back := int64(1)
	if len(t.Live) > 0 {
		back = int64(p.cfg.Rules.RisingTurns)
	}
	run := p.runOf(e, k)
	for i := t.Index - 1; i >= max(t.Index-back, 1); i-- {
		if !p.launches.Has(k, run, i) {
			return false
		}
	}
	return true
}

// earlierOf is what was kept of the turn's launch before it.
func (p *verdictProcessor) earlierOf(e *pending.Entry) *verdict.Earlier {
	k, ok := p.launchOf(e)
	if !ok {
		return nil
	}
	run := p.runOf(e, k)
	earlier := p.launches.Earlier(k, run, e.Turn.Index)
	earlier.Began = p.launches.Began(k, run, e.ID)
	return earlier
}

// expireLaunchesLocked forgets the launches idle too long.
func (p *verdictProcessor) expireLaunchesLocked(now time.Time, out *tally) {
	if p.launches == nil {
		return
	}
	if n := p.launches.Expire(now); n > 0 {
		out.launchesDelta -= int64(n)
		out.add(&out.forgotten, launches.ForgotIdle, int64(n))
	}
}
