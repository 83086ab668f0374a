package verdictprocessor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// decision is a verdict on its way downstream, with what is needed to
// write its span and to settle its trace once the next consumer answers.
type decision struct {
	entry    *pending.Entry
	resource pcommon.Resource
	turnAt   time.Time
	// installation is the app.installation.id of the counted events ("":
	// none, with counters.installations 0).
	installation string
	v            verdict.Verdict
	// joined (emit: turns) is the trace's readings as they stood when it
	// was joined, written as spans once the lock is let go.
	joined verdict.Trace
	// evicted: already out of memory (the pending limit, shutdown); a
	// refusal drops it, counted, since there is no room to hold it again.
	evicted bool
}

// decideLocked decides a held trace as the emit mode does and marks its
// decision as on its way; settle releases it once the next consumer
// accepted it.
func (p *verdictProcessor) decideLocked(e *pending.Entry, forced verdict.Forced, out *tally) decision {
	e.Delivery.Sending, e.Delivery.Forced = true, forced
	return p.mode.decide(p, e, forced, out)
}

// verdictLocked decides a held trace's verdict with its launch's history.
func (p *verdictProcessor) verdictLocked(e *pending.Entry, forced verdict.Forced, out *tally) decision {
	v := verdict.Decide(&e.Trace, p.earlierOf(e), &p.cfg.Rules, forced)
	if v.HistoryDisagrees {
		out.disagreements++
	}
	return decision{entry: e, resource: e.Turn.Resource, turnAt: e.TurnAt,
		installation: p.labels.label(installationOf(e.Turn.Resource), p.now()), v: v}
}

// forced words why a turn is decided early, as the evidence gives it.
func (p *verdictProcessor) forced(reason string) verdict.Forced {
	f := verdict.Forced{Reason: reason}
	switch reason {
	case verdict.ForcedWait:
		f.Why = fmt.Sprintf("forced after waiting %s", p.cfg.Wait)
	case verdict.ForcedMaxAge:
		f.Why = fmt.Sprintf("forced at max_age (its trace held %s)", p.cfg.MaxAge)
	case verdict.ForcedPendingLimit:
		f.Why = fmt.Sprintf("forced by the pending limit (%d traces)", p.cfg.MaxPending)
	case verdict.ForcedShutdown:
		f.Why = "forced at shutdown"
		if p.cfg.EndOfInput {
			f.Why, f.Ended = "the input ended", true
		}
	}
	return f
}

// appendVerdict writes d's verdict span into td, decided at now.
func (p *verdictProcessor) appendVerdict(td ptrace.Traces, d *decision, now time.Time) {
	r := verdict.RecordOf(&d.entry.Trace, d.v, d.installation, pcommon.NewTimestampFromTime(now))
	verdict.Append(td, d.resource, &r, p.epoch)
}

// verdictSpans writes the verdict spans of ds into a batch of their own.
func (p *verdictProcessor) verdictSpans(ds []decision) ptrace.Traces {
	td := ptrace.NewTraces()
	now := p.now()
	for i := range ds {
		p.appendVerdict(td, &ds[i], now)
	}
	return td
}

// deliverThroughCycle (emit: verdicts, turns) waits for the cycle that
// sends what the batch decided and stores what it left held.
func (p *verdictProcessor) deliverThroughCycle(ctx context.Context, h holding) error {
	if !h.queued && !h.durable {
		if h.full {
			return errPendingFull
		}
		return nil
	}
	if err := p.cycles.await(ctx, h.cycle); err != nil {
		return err
	}
	if h.queued && h.cycle.emitErr != nil {
		return h.cycle.emitErr
	}
	// The commit stores what the batch left held and, for what it decided,
	// that the verdicts were accepted (and the count connector's IDs
	// beside): failed, the sender must send again.
	if err := h.cycle.commitErr; err != nil {
		return err
	}
	if h.full {
		return errPendingFull
	}
	return nil
}

// errPendingFull refuses the part of a batch that would hold a new trace
// while every trace held waits for its refused verdict to be accepted:
// there is no room to make, and the sender's retry finds some later.
var errPendingFull = errors.New("verdict processor: max_pending traces are held, each waiting for its refused verdict to be accepted; send again later")

