package verdictprocessor

import (
	"context"
	"time"

	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// sweep decides the turns whose wait (or decision window) is over, sends
// again the verdicts refused earlier, and drops what aged out.
func (p *verdictProcessor) sweep(ctx context.Context) {
	now := p.now()
	var out tally
	var ds []decision
	p.mu.Lock()
	each := p.held.Each
	if p.handover != nil {
		each = p.lookBeforeDecidingLocked(ctx, now)
	}
	// More held than max_pending (restored under a smaller limit): the
	// oldest are decided now, and stay held until their verdict is accepted.
	surplus := p.held.Len() - p.cfg.MaxPending
	p.expireLaunchesLocked(now, &out)
	forgotSent := 0
	if p.handover != nil {
		forgotSent = p.handover.forgetSentLocked(now, p.cfg.MaxAge, p.cfg.DecidedCacheSize)
	}
	each(func(e *pending.Entry) {
		if e.Delivery.Sending || now.Before(e.Delivery.RetryAt) {
			return
		}
		if surplus > 0 && e.Turn != nil && e.Delivery.Refusals == 0 {
			surplus--
			ds = append(ds, p.decideLocked(e, p.forced(verdict.ForcedPendingLimit), &out))
			return
		}
		if d, ok := p.sweepOneLocked(e, now, &out); ok {
			ds = append(ds, d)
		}
	})
	c, queued := p.cycles.queueLocked(ds)
	p.mu.Unlock()
	p.tel.record(ctx, &out)
	switch {
	case queued:
		_ = p.cycles.await(ctx, c)
	case len(ds) > 0:
		if accepted, _ := p.sendNow(ctx, ds); len(accepted) > 0 && p.state != nil {
			// decided: the stored traces go, the ring grows
			_ = p.cycles.await(ctx, p.cycles.ride(accepted))
		}
	case p.state != nil && (out.pendingDelta != 0 || forgotSent > 0):
		p.cycles.poke()
	}
}

// sweepAction is what a sweep does with one held trace.
type sweepAction int

const (
	sweepNothing sweepAction = iota // its time has not come
	sweepDrop                       // aged out without its turn
	sweepDecide                     // decided now, forced as dueLocked says
)

// sweepOneLocked decides one held trace whose time has come, or drops it
// when it aged out without its turn.
func (p *verdictProcessor) sweepOneLocked(e *pending.Entry, now time.Time, out *tally) (decision, bool) {
	switch act, forced := p.dueLocked(e, now); act {
	case sweepDrop:
		p.releaseLocked(e, out)
		out.inc(&out.dropped, dropNoTurn)
	case sweepDecide:
		return p.decideLocked(e, forced, out), true
	}
	return decision{}, false
}

// dueLocked is what a sweep at now does with a held trace, without doing
// it: the sweep acts on it, and a gateway on Kafka first looks whether
// the trace's partition moved (lookBeforeDecidingLocked).
func (p *verdictProcessor) dueLocked(e *pending.Entry, now time.Time) (sweepAction, verdict.Forced) {
	aged := now.Sub(e.Created) >= p.cfg.MaxAge
	switch {
	case e.Turn == nil:
		if aged {
			return sweepDrop, verdict.Forced{}
		}
		return sweepNothing, verdict.Forced{}
	case e.Delivery.Refusals > 0:
		return sweepDecide, e.Delivery.Forced
	case p.decidable(e):
		return sweepDecide, verdict.Forced{}
	case p.quietAndWhole(e, now):
		// Everything of its own trace came; what it may still wait for is
		// its launch's previous turn, history_wait from its arrival (a phone
		// retrying that turn's refused batch sends it late). Nothing more
		// of its own comes, so it is not forced when decided without it.
		if aged || now.Sub(e.TurnAt) >= p.cfg.HistoryWait || p.previousKnown(e) {
			return sweepDecide, verdict.Forced{}
		}
		return sweepNothing, verdict.Forced{}
	case now.Sub(e.TurnAt) >= p.cfg.Wait:
		return sweepDecide, p.forced(verdict.ForcedWait)
	case aged:
		return sweepDecide, p.forced(verdict.ForcedMaxAge)
	}
	return sweepNothing, verdict.Forced{}
}

// quietAndWhole reports whether everything of the turn's own trace has
// arrived and the trace has been quiet for the decision window: it is
// decided then, or once history_wait has passed when its launch's
// previous turn has not come, and what its launch's earlier turns did not
// bring is read as not seen (the evidence says which).
func (p *verdictProcessor) quietAndWhole(e *pending.Entry, now time.Time) bool {
	if e.Turn == nil || now.Sub(e.LastAt) < p.cfg.DecisionWait {
		return false
	}
	return e.Complete(&p.cfg.Rules) || p.settled(e, now)
}

// settled reports whether a turn that does not say how many units it read
// can be decided: every take its underruns name has arrived and nothing of
// its trace has arrived for the decision window.
func (p *verdictProcessor) settled(e *pending.Entry, now time.Time) bool {
	return e.Turn != nil && !e.Sized() && !e.WaitsForTake(&p.cfg.Rules) && now.Sub(e.LastAt) >= p.cfg.DecisionWait
}
