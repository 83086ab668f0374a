package verdictprocessor

import (
	"context"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

// Reasons readings are dropped without a verdict (the reason attribute of
// otelcol_processor_verdict_dropped).
const (
	dropNoTurn        = "no_turn"        // a trace aged out without its voice.turn
	dropPendingLimit  = "pending_limit"  // evicted without its voice.turn
	dropShutdown      = "shutdown"       // held without its voice.turn at shutdown
	dropDecided       = "decided"        // a span of a trace already decided (a late or duplicate delivery)
	dropDuplicateSpan = "duplicate_span" // the same span twice in a pending trace
	dropDuplicateTake = "duplicate_take" // a second tts.take span with the same take id
	dropTakeWithoutID = "take_without_id"
	dropUnitLimit     = "unit_limit"    // more units than a turn can hold
	dropExportFailed  = "export_failed" // a verdict refused downstream past its bounds
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

// verdictProcessor is the traces processor. Spans pass through at once (or,
// with emit: verdicts, only the verdicts go on); the readings the rules need
// are kept per trace until the turn can be decided.
//
// Delivery is at least once from the receiver to the next consumer: a turn
// is remembered as decided only once the next consumer accepted its
// verdict. A refused verdict leaves its trace held, so the sender's retry of
// the refused request (or the sweep, later) yields it again; its span ID is
// derived from the trace, so a consumer that sees it twice sees one span.
type verdictProcessor struct {
	cfg     *Config
	id      component.ID
	logger  *zap.Logger
	tel     *metadata.TelemetryBuilder
	next    consumer.Traces
	now     func() time.Time
	manual  bool // tests sweep by hand with their own clock
	emitAll bool
	// epoch is when this processor began counting: the timestamp of the
	// counted events (see appendVerdict).
	epoch time.Time

	mu      sync.Mutex
	store   *store
	decided *decidedSet
	labels  *labelBudget
	// inflight counts the traces whose verdict is on its way after they left
	// the store (evicted at max_pending): their spans count as decided, so
	// no second pending trace, and no second verdict, is made of them.
	inflight map[pcommon.TraceID]int
	// With storage: its client and the traces whose stored form must
	// change (persist.go).
	storage       storage.Client
	storageClosed bool
	dirty         map[pcommon.TraceID]struct{}
	deletes       []uint64 // storage keys of traces removed since the last commit
	nextKey       uint64   // the next trace's storage key
	// The next cycle and the verdicts waiting for it (cycle.go).
	fl     *flusher
	cur    *cycle
	queued []decision

	stop chan struct{}
	done chan struct{}

	sweepInterval time.Duration
	storageErrLog logLimiter
	refusedLog    logLimiter

	// Precomputed attribute sets, so recording telemetry does not allocate.
	causeAttrs  map[string]metric.MeasurementOption
	reasonAttrs map[string]metric.MeasurementOption
	opAttrs     map[string]metric.MeasurementOption
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
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
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
		emitAll:       cfg.Emit != EmitVerdicts,
		store:         newStore(),
		decided:       newDecidedSet(cfg.DecidedCacheSize),
		labels:        newLabelBudget(cfg.Counters.Installations, cfg.Counters.Idle),
		inflight:      map[pcommon.TraceID]int{},
		dirty:         map[pcommon.TraceID]struct{}{},
		cur:           newCycle(),
		nextKey:       1,
		sweepInterval: min(max(cfg.Wait/10, minSweepInterval), maxSweepInterval),
		storageErrLog: logLimiter{every: 10 * time.Second},
		refusedLog:    logLimiter{every: 10 * time.Second},
		causeAttrs:    map[string]metric.MeasurementOption{},
		reasonAttrs:   map[string]metric.MeasurementOption{},
		opAttrs:       map[string]metric.MeasurementOption{},
	}
	if p.sweepInterval > cfg.DecisionWait/2 && cfg.DecisionWait/2 >= minSweepInterval {
		p.sweepInterval = cfg.DecisionWait / 2
	}
	for _, c := range semconv.Causes {
		p.causeAttrs[c] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeCause, c)))
	}
	for _, r := range []string{
		forcedWait, forcedMaxAge, forcedPendingLimit, forcedShutdown,
		dropNoTurn, dropPendingLimit, dropShutdown, dropDecided, dropDuplicateSpan,
		dropDuplicateTake, dropTakeWithoutID, dropUnitLimit, dropExportFailed,
	} {
		p.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeReason, r)))
	}
	for _, o := range []string{opRestore, opCommit, opClose} {
		p.opAttrs[o] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeOperation, o)))
	}
	for _, o := range opts {
		o(p)
	}
	p.epoch = p.now()
	return p, nil
}

