package verdictprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/processors/verdictprocessor/internal/persist"
)

// Sweep interval bounds: the sweep decides turns whose wait is over, so it
// runs often enough relative to the wait.
const (
	minSweepInterval = 10 * time.Millisecond
	maxSweepInterval = time.Second
	// maxRetryBackoff bounds the wait before a refused verdict is sent again
	// (it doubles from the sweep interval).
	maxRetryBackoff = 5 * time.Second
)

// verdictProcessor is the traces processor. It is an orchestrator over
// narrow collaborators (docs/decisions/0227-the-processor-in-layers.md):
//
//   - the verdict model (package verdict) reads spans and decides turns;
//   - the pending store (internal/pending) holds each trace's readings and
//     the ring of decided IDs, and knows nothing of storage;
//   - persistence (internal/persist) keeps them in a storage extension;
//   - the cycle (cycle.go) hands verdicts downstream and commits storage
//     for many requests at once;
//   - this type receives batches, holds their readings, decides, delivers
//     and settles.
//
// Delivery is at least once from the receiver to the next consumer: a turn
// is remembered as decided only once the next consumer accepted its
// verdict. A refused verdict leaves its trace held, so the sender's retry of
// the refused request (or the sweep, later) yields it again; its span ID is
// derived from the trace, so a consumer that sees it twice sees one span.
type verdictProcessor struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tel    *telemetry
	next   consumer.Traces
	now    func() time.Time
	manual bool // tests sweep by hand with their own clock
	// simulated: the fault simulation runs every cycle itself
	// (Simulated); nothing is retried on a timer.
	simulated bool
	// mode is what the emit setting changes (emit.go).
	mode emitMode
	// epoch is when this processor began counting: the timestamp of the
	// counted events (verdict.Append).
	epoch pcommon.Timestamp

	mu      sync.Mutex
	held    *pending.Store
	state   *persist.State // nil without storage
	stopped bool           // storage closed: nothing commits after
	labels  *labelBudget
	// launches is what is kept of each launch's recent turns (nil with
	// launches.max 0).
	launches *launches.Book
	// handover keeps what the processor holds in a changelog a gateway taking
	// its partition over reads back (nil without changelog).
	handover *handover
	// inflight counts the traces whose verdict is on its way after they left
	// the store (evicted at max_pending): their spans count as decided, so
	// no second held trace, and no second verdict, is made of them.
	inflight map[pcommon.TraceID]int

	cycles *cycler

	sweepInterval time.Duration
	stopSweep     chan struct{}
	sweepDone     chan struct{}
	heartbeatDone chan struct{} // nil without heartbeats
	refusedLog    logLimiter
	storageErrLog logLimiter
}

var _ processor.Traces = (*verdictProcessor)(nil)

// option configures a verdictProcessor in tests.
type option func(*verdictProcessor)

// withClock replaces the clock and turns off the background sweep; the test
// calls sweep itself.
func withClock(now func() time.Time) option {
	return func(p *verdictProcessor) { p.now, p.manual = now, true }
}

func newVerdictProcessor(set processor.Settings, cfg *Config, next consumer.Traces, opts ...option) (*verdictProcessor, error) {
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	p := &verdictProcessor{
		cfg:           cfg,
		id:            set.ID,
		logger:        set.Logger,
		tel:           tel,
		next:          next,
		now:           time.Now,
		mode:          emitModeOf(cfg.Emit),
		labels:        newLabelBudget(cfg.Counters.Installations, cfg.Counters.Idle),
		inflight:      map[pcommon.TraceID]int{},
		sweepInterval: sweepIntervalFor(cfg),
		storageErrLog: logLimiter{every: 10 * time.Second},
		refusedLog:    logLimiter{every: 10 * time.Second},
	}
	p.held = pending.New(cfg.DecidedCacheSize, nil)
	if cfg.Launches.Max > 0 && p.mode.keepsLaunches() {
		// A turn reads up to rising_turns earlier turns; twice that many
		// are kept, so a turn that arrives late still finds its neighbours.
		p.launches = launches.New(cfg.Launches.Max, cfg.Launches.Idle, launches.KeptTurns)
	}
	p.cycles = newCycler(p)
	for _, o := range opts {
		o(p)
	}
	p.epoch = pcommon.NewTimestampFromTime(p.now())
	return p, nil
}

