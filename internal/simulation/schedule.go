package simulation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/components/sharedstorage"
	"github.com/percause/percause/internal/command/load"
)

// The processor's times in a schedule: the embedded default's.
const (
	waitFor      = 5 * time.Second
	decisionWait = time.Second
	maxAge       = 2 * time.Minute
)

// Params are a schedule's settings, every one derived from its seed.
type Params struct {
	Seed uint64
	// Steps is how many steps the schedule takes before its recovery.
	Steps int
	// FSync is the storage's and the verdict file's fsync.
	FSync bool
	// MaxPending is the processor's; small, so eviction happens.
	MaxPending int
	// CompactAfter is the log's; small, so compactions happen.
	CompactAfter int64
	// Turns is how many turns the phones make.
	Turns         int
	Installations int
	// FaultPerMille is the chance, in thousandths, that a file system
	// call fails.
	FaultPerMille uint64
	// Engine is shared_storage's: the log (the default's) unless a
	// schedule is run on another (WithEngine).
	Engine string
	// Lines are the phones (bit i: installation i) that send their turns
	// as lines, through the lines connector, instead of OTLP traces.
	Lines uint64
	// LinesMaxPending is the lines connector's max_pending (0: its
	// default); small, so held lines are let go before their partner.
	LinesMaxPending int
	// lateDeath, when positive, kills the process at that file system
	// call after the recovery stopped the faults, as a fatal error a
	// fault left in Pebble's background work does (a test's; 0: none).
	lateDeath int
}

// WithEngine is p on shared_storage's engine e.
func (p Params) WithEngine(e string) Params {
	p.Engine = e
	return p
}

func (p Params) String() string {
	lines := ""
	if p.Lines != 0 {
		var phones []string
		for i := range p.Installations {
			if p.linesFrom(i) {
				phones = append(phones, fmt.Sprint(i))
			}
		}
		lines = fmt.Sprintf(", lines from phone %s (the lines connector's max_pending %d)", strings.Join(phones, " and "), p.LinesMaxPending)
	}
	return fmt.Sprintf("seed %d: %d steps, %d turns from %d phones%s, fsync %v, max_pending %d, %s engine (compact_after %d), %d‰ of calls fail",
		p.Seed, p.Steps, p.Turns, p.Installations, lines, p.FSync, p.MaxPending, p.Engine, p.CompactAfter, p.FaultPerMille)
}

// linesFrom says whether phone i sends lines.
func (p Params) linesFrom(i int) bool { return p.Lines&(1<<i) != 0 }

// ParamsFor derives a schedule's settings from its seed.
func ParamsFor(seed uint64) Params {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	p := Params{
		Seed:          seed,
		Steps:         20 + rng.IntN(60),
		FSync:         rng.IntN(2) == 0,
		MaxPending:    2 + rng.IntN(6),
		CompactAfter:  int64(2048 + rng.IntN(16<<10)),
		Turns:         4 + rng.IntN(12),
		Installations: 1 + rng.IntN(3),
		FaultPerMille: []uint64{0, 5, 20, 60}[rng.IntN(4)],
		Engine:        sharedstorage.EngineLog,
	}
	// Which phones send lines comes from a source of its own, so the
	// settings above (and a schedule without lines) are what they were
	// before the lines connector was simulated: each phone on its own,
	// one in three.
	lr := rand.New(rand.NewPCG(seed, 0x11e5))
	for i := range p.Installations {
		if lr.IntN(3) == 0 {
			p.Lines |= 1 << i
		}
	}
	p.LinesMaxPending = 2 + lr.IntN(8)
	return p
}

// request is one of a turn's two requests, as its sender keeps it.
type request struct {
	turn   int
	engine bool
	lines  bool // its turn's phone sends lines: an OTLP logs request to the lines connector
	acked  bool
	tries  int
}

func (r *request) String() string {
	half := "phone"
	if r.engine {
		half = "engine"
	}
	if r.lines {
		half += " lines"
	}
	return fmt.Sprintf("turn %d's %s request", r.turn, half)
}