// Capabilities: with emit: all the verdict spans are appended to the batch
// that completed their turn.
func (p *verdictProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: p.emitAll}
}

// Start restores the stored state, if storage is configured, and starts the
// sweep.
func (p *verdictProcessor) Start(ctx context.Context, host component.Host) error {
	if p.cfg.Storage != nil {
		if err := p.openStorage(ctx, host); err != nil {
			return err
		}
	}
	if p.storage != nil || !p.emitAll {
		p.startFlusher()
	}
	if p.manual {
		return nil
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(p.sweepInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.sweep(context.Background())
			}
		}
	}()
	return nil
}

// Shutdown stops the sweep. With storage, what is held stays stored for the
// next start. Without it, every turn still held is decided now (forced,
// reason shutdown) and the traces held without their turn are counted as
// dropped.
func (p *verdictProcessor) Shutdown(ctx context.Context) error {
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
	}
	defer p.tel.Shutdown()
	p.stopFlusher() // its last cycle sends what is queued and stores what changed
	if p.storage != nil {
		return p.closeStorage(ctx)
	}
	var out tally
	var ds []decision
	p.mu.Lock()
	for p.store.len() > 0 {
		if d, ok := p.evictLocked(p.store.oldest(), forcedShutdown, dropShutdown, &out); ok {
			ds = append(ds, d)
		}
	}
	p.mu.Unlock()
	p.record(ctx, &out)
	if len(ds) == 0 {
		return nil
	}
	err := p.next.ConsumeTraces(ctx, p.verdictBatch(ds))
	p.settle(ctx, ds, err)
	return err
}

// observation is one span's readings, gathered before the lock is taken.
type observation struct {
	traceID pcommon.TraceID
	kind    obsKind
	turn    *turnReading
	unit    unitReading
	take    takeReading
}

type obsKind uint8

const (
	obsTurn obsKind = iota + 1
	obsUnit
	obsTake
	obsTakeWithoutID
)

// obsPool recycles the per-batch observation slices.
var obsPool = sync.Pool{New: func() any { s := make([]observation, 0, 128); return &s }}

// decision is a verdict on its way downstream, with what is needed to write
// its span and to settle its trace once the next consumer answers.
type decision struct {
	pt       *pendingTrace
	traceID  pcommon.TraceID
	turnSpan pcommon.SpanID
	resource pcommon.Resource
	turnAt   time.Time
	// installation is the app.installation.id of the counted events ("":
	// none, with counters.installations 0).
	installation string
	v            verdict
	// evicted: already removed from the store (the pending limit, shutdown);
	// a refusal drops it, counted, since there is no room to hold it again.
	evicted bool
}

// tally collects telemetry under the lock; it is recorded after.
type tally struct {
	pendingDelta int64
	refused      int64
	verdicts     map[string]int64
	forced       map[string]int64
	dropped      map[string]int64
	latencies    []float64
}

func (t *tally) inc(m *map[string]int64, key string) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[key]++
}

