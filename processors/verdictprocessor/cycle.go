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

// cycler runs the cycles of one processor. Its current cycle and queue are
// guarded by the processor's lock.
type cycler struct {
	p      *verdictProcessor
	cur    *cycle
	queued []decision

	running bool
	kick    chan struct{}
	quit    chan struct{}
	done    chan struct{}
}

func newCycler(p *verdictProcessor) *cycler { return &cycler{p: p, cur: newCycle()} }

// start runs the cycles in a goroutine of their own.
func (c *cycler) start() {
	c.kick, c.quit, c.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	c.running = true
	go c.loop()
}

// stop runs a last cycle and stops. A poke after it (a failed commit's
// retry timer) lands in a channel nobody reads.
func (c *cycler) stop() {
	if !c.running {
		return
	}
	close(c.quit)
	<-c.done
	c.running = false
}

// poke asks for a cycle.
func (c *cycler) poke() {
	if c.kick == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// queueLocked hands ds to the next cycle with emit: verdicts (with emit:
// all the caller sends them itself) and returns that cycle, whose end the
// caller awaits.
func (c *cycler) queueLocked(ds []decision) (*cycle, bool) {
	queued := !c.p.emitAll && len(ds) > 0
	if queued {
		c.queued = append(c.queued, ds...)
	}
	return c.cur, queued
}

// await asks for a cycle and waits for cy to end.
func (c *cycler) await(ctx context.Context, cy *cycle) error {
	c.poke()
	select {
	case <-cy.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *cycler) loop() {
	defer close(c.done)
	var last time.Time
	for {
		select {
		case <-c.kick:
		case <-c.quit:
			c.run()
			return
		}
		if d := cycleEvery - time.Since(last); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-c.quit:
				t.Stop()
			}
		}
		last = time.Now()
		c.run()
	}
}

// run sends the verdicts queued since the last cycle, settles them, stores
// what changed and wakes the requests that wait for it.
func (c *cycler) run() {
	ctx := context.Background()
	p := c.p
	p.mu.Lock()
	cy := c.cur
	c.cur = newCycle()
	ds := c.queued
	c.queued = nil
	p.mu.Unlock()
	if len(ds) > 0 {
		cy.emitErr = p.sendNow(ctx, ds)
	}
	if p.state != nil {
		cy.commitErr = p.commit(ctx)
	}
	close(cy.done)
}