// schedule is one run: a collector, its senders and everything that
// happened, for a failure's report.
type schedule struct {
	p     Params
	rng   *rand.Rand
	w     *world
	c     *collector
	turns []*load.Turn
	// lines are the turns sent as lines (nil: as OTLP traces).
	lines  []*linesTurn
	reqs   []*request
	active int // turns whose requests may be sent so far
	events *journal
	// lossy: a power loss without fsync happened, which may lose what
	// was acknowledged and not yet on the disk (the unsynced tail).
	lossy bool
	// restarts and the like, for the totals.
	crashes, powerLosses, restarts, refusalsAsked int
}

// Failure is a schedule whose invariants did not hold.
type Failure struct {
	Params Params
	// Limit is the number of steps the schedule was cut to.
	Limit  int
	Err    error
	Events []string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("%v (cut to %d steps): %v\n  replay: go test ./internal/simulation -run 'TestSimulation$' -engine %s -seed %d -steps %d\n  what happened:\n    %s",
		f.Params, f.Limit, f.Err, f.Params.Engine, f.Params.Seed, f.Limit, strings.Join(f.Events, "\n    "))
}

// Run runs the schedule of p (ParamsFor a seed), cut to limit steps (0:
// all of them), then its recovery, and checks its invariants.
func Run(ctx context.Context, p Params, limit int) (Stats, *Failure) {
	return newSchedule(p).runWhole(ctx, limit)
}

// runWhole runs the schedule's first limit steps (0: all of them), its
// recovery and its checks, and stops what is left running.
func (s *schedule) runWhole(ctx context.Context, limit int) (Stats, *Failure) {
	p := s.p
	if limit <= 0 || limit > p.Steps {
		limit = p.Steps
	}
	err := s.run(ctx, limit)
	if c := s.c; c != nil && !s.w.fs.dead() {
		_ = s.within(func() error { return c.stop(ctx) })
	}
	st := Stats{Steps: limit, FSOps: s.w.fs.ops, Written: s.w.fs.written, Crashes: s.crashes, PowerLosses: s.powerLosses, Restarts: s.restarts}
	if err != nil {
		return st, &Failure{Params: p, Limit: limit, Err: err, Events: s.events.all()}
	}
	return st, nil
}

// epoch is when a schedule's clock starts.
var epoch = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// newSchedule makes the schedule of p, its turns built and nothing sent.
func newSchedule(p Params) *schedule {
	s := &schedule{p: p, rng: rand.New(rand.NewPCG(p.Seed, 0xfa17))}
	s.events = &journal{}
	s.w = &world{now: epoch, fsync: p.FSync, logs: newLogSink(s.events), cfg: p}
	s.w.fs = newFS(s.events)
	s.w.fs.faults = &faults{seed: p.Seed, rng: rand.New(rand.NewPCG(p.Seed, 0xd15c)), perMille: p.FaultPerMille}
	fleet := load.NewFleet(p.Installations, 3, p.Seed)
	// The turns end a millisecond apart on the simulation's own clock, not
	// the machine's: the same seed makes the same spans and lines.
	ended := epoch
	fleet.Clock = func() time.Time { ended = ended.Add(time.Millisecond); return ended }
	// Where each lines turn's trace IDs are comes from a source of its
	// own, so the schedule's steps are what they were without lines.
	lrng := rand.New(rand.NewPCG(p.Seed, 0x7ace))
	for i := range p.Turns {
		t := fleet.Next()
		s.turns = append(s.turns, t)
		var lt *linesTurn
		if p.linesFrom(t.Installation) {
			// A turn ends every 15 s on the phone's clock.
			lt = linesOf(t, epoch.Add(time.Duration(i)*15*time.Second), lrng)
		}
		s.lines = append(s.lines, lt)
		s.reqs = append(s.reqs, &request{turn: i, lines: lt != nil}, &request{turn: i, engine: true, lines: lt != nil})
	}
	return s
}