// ConsumeTraces reads the turn's spans out of the batch, decides the turns
// the batch completed and sends on the batch with their verdicts (or, with
// emit: verdicts, the verdicts alone). It returns once the next consumer has
// accepted them and, with storage, once what the batch left pending is
// stored; a refusal is returned to the sender, whose retry is welcome.
func (p *verdictProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	buf := obsPool.Get().(*[]observation)
	defer func() {
		clear(*buf)
		*buf = (*buf)[:0]
		obsPool.Put(buf)
	}()
	obs := p.observe(td, (*buf)[:0])
	*buf = obs
	if !p.emitAll && len(p.cfg.PassSpans) > 0 {
		// The spans passed on beside the verdicts go at once, on their own:
		// they are rare (a status change), and a refusal is the sender's to
		// retry like any other.
		if passed, ok := p.passed(td); ok {
			if err := p.next.ConsumeTraces(ctx, passed); err != nil {
				return err
			}
		}
	}
	if len(obs) == 0 {
		if p.emitAll {
			return p.next.ConsumeTraces(ctx, td)
		}
		return nil
	}
	now := p.now()
	var out tally
	var ds []decision
	touched := make([]*pendingTrace, 0, 4)

	p.mu.Lock()
	for i := range obs {
		o := &obs[i]
		if p.decided.has(o.traceID) || p.inflight[o.traceID] > 0 {
			out.inc(&out.dropped, dropDecided)
			continue
		}
		pt := p.store.get(o.traceID)
		if pt == nil {
			for p.store.len() >= p.cfg.MaxPending {
				if d, ok := p.evictLocked(p.oldestEvictableLocked(), forcedPendingLimit, dropPendingLimit, &out); ok {
					ds = append(ds, d)
				}
			}
			pt = p.store.add(o.traceID, now)
			out.pendingDelta++
		}
		if p.mergeLocked(pt, o, now, &out) {
			p.markLocked(pt.traceID)
		}
		if len(touched) == 0 || touched[len(touched)-1] != pt {
			touched = append(touched, pt)
		}
	}
	mine := len(ds)
	for _, pt := range touched {
		if pt.elem != nil && !pt.emitting && pt.complete(&p.cfg.Rules) {
			ds = append(ds, p.decideLocked(pt, ""))
		}
	}
	// What this batch leaves held must be stored before it is acknowledged;
	// the traces it decides need not be (a refusal is returned, an
	// acceptance removes them).
	durable := false
	if p.storage != nil {
		for _, pt := range touched {
			if pt.elem != nil && !p.decidingHere(pt, ds[mine:]) {
				durable = true
				break
			}
		}
	}
	c, queued := p.queueLocked(ds)
	p.mu.Unlock()
	p.record(ctx, &out)

	if p.emitAll {
		if durable {
			p.poke() // the cycle stores while the next consumer works
		}
		for i := range ds {
			appendVerdict(td, &ds[i], now, p.epoch)
		}
		err := p.next.ConsumeTraces(ctx, td)
		if len(ds) > 0 {
			p.settle(ctx, ds, err)
		}
		if err != nil || !durable {
			return err
		}
		if err := p.await(ctx, c); err != nil {
			return err
		}
		return c.commitErr
	}
	if !queued && !durable {
		return nil
	}
	if err := p.await(ctx, c); err != nil {
		return err
	}
	if queued && c.emitErr != nil {
		return c.emitErr
	}
	if durable {
		return c.commitErr
	}
	return nil
}

// queueLocked hands ds to the next cycle with emit: verdicts (with emit:
// all the caller sends them itself) and returns that cycle, whose end the
// caller awaits.
func (p *verdictProcessor) queueLocked(ds []decision) (*cycle, bool) {
	queued := !p.emitAll && len(ds) > 0
	if queued {
		p.queued = append(p.queued, ds...)
	}
	return p.cur, queued
}

// passed copies the spans named in pass_spans out of td, with their
// resources and scopes; ok is false when there are none.
func (p *verdictProcessor) passed(td ptrace.Traces) (ptrace.Traces, bool) {
	var out ptrace.Traces
	found := false
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			var oss ptrace.ScopeSpans
			taken := false
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				if !slices.Contains(p.cfg.PassSpans, s.Name()) {
					continue
				}
				if !found {
					out, found = ptrace.NewTraces(), true
				}
				if !taken {
					ors := out.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(ors.Resource())
					ors.SetSchemaUrl(rs.SchemaUrl())
					oss = ors.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					oss.SetSchemaUrl(ss.SchemaUrl())
					taken = true
				}
				s.CopyTo(oss.Spans().AppendEmpty())
			}
		}
	}
	return out, found
}

// decidingHere reports whether pt's verdict is among ds.
func (p *verdictProcessor) decidingHere(pt *pendingTrace, ds []decision) bool {
	for i := range ds {
		if ds[i].pt == pt {
			return true
		}
	}
	return false
}