// sweepIntervalFor is a tenth of the wait, within bounds, and at most half
// the decision window.
func sweepIntervalFor(cfg *Config) time.Duration {
	d := min(max(cfg.Wait/10, minSweepInterval), maxSweepInterval)
	if d > cfg.DecisionWait/2 && cfg.DecisionWait/2 >= minSweepInterval {
		d = cfg.DecisionWait / 2
	}
	return d
}

// Capabilities: with emit: all the verdict spans are appended to the batch
// that completed their turn.
func (p *verdictProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: p.mode.sendsBatch()}
}

// Start restores the stored state, if storage is configured, and starts the
// cycles and the sweep.
func (p *verdictProcessor) Start(ctx context.Context, host component.Host) error {
	if p.cfg.Storage != nil {
		if err := p.openStorage(ctx, host); err != nil {
			return err
		}
	}
	if p.cfg.Changelog != nil {
		if err := p.openHandover(); err != nil {
			return err
		}
		p.letGoOfRestoredHeld(ctx)
	}
	if p.state != nil || !p.mode.sendsBatch() {
		p.cycles.start()
	}
	if p.manual {
		return nil
	}
	p.stopSweep, p.sweepDone = make(chan struct{}), make(chan struct{})
	go p.sweepLoop()
	if p.handover != nil && p.cfg.Changelog.Input != "" {
		p.heartbeatDone = make(chan struct{})
		go p.heartbeatLoop(p.cfg.Changelog.HeartbeatEvery())
	}
	return nil
}

func (p *verdictProcessor) sweepLoop() {
	defer close(p.sweepDone)
	t := time.NewTicker(p.sweepInterval)
	defer t.Stop()
	var checked time.Time
	for {
		select {
		case <-p.stopSweep:
			return
		case <-t.C:
			if p.handover != nil && time.Since(checked) >= ownershipCheck {
				checked = time.Now()
				p.letGoOfMovedHeld(context.Background())
			}
			p.sweep(context.Background())
		}
	}
}

// Shutdown stops the sweep and the cycles (the last one sends what is
// queued and stores what changed). With storage, what is held stays stored
// for the next start. Without it, every turn still held is decided now
// (forced, reason shutdown) and the traces held without their turn are
// counted as dropped.
func (p *verdictProcessor) Shutdown(ctx context.Context) error {
	if p.stopSweep != nil {
		close(p.stopSweep)
		<-p.sweepDone
		if p.heartbeatDone != nil {
			<-p.heartbeatDone
			p.heartbeatDone = nil
		}
		p.stopSweep = nil
	}
	defer p.tel.shutdown()
	p.cycles.stop()
	if p.state != nil {
		return p.closeStorage(ctx)
	}
	return p.decideAllAtShutdown(ctx)
}

// ConsumeTraces reads the turn's spans out of the batch, holds their
// readings, decides the turns the batch completed and sends on the batch
// with their verdicts (or, with emit: verdicts, the verdicts alone). It
// returns once the next consumer has accepted them and, with storage, once
// what the batch left held is stored; a refusal is returned to the sender,
// whose retry is welcome.
func (p *verdictProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	obs := getObservations()
	defer putObservations(obs)
	obs.read(td)
	// Any record of a partition, a heartbeat with no data included, may
	// be the first of a partition taken over.
	if p.handover != nil {
		if err := p.takeOverIfMoved(ctx, td); err != nil {
			return err
		}
		if td.ResourceSpans().Len() == 0 {
			return nil // a heartbeat: nothing to hold or pass on
		}
	}
	if err := p.mode.passOn(ctx, p, td); err != nil {
		return err
	}
	if len(obs.list) == 0 {
		return p.mode.forwardUnread(ctx, p, td)
	}
	h := p.hold(ctx, obs)
	return p.mode.deliver(ctx, p, td, h)
}