// traceOf is the trace turn i's verdict is made in: its own, or, sent as
// lines without a trace ID, the one the lines connector derives.
func (s *schedule) traceOf(i int) pcommon.TraceID {
	if lt := s.lines[i]; lt != nil {
		return lt.trace
	}
	return s.turns[i].TraceID
}

// Stats are what a schedule did.
type Stats struct {
	Steps, FSOps, Crashes, PowerLosses, Restarts int
	// Written is the bytes the file system's writes asked to write.
	Written int
}

func (s *schedule) event(format string, args ...any) {
	s.events.add(fmt.Sprintf(format, args...))
}

func (s *schedule) run(ctx context.Context, limit int) error {
	if err := s.startAgain(ctx); err != nil {
		return err
	}
	for step := range limit {
		if err := s.step(ctx, step); err != nil {
			return err
		}
		if err := s.afterStep(ctx); err != nil {
			return err
		}
	}
	return s.recover(ctx)
}

// step takes one step the seed chooses.
func (s *schedule) step(ctx context.Context, n int) error {
	fs := s.w.fs
	if s.active < len(s.turns) && (s.active < 2 || s.rng.IntN(3) == 0) {
		s.active++
	}
	switch k := s.rng.IntN(100); {
	case k < 45:
		if r := s.pick(false); r != nil {
			s.send(ctx, n, r)
		}
	case k < 52:
		if r := s.pick(true); r != nil {
			s.event("step %d: %s again (it was acknowledged)", n, r)
			s.send(ctx, n, r)
		}
	case k < 58:
		if r := s.pick(false); r != nil {
			s.sendTwiceAtOnce(ctx, n, r, s.rng.IntN(2) == 0)
		}
	case k < 70:
		d := time.Duration(200+s.rng.IntN(9800)) * time.Millisecond
		s.w.now = s.w.now.Add(d)
		s.event("step %d: %s pass; a sweep", n, d)
		s.sweep(ctx)
	case k < 77:
		m := 1 + s.rng.IntN(3)
		s.w.refuse.mu.Lock()
		s.w.refuse.next += m
		s.w.refuse.mu.Unlock()
		s.refusalsAsked += m
		s.event("step %d: the downstream refuses its next %d deliveries", n, m)
	case k < 82:
		from := fs.ops + s.rng.IntN(4)
		to := from + 1 + s.rng.IntN(12)
		fs.faults.full = append(fs.faults.full, [2]int{from, to})
		s.event("step %d: the disk is full from fs op %d to %d", n, from, to)
	case k < 88:
		fs.crashAt = fs.ops + s.rng.IntN(24)
		s.event("step %d: the process will be killed at fs op %d", n, fs.crashAt)
	case k < 92:
		fs.crashAt = fs.ops + s.rng.IntN(24)
		fs.powerLoss = true
		s.event("step %d: the power will go at fs op %d", n, fs.crashAt)
	default:
		s.event("step %d: a graceful restart", n)
		return s.restart(ctx)
	}
	return nil
}

// pick chooses a request of the turns begun so far: one not yet
// acknowledged, or (acked) one that was.
func (s *schedule) pick(acked bool) *request {
	var from []*request
	for _, r := range s.reqs[:2*s.active] {
		if r.acked == acked {
			from = append(from, r)
		}
	}
	if len(from) == 0 {
		return nil
	}
	return from[s.rng.IntN(len(from))]
}

// sweep runs the lines connector's sweep, then the processor's, as their
// background sweeps would at this time.
func (s *schedule) sweep(ctx context.Context) {
	lines, proc := s.c.lines, s.c.proc
	_ = s.within(func() error { lines.Sweep(ctx); proc.Sweep(ctx); return nil })
}

// body is a fresh copy of a request's spans.
func (s *schedule) body(r *request) ptrace.Traces {
	t := s.turns[r.turn]
	src := t.Phone
	if r.engine {
		src = t.Engine
	}
	td := ptrace.NewTraces()
	src.CopyTo(td)
	return td
}