// verdictBatch writes the verdict spans of ds into a batch of their own.
func (p *verdictProcessor) verdictBatch(ds []decision) ptrace.Traces {
	td := ptrace.NewTraces()
	now := p.now()
	for i := range ds {
		appendVerdict(td, &ds[i], now, p.epoch)
	}
	return td
}

// observe extracts the readings of the spans the rules read. Other spans
// (HTTP calls, …) cost one name comparison.
func (p *verdictProcessor) observe(td ptrace.Traces, obs []observation) []observation {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				switch span.Name() {
				case semconv.SpanVoiceTurn:
					obs = append(obs, observation{traceID: span.TraceID(), kind: obsTurn, turn: readTurn(rs.Resource(), span)})
				case semconv.SpanVoiceUnit:
					obs = append(obs, observation{traceID: span.TraceID(), kind: obsUnit, unit: readUnit(span)})
				case semconv.SpanTTSTake:
					t, ok := readTake(span)
					kind := obsTake
					if !ok {
						// Counted under the lock with the rest.
						kind = obsTakeWithoutID
					}
					obs = append(obs, observation{traceID: span.TraceID(), kind: kind, take: t})
				}
			}
		}
	}
	return obs
}

// mergeLocked adds one span's readings to its trace and reports whether the
// trace changed.
func (p *verdictProcessor) mergeLocked(pt *pendingTrace, o *observation, now time.Time, out *tally) bool {
	switch o.kind {
	case obsTurn:
		switch {
		case pt.turn == nil:
			if pt.hasSpan(o.turn.spanID) {
				out.inc(&out.dropped, dropDuplicateSpan)
				return false
			}
			pt.turn, pt.turnAt = o.turn, now
		case pt.turn.spanID == o.turn.spanID:
			out.inc(&out.dropped, dropDuplicateSpan)
			return false
		default:
			pt.extraTurns++
		}
	case obsUnit:
		if pt.hasSpan(o.unit.spanID) {
			out.inc(&out.dropped, dropDuplicateSpan)
			return false
		}
		if len(pt.unitSpans) >= maxUnits {
			out.inc(&out.dropped, dropUnitLimit)
			return false
		}
		pt.unitSpans = append(pt.unitSpans, o.unit.spanID)
		if keepUnit(&o.unit, &p.cfg.Rules) {
			pt.units = append(pt.units, o.unit)
		}
	case obsTake:
		if pt.hasSpan(o.take.spanID) {
			out.inc(&out.dropped, dropDuplicateSpan)
			return false
		}
		if _, ok := pt.take(o.take.id); ok {
			out.inc(&out.dropped, dropDuplicateTake)
			return false
		}
		if len(pt.takes) >= maxUnits {
			out.inc(&out.dropped, dropUnitLimit)
			return false
		}
		pt.takes = append(pt.takes, o.take)
	default:
		out.inc(&out.dropped, dropTakeWithoutID)
		return false
	}
	pt.lastAt = now
	return true
}

// decideLocked decides a held trace and marks it as on its way; settle
// removes it once the next consumer accepted the verdict.
func (p *verdictProcessor) decideLocked(pt *pendingTrace, forced string) decision {
	pt.emitting, pt.forcedAs = true, forced
	return decision{pt: pt, traceID: pt.traceID, turnSpan: pt.turn.spanID, resource: pt.turn.resource, turnAt: pt.turnAt,
		installation: p.labels.label(installationOf(pt.turn.resource), p.now()), v: decide(pt, p.cfg, forced)}
}

// oldestEvictableLocked is the oldest held trace whose verdict is not on
// its way (one being sent is settled by its sender); the oldest of all when
// every one is.
func (p *verdictProcessor) oldestEvictableLocked() *pendingTrace {
	for e := p.store.order.Front(); e != nil; e = e.Next() {
		if pt := e.Value.(*pendingTrace); !pt.emitting {
			return pt
		}
	}
	return p.store.oldest()
}

