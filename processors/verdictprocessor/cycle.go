package verdictprocessor

import (
	"context"
	"runtime"
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
//
// Who runs a cycle: a request that finds the processor idle (no cycle
// running, nobody else waiting) runs its own cycle, in its own goroutine:
// a household's phone and engine pay no hand-off and no wait. Before it
// starts, it yields once to the goroutines already runnable: requests read
// in the same burst join its cycle instead of waiting for the next, so
// fewer cycles carry more requests each; with nobody runnable the yield
// returns at once (docs/decisions/0312; the commits a request it saves
// are in docs/performance.md).
// Otherwise the cycler's goroutine runs the next cycle as soon as the
// running one ends: every request that came while it ran shares it, so
// many senders share one commit without anyone waiting for company
// (docs/decisions/0236-a-quiet-processor-serves-a-request-at-once.md: a
// wait to gather more saved no CPU at any sender count, and cost CPU and
// latency at 8 senders).
//
// The leader and the joiners of one cycle (await), with the processor
// idle. cur is the cycle gathering, running the one being run; both are
// guarded by the processor's lock.
//
//	request A                  request B                  the cycler
//	---------                  ---------                  ----------
//	hold: its verdicts and
//	changes go to cur
//	await(cur): waiters 1,
//	nothing running: A leads
//	Gosched ---------------->  hold: to the same cur
//	                           await(cur): waiters 2:
//	                           B joins, waits on done
//	still idle, cur unchanged:
//	takeLocked: cur becomes
//	running, a new cur gathers
//	run: send the verdicts,
//	settle them, commit        request C: hold, to the
//	                           new cur; await: a cycle
//	                           is running, so C pokes ---> runNext: waits for
//	close(done) -------------> B returns                  running's done,
//	A returns                                             takes the new cur,
//	                                                      runs it; C returns
//	                                                      at its done
//
// If the cycler took A's cycle while A yielded (a sweep's poke), A waits
// on its done like a joiner. Whoever runs a cycle, its requests return
// only after its done is closed, with its emitErr and commitErr: the
// order inside run (the verdicts downstream, then the commit that also
// carries what the count connector staged for them) is drawn in
// components/sharedstorage/README.md, "The commit path".

// cycle is one round of sending and storing, and its outcome.
type cycle struct {
	done      chan struct{}
	waiters   int   // requests waiting for it
	emitErr   error // the next consumer's answer for the verdicts sent
	commitErr error // the storage's answer for the changes stored
	// riding are verdicts accepted outside the cycle (emit: all, a sweep
	// without the cycle) whose acceptance its commit stores.
	riding []decision
}

func newCycle() *cycle { return &cycle{done: make(chan struct{})} }

// cycler runs the cycles of one processor. Its state is guarded by the
// processor's lock.
type cycler struct {
	p      *verdictProcessor
	cur    *cycle     // the next cycle, gathering
	queued []decision // its verdicts
	// spare is the verdicts' list of the last cycle run, emptied, for the
	// next one to gather in: a list made anew each cycle was a tenth of
	// what holding a batch allocated.
	spare []decision
	// running is the cycle being run, nil when none is.
	running *cycle

	started bool
	kick    chan struct{}
	quit    chan struct{}
	done    chan struct{}
}

func newCycler(p *verdictProcessor) *cycler { return &cycler{p: p, cur: newCycle()} }

// start runs the cycler's goroutine.
func (c *cycler) start() {
	c.kick, c.quit, c.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	c.started = true
	go c.loop()
}

// stop runs a last cycle and stops. A poke after it (a failed commit's
// retry timer) lands in a channel nobody reads.
func (c *cycler) stop() {
	if !c.started {
		return
	}
	close(c.quit)
	<-c.done
	c.started = false
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
	queued := !c.p.mode.sendsBatch() && len(ds) > 0
	if queued {
		c.queued = append(c.queued, ds...)
	}
	return c.cur, queued
}

// ride makes the next cycle's commit store the acceptance of ds
// (accepted outside a cycle), undone if it fails, and returns that cycle.
// It takes the processor's lock.
func (c *cycler) ride(ds []decision) *cycle {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.cur.riding = append(c.cur.riding, ds...)
	return c.cur
}

// await waits for cy to end: running it at once when the processor is
// idle, else leaving it to the cycler.
func (c *cycler) await(ctx context.Context, cy *cycle) error {
	p := c.p
	p.mu.Lock()
	cy.waiters++
	gathering := c.running == nil && cy == c.cur
	// The first to wait on a gathering cycle leads it; a later one leaves
	// it to whoever came first: that leader, or the cycler it poked.
	lead := c.started && gathering && cy.waiters == 1
	joined := gathering && cy.waiters > 1
	p.mu.Unlock()
	if lead {
		// Requests already runnable (their bodies read, being decoded)
		// join this cycle before it starts, instead of the next one.
		runtime.Gosched()
		p.mu.Lock()
		if c.running == nil && cy == c.cur {
			ds := c.takeLocked()
			p.mu.Unlock()
			c.run(cy, ds) // anyone who comes while it runs pokes the cycler, which waits for it to end
			return nil
		}
		// The cycler took it meanwhile (a sweep's poke): it is running or
		// has run; wait for its end like any other request.
		p.mu.Unlock()
	} else if !joined {
		c.poke()
	}
	select {
	case <-cy.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// takeLocked makes the gathering cycle the running one and returns its
// verdicts.
func (c *cycler) takeLocked() []decision {
	ds := c.queued
	c.running = c.cur
	c.cur, c.queued, c.spare = newCycle(), c.spare, nil
	return ds
}

// recycleLocked keeps the verdicts' list of a cycle that ended for a later
// one; one that grew past maxSpareDecisions (a sweep that decided many) is
// let go.
func (c *cycler) recycleLocked(ds []decision) {
	if cap(ds) == 0 || cap(ds) > maxSpareDecisions {
		return
	}
	clear(ds)
	c.spare = ds[:0]
}

// maxSpareDecisions bounds the list kept for the next cycle.
const maxSpareDecisions = 256

// loop runs the cycles the requests leave to it (and those nobody waits
// for: a sweep's, a failed commit's retry, what settled verdicts leave to
// store), one after another, until stopped; then one last.
func (c *cycler) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.kick:
			c.runNext()
		case <-c.quit:
			c.runNext()
			return
		}
	}
}