// delivery is one delivery of a request to c, ready to be handed in: its
// spans to the processor, or its lines to the lines connector.
func (s *schedule) delivery(c *collector, r *request) func(context.Context) error {
	if lt := s.lines[r.turn]; lt != nil {
		src := lt.phone
		if r.engine {
			src = lt.engine
		}
		lines, ld := c.lines, copyLogs(src)
		return func(ctx context.Context) error { return lines.ConsumeLogs(ctx, ld) }
	}
	proc, td := c.proc, s.body(r)
	return func(ctx context.Context) error { return proc.ConsumeTraces(ctx, td) }
}

// send delivers a request and records its answer. One answered after the
// process died is no answer: its sender sends it again.
func (s *schedule) send(ctx context.Context, n int, r *request) {
	r.tries++
	deliver := s.delivery(s.c, r)
	s.answered(n, r, s.within(func() error { return deliver(ctx) }))
}

// errNoAnswer is a call's outcome when its process died before it was
// answered.
var errNoAnswer = errors.New("simulation: no answer, the process died")

// within makes a call into the collector and returns its outcome, or
// errNoAnswer when the process dies first. On the pebble engine a call of
// a dead process may never return (its file system parks it); on the log
// the call is made as it is, since the log answers every call, dead or
// not, and a call left running would make a schedule unrepeatable.
func (s *schedule) within(call func() error) error {
	if s.p.Engine != sharedstorage.EnginePebble {
		return call()
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	return s.wait(done)
}

// wait is the outcome of a call running in its own goroutine, or, on the
// pebble engine, errNoAnswer when the process dies first.
func (s *schedule) wait(done <-chan error) error {
	if s.p.Engine != sharedstorage.EnginePebble {
		return <-done // the log answers every call, dead or not
	}
	select {
	case err := <-done:
		return err
	case <-s.w.fs.dying():
		select {
		case err := <-done:
			return err
		default:
			return errNoAnswer
		}
	}
}

func (s *schedule) answered(n int, r *request, err error) {
	switch {
	case s.w.fs.dead():
		s.event("step %d: %s: no answer (the process died)", n, r)
	case err != nil:
		s.event("step %d: %s refused: %v", n, r, err)
	default:
		if !r.acked {
			s.event("step %d: %s acknowledged", n, r)
		}
		r.acked = true
	}
}

// sendTwiceAtOnce delivers the same request twice at once: the first
// delivery is held at the downstream while the second is handed in, then
// let through (or refused). The second is handed in once the first is
// held; the first goes on once the second waits for it (in the processor,
// for the cycle the first holds; in the lines connector, for the delivery
// carrying its lines) or has returned.
func (s *schedule) sendTwiceAtOnce(ctx context.Context, n int, r *request, refuseFirst bool) {
	s.event("step %d: %s twice at once (the first refused: %v)", n, r, refuseFirst)
	gate, arrived := make(chan struct{}), make(chan struct{})
	s.w.refuse.mu.Lock()
	s.w.refuse.gate, s.w.refuse.arrived = gate, arrived
	if refuseFirst {
		s.w.refuse.next++
	}
	s.w.refuse.mu.Unlock()
	r.tries += 2
	first := make(chan error, 1)
	proc, lines, deliver1, deliver2 := s.c.proc, s.c.lines, s.delivery(s.c, r), s.delivery(s.c, r)
	waiting := func() int {
		if r.lines {
			return proc.Waiting() + lines.Waiting()
		}
		return proc.Waiting()
	}
	go func() { first <- deliver1(ctx) }()
	// Only the pebble engine's calls may never return (see within): on
	// the log, a death answers them, and nothing is left running.
	var dying <-chan struct{}
	if s.p.Engine == sharedstorage.EnginePebble {
		dying = s.w.fs.dying()
	}
	select {
	case <-dying:
		// Died before the first reached the downstream: it is not
		// answered, and the gate is taken back unused.
		s.w.refuse.mu.Lock()
		if s.w.refuse.gate == gate {
			s.w.refuse.gate, s.w.refuse.arrived = nil, nil
		}
		s.w.refuse.mu.Unlock()
		close(gate)
		s.answered(n, r, s.wait(first))
	case <-arrived:
		second := make(chan error, 1)
		go func() { second <- deliver2(ctx) }()
		// The second delivery reads its spans (or lines) and waits for the
		// cycle (or the delivery) the first holds, or, with nothing to
		// wait for, is answered.
		for waiting() == 0 {
			select {
			case err := <-second:
				close(gate)
				s.answered(n, r, s.wait(first))
				s.answered(n, r, err)
				return
			case <-dying:
				close(gate)
				s.answered(n, r, s.wait(first))
				s.answered(n, r, s.wait(second))
				return
			case <-time.After(20 * time.Microsecond):
			}
		}
		close(gate)
		s.answered(n, r, s.wait(first))
		s.answered(n, r, s.wait(second))
	case err := <-first:
		// Nothing of it went downstream: take the gate back, unused.
		_, g, _ := s.w.refuse.take()
		if g == nil && refuseFirst {
			s.w.refuse.mu.Lock()
			s.w.refuse.next = max(0, s.w.refuse.next-1)
			s.w.refuse.mu.Unlock()
		}
		s.answered(n, r, err)
		s.send(ctx, n, r)
	}
}

// afterStep commits what is staged (as the extension's timer would
// within stage_flush) and restarts a process that died.
func (s *schedule) afterStep(ctx context.Context) error {
	if !s.w.fs.dead() {
		store := s.c.store
		_ = s.within(func() error { _, err := store.Get(ctx, "flush"); return err })
	}
	if !s.w.fs.dead() {
		return nil
	}
	return s.restartAfterDeath(ctx)
}

func (s *schedule) restartAfterDeath(ctx context.Context) error {
	// A process that died does nothing more. The log's calls of a dead
	// process all fail, so its stop only ends its goroutines; Pebble's
	// after a fatal error are not meant to run (the process exits), and a
	// stop of such a database races its own background work: on the
	// pebble engine a dead process is left as it is, its calls parked.
	if c := s.c; c != nil {
		c.lines = nil // dies with the process: what it held is in shared_storage
	}
	if c := s.c; s.p.Engine != sharedstorage.EnginePebble {
		_ = c.stop(ctx)
	}
	s.c = nil
	fs := s.w.fs
	if fs.powerLoss {
		s.powerLosses++
		if !s.p.FSync {
			s.lossy = true
		}
		fs.restartAfterPowerLoss(s.rng)
	} else {
		s.crashes++
		fs.restartAfterCrash()
	}
	return s.startAgain(ctx)
}

func (s *schedule) restart(ctx context.Context) error {
	s.restarts++
	c := s.c
	// The lines connector first: it emits what it holds to the processor.
	// Refused, what it held stays in shared_storage for the next start.
	if lines := c.lines; lines != nil {
		c.lines = nil
		if err := s.within(func() error { return lines.Shutdown(ctx) }); err != nil || s.w.fs.dead() {
			s.event("the lines connector's shutdown: %v", err)
		}
	}
	if err := s.within(func() error { return c.stop(ctx) }); err != nil && !s.w.fs.dead() {
		s.event("the graceful stop: %v", err)
	}
	s.c = nil
	if s.w.fs.dead() {
		return s.restartAfterDeath(ctx)
	}
	return s.startAgain(ctx)
}

// startAgain starts a new process on the files as they are: it must
// start, whatever a crash or a power loss left.
func (s *schedule) startAgain(ctx context.Context) error {
	// A disk that fails while the collector starts is not what this
	// checks: the start reads what the faults and the death left, on a
	// disk that works (a death may still come in the middle of it).
	f := s.w.fs.faults
	off := f.off
	f.off = true
	defer func() { f.off = off }()
	for {
		var c *collector
		err := s.within(func() (err error) { c, err = s.w.start(ctx); return err })
		if err == nil {
			s.c = c
			return nil
		}
		if s.w.fs.dead() {
			s.event("the start died: %v", err)
			s.w.fs.restartAfterCrash()
			continue
		}
		return fmt.Errorf("the collector did not start again: %w\n  files: %s", err, s.w.fs.names())
	}
}