// sendNow sends verdicts downstream at once (not through a cycle) and
// settles them. It returns those the next consumer accepted: all or none,
// unless each launch's go in a delivery of their own
// (launch_metadata_key, sendByLaunch), and the refusal, if any.
func (p *verdictProcessor) sendNow(ctx context.Context, ds []decision) ([]decision, error) {
	if p.cfg.LaunchMetadataKey != "" {
		return p.sendByLaunch(ctx, ds)
	}
	err := p.next.ConsumeTraces(ctx, p.mode.write(p, ds))
	p.settle(ctx, ds, err)
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// settle records the next consumer's answer for verdicts sent: accepted,
// each trace is remembered as decided and released (out of memory and of
// storage); refused, each stays held for a retry (an evicted one is
// dropped and counted), or is dropped once max_age has passed since its
// first refusal.
func (p *verdictProcessor) settle(ctx context.Context, ds []decision, err error) {
	now := p.now()
	var out tally
	p.mu.Lock()
	for i := range ds {
		if err == nil {
			p.acceptedLocked(&ds[i], now, &out)
		} else {
			p.refusedLocked(&ds[i], now, &out)
		}
	}
	p.mu.Unlock()
	p.tel.record(ctx, &out)
	if err != nil && p.refusedLog.Allow() {
		p.logger.Warn("verdict processor: the next consumer refused verdicts; they are held and sent again",
			zap.Int("verdicts", len(ds)), zap.Error(err))
	}
}

func (p *verdictProcessor) acceptedLocked(d *decision, now time.Time, out *tally) {
	e := d.entry
	if d.evicted || !e.Held() {
		p.endFlightLocked(e.ID)
	}
	e.Delivery.Sending = false
	p.decidedForHandoverLocked(e, now)
	p.releaseLocked(e, out)
	p.held.MarkDecided(e.ID)
	if other := p.held.Get(e.ID); other != nil && other != e && !other.Delivery.Sending {
		// A trace of the same ID held meanwhile (a restart's, a
		// duplicate's) is this one: it yields no second verdict.
		p.releaseLocked(other, out)
		out.inc(&out.dropped, dropDecided)
	}
	if p.state == nil {
		countAccepted(d, now, out)
	}
	// With storage the acceptance counts once its commit holds (the
	// cycle's run): a failed one is undone and the verdict sent again.
}

// countAccepted counts an accepted verdict in the processor's own
// telemetry: its cause, what forced it, and the time from its turn.
func countAccepted(d *decision, now time.Time, out *tally) {
	if d.v.Cause != "" { // a joined turn has none
		out.inc(&out.verdicts, d.v.Cause)
	}
	if d.v.Forced != "" {
		out.inc(&out.forced, d.v.Forced)
	}
	out.latencies = append(out.latencies, now.Sub(d.turnAt).Seconds())
}

func (p *verdictProcessor) refusedLocked(d *decision, now time.Time, out *tally) {
	e := d.entry
	out.refused++
	switch {
	case d.evicted || !e.Held():
		// Out of memory (evicted at max_pending), still stored, and
		// acknowledged to its sender long ago: held again, to be sent
		// again. Past max_pending, makeRoomLocked evicts none of the
		// refused, and a batch that needs room waits (errPendingFull).
		p.endFlightLocked(e.ID)
		e.Delivery.Sending = false
		if p.held.Get(e.ID) != nil {
			return // held again meanwhile (a resend's spans): that one is sent
		}
		p.held.Rehold(e, now)
		out.pendingDelta++
		p.retryLaterLocked(e, now)
	case e.Delivery.Refusals > 0 && now.Sub(e.Delivery.FirstRefusal) >= p.cfg.MaxAge:
		e.Delivery.Sending = false
		p.releaseLocked(e, out)
		out.inc(&out.dropped, dropExportFailed)
	default:
		e.Delivery.Sending = false
		p.retryLaterLocked(e, now)
	}
}

// retryLaterLocked counts a refusal of e's verdict and sets when it is
// sent again: the backoff doubles from the sweep interval.
func (p *verdictProcessor) retryLaterLocked(e *pending.Entry, now time.Time) {
	dl := &e.Delivery
	if dl.Refusals == 0 {
		dl.FirstRefusal = now
	}
	dl.Refusals++
	dl.RetryAt = now.Add(min(p.sweepInterval<<min(dl.Refusals-1, 16), maxRetryBackoff))
}

// unaccept undoes the acceptance of verdicts whose commit failed: what
// stored that they were accepted (their traces let go, their IDs decided,
// the count connector's IDs staged beside) is not on the disk, so each
// trace is held again, undecided, and its verdict sent again (the file
// and the counter know it already, and write and count it once).
func (p *verdictProcessor) unaccept(ctx context.Context, ds []decision) {
	now := p.now()
	var out tally
	p.mu.Lock()
	for i := range ds {
		e := ds[i].entry
		p.held.Undecide(e.ID)
		if p.held.Get(e.ID) == nil {
			p.held.Rehold(e, now)
			out.pendingDelta++
		}
		if !e.Delivery.Sending {
			p.retryLaterLocked(e, now)
		}
	}
	p.mu.Unlock()
	p.tel.record(ctx, &out)
}

// decideAllAtShutdown (without storage) decides every turn still held,
// forced, and sends the verdicts on; the traces held without their turn
// are counted as dropped.
func (p *verdictProcessor) decideAllAtShutdown(ctx context.Context) error {
	var out tally
	var ds []decision
	p.mu.Lock()
	for p.held.Len() > 0 {
		if d, ok := p.evictLocked(p.held.Oldest(), verdict.ForcedShutdown, dropShutdown, &out); ok {
			ds = append(ds, d)
		}
	}
	p.mu.Unlock()
	p.tel.record(ctx, &out)
	if len(ds) == 0 {
		return nil
	}
	_, err := p.sendNow(ctx, ds)
	return err
}