// runNext waits for a running cycle to end and runs the next cycle.
func (c *cycler) runNext() {
	p := c.p
	for {
		p.mu.Lock()
		running := c.running
		if running == nil {
			break
		}
		p.mu.Unlock()
		<-running.done
	}
	cy := c.cur
	ds := c.takeLocked()
	p.mu.Unlock()
	c.run(cy, ds)
}

// run sends the verdicts of one cycle, settles them, stores what changed
// and wakes the requests that wait for it.
func (c *cycler) run(cy *cycle, ds []decision) {
	ctx := context.Background()
	p := c.p
	var accepted []decision
	if len(ds) > 0 {
		accepted, cy.emitErr = p.sendNow(ctx, ds)
	}
	if p.state != nil {
		cy.commitErr = p.commit(ctx)
		if cy.commitErr != nil {
			p.unaccept(ctx, accepted)
			p.unaccept(ctx, cy.riding)
		} else {
			p.countCommitted(ctx, cy, accepted)
		}
	}
	p.mu.Lock()
	if c.running == cy {
		c.running = nil
	}
	c.recycleLocked(ds)
	p.mu.Unlock()
	close(cy.done)
}

// countCommitted counts the verdicts whose acceptance cy's commit stored:
// those of its own the next consumer accepted, and those riding it.
func (p *verdictProcessor) countCommitted(ctx context.Context, cy *cycle, ds []decision) {
	if len(ds) == 0 && len(cy.riding) == 0 {
		return
	}
	now := p.now()
	var out tally
	for _, group := range [][]decision{ds, cy.riding} {
		for i := range group {
			countAccepted(&group[i], now, &out)
		}
	}
	p.tel.record(ctx, &out)
}