// evictLocked removes a held trace now, deciding it if its turn has
// arrived, or dropping it.
func (p *verdictProcessor) evictLocked(pt *pendingTrace, forced, drop string, out *tally) (decision, bool) {
	if pt.emitting {
		// Its sender settles it; here it only leaves the store.
		p.removeLocked(pt, out)
		p.inflight[pt.traceID]++
		return decision{}, false
	}
	if pt.turn == nil {
		p.removeLocked(pt, out)
		out.inc(&out.dropped, drop)
		return decision{}, false
	}
	d := p.decideLocked(pt, forced)
	d.evicted = true
	p.removeLocked(pt, out)
	p.inflight[pt.traceID]++
	return d, true
}

// landedLocked ends a verdict's flight outside the store.
func (p *verdictProcessor) landedLocked(id pcommon.TraceID) {
	if p.inflight[id] <= 1 {
		delete(p.inflight, id)
		return
	}
	p.inflight[id]--
}

// removeLocked takes a trace out of the store (and, in time, out of
// storage).
func (p *verdictProcessor) removeLocked(pt *pendingTrace, out *tally) {
	if pt.elem == nil {
		return
	}
	p.store.remove(pt)
	pt.elem = nil
	out.pendingDelta--
	if pt.storeKey != 0 {
		p.deletes = append(p.deletes, pt.storeKey)
		pt.storeKey = 0
	}
}

// settle records the next consumer's answer for verdicts sent: accepted,
// each trace is remembered as decided and leaves the store; refused, each
// stays held for a retry (an evicted one is dropped and counted), or is
// dropped once max_age has passed.
func (p *verdictProcessor) settle(ctx context.Context, ds []decision, err error) {
	now := p.now()
	var out tally
	p.mu.Lock()
	for i := range ds {
		d := &ds[i]
		pt := d.pt
		away := d.evicted || pt.elem == nil // left the store while on its way
		if away {
			p.landedLocked(d.traceID)
		}
		if err == nil {
			if !away {
				pt.emitting = false
				p.removeLocked(pt, &out)
			}
			p.decided.add(d.traceID)
			if other := p.store.get(d.traceID); other != nil && other != pt && !other.emitting {
				// A trace of the same ID held meanwhile (a restart's, a
				// duplicate's) is this one: it yields no second verdict.
				p.removeLocked(other, &out)
				out.inc(&out.dropped, dropDecided)
			}
			out.inc(&out.verdicts, d.v.cause)
			if d.v.forced != "" {
				out.inc(&out.forced, d.v.forced)
			}
			out.latencies = append(out.latencies, now.Sub(d.turnAt).Seconds())
			continue
		}
		out.refused++
		switch {
		case away:
			// Nowhere to keep it: counted, the rest bounded by max_pending.
			out.inc(&out.dropped, dropExportFailed)
		case pt.refusals > 0 && now.Sub(pt.firstRefusal) >= p.cfg.MaxAge:
			pt.emitting = false
			p.removeLocked(pt, &out)
			out.inc(&out.dropped, dropExportFailed)
		default:
			pt.emitting = false
			if pt.refusals == 0 {
				pt.firstRefusal = now
			}
			pt.refusals++
			pt.retryAt = now.Add(min(p.sweepInterval<<min(pt.refusals-1, 16), maxRetryBackoff))
		}
	}
	p.mu.Unlock()
	p.record(ctx, &out)
	if err != nil && p.refusedLog.Allow() {
		p.logger.Warn("verdict processor: the next consumer refused verdicts; they are held and sent again",
			zap.Int("verdicts", len(ds)), zap.Error(err))
	}
	if p.storage != nil {
		p.poke() // decided: the stored traces go, the ring grows
	}
}

