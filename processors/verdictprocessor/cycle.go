package verdictprocessor

import (
	"context"
	"time"
)

// The cycle is how the processor hands work on without an asynchronous
// stage: the verdicts that requests decided (with emit: verdicts) and the
// storage changes they made wait for the next cycle, which sends all of the
// verdicts to the next consumer in one call, then stores every change in one
// transaction, then wakes the requests with the outcome. Each request
// returns only then, so a refusal or a failed write goes back to the sender,
// whose retry is welcome; and the work of many requests costs one
// downstream call and one commit (group commit).
// docs/decisions/0220-at-least-once-through-the-processor.md says why.

// cycleEvery is the shortest time between two cycles. A request that finds
// the processor idle is served at once; under load the requests of up to
// this long share a cycle.
const cycleEvery = 5 * time.Millisecond

// cycle is one round of sending and storing, and its outcome.
type cycle struct {
	done      chan struct{}
	emitErr   error // the next consumer's answer for the verdicts sent
	commitErr error // the storage's answer for the changes stored
}

func newCycle() *cycle { return &cycle{done: make(chan struct{})} }

// flusher runs the cycles.
type flusher struct {
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	stopped bool // set by Shutdown's goroutine after done
}

func (p *verdictProcessor) startFlusher() {
	p.fl = &flusher{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go p.flushLoop()
}

// poke asks for a cycle.
func (p *verdictProcessor) poke() {
	if p.fl == nil {
		return
	}
	select {
	case p.fl.kick <- struct{}{}:
	default:
	}
}

func (p *verdictProcessor) flushLoop() {
	defer close(p.fl.done)
	var last time.Time
	for {
		select {
		case <-p.fl.kick:
		case <-p.fl.stop:
			p.runCycle()
			return
		}
		if d := cycleEvery - time.Since(last); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-p.fl.stop:
				t.Stop()
			}
		}
		last = time.Now()
		p.runCycle()
	}
}

// runCycle sends the verdicts queued since the last cycle, settles them,
// stores what changed and wakes the requests that wait for it.
func (p *verdictProcessor) runCycle() {
	ctx := context.Background()
	p.mu.Lock()
	c := p.cur
	p.cur = newCycle()
	ds := p.queued
	p.queued = nil
	p.mu.Unlock()
	if len(ds) > 0 {
		c.emitErr = p.next.ConsumeTraces(ctx, p.verdictBatch(ds))
		p.settle(ctx, ds, c.emitErr)
	}
	if p.storage != nil {
		c.commitErr = p.commit(ctx)
	}
	close(c.done)
}

// stopFlusher runs a last cycle and stops. A poke after it (a failed
// commit's retry timer) lands in a channel nobody reads.
func (p *verdictProcessor) stopFlusher() {
	if p.fl == nil || p.fl.stopped {
		return
	}
	close(p.fl.stop)
	<-p.fl.done
	p.fl.stopped = true
}

// await asks for a cycle and waits for c to end.
func (p *verdictProcessor) await(ctx context.Context, c *cycle) error {
	p.poke()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