// sweep decides the turns whose wait (or decision window) is over, sends
// again the verdicts refused earlier, and drops what aged out.
func (p *verdictProcessor) sweep(ctx context.Context) {
	now := p.now()
	var out tally
	var ds []decision
	p.mu.Lock()
	// More held than max_pending (restored under a smaller limit): the
	// oldest are decided now, and stay held until their verdict is accepted.
	surplus := p.store.len() - p.cfg.MaxPending
	for e := p.store.order.Front(); e != nil; {
		next := e.Next()
		pt := e.Value.(*pendingTrace)
		e = next
		if pt.emitting || now.Before(pt.retryAt) {
			continue
		}
		if surplus > 0 && pt.turn != nil && pt.refusals == 0 {
			surplus--
			ds = append(ds, p.decideLocked(pt, forcedPendingLimit))
			continue
		}
		aged := now.Sub(pt.created) >= p.cfg.MaxAge
		switch {
		case pt.turn == nil:
			if aged {
				p.removeLocked(pt, &out)
				out.inc(&out.dropped, dropNoTurn)
			}
		case pt.refusals > 0:
			ds = append(ds, p.decideLocked(pt, pt.forcedAs))
		case pt.complete(&p.cfg.Rules) || pt.settled(now, p.cfg.DecisionWait, &p.cfg.Rules):
			ds = append(ds, p.decideLocked(pt, ""))
		case now.Sub(pt.turnAt) >= p.cfg.Wait:
			ds = append(ds, p.decideLocked(pt, forcedWait))
		case aged:
			ds = append(ds, p.decideLocked(pt, forcedMaxAge))
		}
	}
	c, queued := p.queueLocked(ds)
	p.mu.Unlock()
	p.record(ctx, &out)
	switch {
	case queued:
		_ = p.await(ctx, c)
	case len(ds) > 0:
		err := p.next.ConsumeTraces(ctx, p.verdictBatch(ds))
		p.settle(ctx, ds, err)
	case p.storage != nil && out.pendingDelta != 0:
		p.poke()
	}
}

func (p *verdictProcessor) record(ctx context.Context, t *tally) {
	if t.pendingDelta != 0 {
		p.tel.ProcessorVerdictPendingTurns.Add(ctx, t.pendingDelta)
	}
	if t.refused != 0 {
		p.tel.ProcessorVerdictRefused.Add(ctx, t.refused)
	}
	for c, n := range t.verdicts {
		p.tel.ProcessorVerdictVerdicts.Add(ctx, n, p.causeAttrs[c])
	}
	for r, n := range t.forced {
		p.tel.ProcessorVerdictForced.Add(ctx, n, p.reasonAttrs[r])
	}
	for r, n := range t.dropped {
		p.tel.ProcessorVerdictDropped.Add(ctx, n, p.reasonAttrs[r])
	}
	for _, l := range t.latencies {
		p.tel.ProcessorVerdictDecisionLatency.Record(ctx, l)
	}
}

// verdictSpanID derives the verdict span's ID from the trace and its turn,
// so the same turn always yields the same verdict span (idempotent for a
// backend that sees a verdict twice, e.g. from two gateways after a re-route).
func verdictSpanID(traceID pcommon.TraceID, turn pcommon.SpanID) pcommon.SpanID {
	h := fnv.New64a()
	_, _ = h.Write(traceID[:])
	_, _ = h.Write(turn[:])
	_, _ = h.Write([]byte(semconv.SpanVerdict))
	var id pcommon.SpanID
	sum := h.Sum64()
	if sum == 0 {
		sum = 1
	}
	for i := range id {
		id[i] = byte(sum >> (8 * (7 - i)))
	}
	return id
}

// appendVerdict writes one percause.verdict span, child of voice.turn, under
// the phone's resource. Its events are what the verdict count connector
// (components/verdictcountconnector) counts: one
// percause.verdict event with the primary cause (percause_turns_total) and
// one percause.implicated event per implicated cause
// (percause_cause_implicated_total; the connector does not split arrays).
//
// The span's times are the decision's. The events are stamped with the
// processor's epoch instead: the connector emits delta counts spanning the
// times of what it counted, and the Prometheus exporter adds a delta to a
// series only when it starts where the previous one ended, replacing the
// series otherwise. Events all stamped with one epoch line up, so the
// counters add up from the collector's start, as a cumulative counter does.
func appendVerdict(td ptrace.Traces, d *decision, now, epoch time.Time) {
	rs := td.ResourceSpans().AppendEmpty()
	d.resource.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	ss.Scope().SetVersion(semconv.RulesVersion)
	span := ss.Spans().AppendEmpty()
	span.SetTraceID(d.traceID)
	span.SetSpanID(verdictSpanID(d.traceID, d.turnSpan))
	span.SetParentSpanID(d.turnSpan)
	span.SetName(semconv.SpanVerdict)
	span.SetKind(ptrace.SpanKindInternal)
	// The decision time, not the turn's: the count connector stamps its
	// counts from span times, and a turn flushed a day late must still count
	// now.
	ts := pcommon.NewTimestampFromTime(now)
	span.SetStartTimestamp(ts)
	span.SetEndTimestamp(ts)

	v := d.v
	a := span.Attributes()
	a.EnsureCapacity(18)
	a.PutStr(semconv.VerdictCause, v.cause)
	causes := a.PutEmptySlice(semconv.VerdictCauses)
	causes.EnsureCapacity(len(v.causes))
	for _, c := range v.causes {
		causes.AppendEmpty().SetStr(c)
	}
	a.PutStr(semconv.VerdictEvidence, v.evidence)
	a.PutStr(semconv.VerdictRulesVersion, semconv.RulesVersion)
	a.PutStr(semconv.VerdictForced, v.forced)
	a.PutStr(semconv.NetworkConnectionType, v.link)
	a.PutInt(semconv.TurnIndex, v.index)
	a.PutInt(semconv.VerdictUnderruns, v.underruns)
	a.PutDouble(semconv.VerdictSilent, v.silent)
	// What a reader of verdicts alone needs of the turn: when it was, its
	// route, and the done reading's readings.
	if t := d.pt.turn; t != nil {
		a.PutInt(semconv.VerdictTurnTime, int64(t.endTime))
		a.PutBool(semconv.RouteBluetooth, t.bluetooth)
		if len(t.outputs) > 0 {
			outs := a.PutEmptySlice(semconv.RouteOutputs)
			outs.EnsureCapacity(len(t.outputs))
			for _, o := range t.outputs {
				outs.AppendEmpty().SetStr(o)
			}
		}
		if t.hasSpeechEndToPost {
			a.PutDouble(semconv.TurnSpeechEndPost, t.speechEndToPost)
		}
		if t.hasNotSent {
			a.PutDouble(semconv.TurnNotSent, t.notSent)
		}
		if t.hasPoolResets {
			a.PutInt(semconv.PoolResets, t.poolResets)
			if t.hasPoolBefore {
				a.PutInt(semconv.PoolResetsBefore, t.poolBefore)
			}
		}
	}

	evs := span.Events()
	evs.EnsureCapacity(len(v.causes) + 1 + len(v.broke))
	ets := pcommon.NewTimestampFromTime(epoch)
	event := func(name, cause string) {
		ev := evs.AppendEmpty()
		ev.SetName(name)
		ev.SetTimestamp(ets)
		ea := ev.Attributes()
		ea.EnsureCapacity(3)
		ea.PutStr(semconv.VerdictCause, cause)
		ea.PutStr(semconv.NetworkConnectionType, v.link)
		if d.installation != "" {
			ea.PutStr(semconv.AppInstallationID, d.installation)
		}
	}
	event(semconv.SpanVerdict, v.cause)
	for _, c := range v.causes {
		event(semconv.EventImplicated, c)
	}
	// What rule 1 read of each unit that underran: the take's need against
	// the unit's cushion. Stamped with the epoch like the counted events:
	// the count connector spans its delta counts over the times of every
	// event of the span it reads, counted or not, and the counters add up
	// only while those stay one time (docs/decisions/0200).
	for _, b := range v.broke {
		ev := evs.AppendEmpty()
		ev.SetName(semconv.EventUnderrun)
		ev.SetTimestamp(ets)
		ea := ev.Attributes()
		ea.EnsureCapacity(7)
		ea.PutInt(semconv.UnitIndex, b.unit)
		ea.PutStr(semconv.TakeID, b.takeID)
		ea.PutInt(semconv.UnitUnderruns, b.underruns)
		ea.PutDouble(semconv.UnitSilent, b.silent)
		ea.PutDouble(semconv.UnitCushion, b.cushion)
		if b.hasNeed {
			ea.PutDouble(semconv.TakeNeed, b.need)
		}
		ea.PutStr(semconv.VerdictCause, b.cause)
	}
}
