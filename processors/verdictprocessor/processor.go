package verdictprocessor

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
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
	dropUnitLimit     = "unit_limit" // more units than a turn can hold
	dropExportFailed  = "export_failed"
)

// Sweep interval bounds: the sweep decides turns whose wait is over, so it
// runs often enough relative to the wait.
const (
	minSweepInterval = 10 * time.Millisecond
	maxSweepInterval = time.Second
)

// verdictProcessor is the traces processor. Spans pass through at once; the
// readings the rules need are kept per trace until the turn can be decided.
type verdictProcessor struct {
	cfg    *Config
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	next   consumer.Traces
	now    func() time.Time
	manual bool // tests sweep by hand with their own clock
	// epoch is when this processor began counting: the timestamp of the
	// counted events (see appendVerdict).
	epoch time.Time

	mu      sync.Mutex
	store   *store
	decided *decidedSet

	stop chan struct{}
	done chan struct{}

	// Precomputed attribute sets, so recording telemetry does not allocate.
	causeAttrs  map[string]metric.MeasurementOption
	reasonAttrs map[string]metric.MeasurementOption
}

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
		cfg:         cfg,
		logger:      set.Logger,
		tel:         tel,
		next:        next,
		now:         time.Now,
		store:       newStore(),
		decided:     newDecidedSet(cfg.DecidedCacheSize),
		causeAttrs:  map[string]metric.MeasurementOption{},
		reasonAttrs: map[string]metric.MeasurementOption{},
	}
	for _, c := range semconv.Causes {
		p.causeAttrs[c] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeCause, c)))
	}
	for _, r := range []string{
		forcedWait, forcedPendingLimit, forcedShutdown,
		dropNoTurn, dropPendingLimit, dropShutdown, dropDecided, dropDuplicateSpan,
		dropDuplicateTake, dropTakeWithoutID, dropUnitLimit, dropExportFailed,
	} {
		p.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeReason, r)))
	}
	for _, o := range opts {
		o(p)
	}
	p.epoch = p.now()
	return p, nil
}

func (p *verdictProcessor) start(context.Context, component.Host) error {
	if p.manual {
		return nil
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	interval := min(max(p.cfg.Wait/10, minSweepInterval), maxSweepInterval)
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
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

// shutdown decides every turn still held (forced, reason shutdown) and
// counts the traces held without their turn as dropped.
func (p *verdictProcessor) shutdown(ctx context.Context) error {
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
	}
	var out tally
	var verdicts []decision
	p.mu.Lock()
	for p.store.len() > 0 {
		pt := p.store.oldest()
		if d, ok := p.forceLocked(pt, forcedShutdown, dropShutdown, &out); ok {
			verdicts = append(verdicts, d)
		}
	}
	p.mu.Unlock()
	p.record(ctx, &out)
	p.tel.Shutdown()
	return p.emit(ctx, verdicts)
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

// decision is a verdict with what is needed to write its span.
type decision struct {
	traceID  pcommon.TraceID
	turnSpan pcommon.SpanID
	resource pcommon.Resource
	v        verdict
}

// tally collects telemetry under the lock; it is recorded after.
type tally struct {
	pendingDelta int64
	verdicts     map[string]int64
	forced       map[string]int64
	dropped      map[string]int64
}

func (t *tally) inc(m *map[string]int64, key string) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[key]++
}

// processTraces reads the turn's spans out of the batch, passes the batch on
// and appends the verdict spans of the turns this batch completed.
func (p *verdictProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	buf := obsPool.Get().(*[]observation)
	defer func() {
		clear(*buf)
		*buf = (*buf)[:0]
		obsPool.Put(buf)
	}()
	obs := p.observe(td, (*buf)[:0])
	*buf = obs
	if len(obs) == 0 {
		return td, nil
	}
	now := p.now()
	var out tally
	var verdicts []decision
	touched := make([]*pendingTrace, 0, 4)

	p.mu.Lock()
	for i := range obs {
		o := &obs[i]
		if p.decided.has(o.traceID) {
			out.inc(&out.dropped, dropDecided)
			continue
		}
		pt := p.store.get(o.traceID)
		if pt == nil {
			for p.store.len() >= p.cfg.MaxPending {
				if d, ok := p.forceLocked(p.store.oldest(), forcedPendingLimit, dropPendingLimit, &out); ok {
					verdicts = append(verdicts, d)
				}
			}
			pt = p.store.add(o.traceID, now)
			out.pendingDelta++
		}
		p.mergeLocked(pt, o, now, &out)
		if len(touched) == 0 || touched[len(touched)-1] != pt {
			touched = append(touched, pt)
		}
	}
	for _, pt := range touched {
		if pt.elem == nil || !pt.ready() {
			continue // already decided (evicted) or still waiting
		}
		verdicts = append(verdicts, p.decideLocked(pt, "", &out))
	}
	p.mu.Unlock()

	p.record(ctx, &out)
	for _, d := range verdicts {
		appendVerdict(td, d, now, p.epoch)
	}
	return td, nil
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

func (p *verdictProcessor) mergeLocked(pt *pendingTrace, o *observation, now time.Time, out *tally) {
	switch o.kind {
	case obsTurn:
		switch {
		case pt.turn == nil:
			if pt.hasSpan(o.turn.spanID) {
				out.inc(&out.dropped, dropDuplicateSpan)
				return
			}
			pt.turn, pt.turnAt = o.turn, now
		case pt.turn.spanID == o.turn.spanID:
			out.inc(&out.dropped, dropDuplicateSpan)
		default:
			pt.extraTurns++
		}
	case obsUnit:
		if pt.hasSpan(o.unit.spanID) {
			out.inc(&out.dropped, dropDuplicateSpan)
			return
		}
		if len(pt.unitSpans) >= maxUnits {
			out.inc(&out.dropped, dropUnitLimit)
			return
		}
		pt.unitSpans = append(pt.unitSpans, o.unit.spanID)
		if p.unitMatters(&o.unit) {
			pt.units = append(pt.units, o.unit)
		}
	case obsTake:
		if pt.hasSpan(o.take.spanID) {
			out.inc(&out.dropped, dropDuplicateSpan)
			return
		}
		if _, ok := pt.take(o.take.id); ok {
			out.inc(&out.dropped, dropDuplicateTake)
			return
		}
		if len(pt.takes) >= maxUnits {
			out.inc(&out.dropped, dropUnitLimit)
			return
		}
		pt.takes = append(pt.takes, o.take)
	default:
		out.inc(&out.dropped, dropTakeWithoutID)
	}
}

// unitMatters reports whether a rule can fire on the unit's readings.
func (p *verdictProcessor) unitMatters(u *unitReading) bool {
	return u.underruns > 0 || len(u.problems) > 0 || (u.hasLead && u.lead < -p.cfg.Rules.LateLead.Seconds())
}

// decideLocked decides a held trace, removes it and remembers its ID.
func (p *verdictProcessor) decideLocked(pt *pendingTrace, forced string, out *tally) decision {
	v := decide(pt, p.cfg, forced)
	p.store.remove(pt)
	pt.elem = nil
	p.decided.add(pt.traceID)
	out.pendingDelta--
	out.inc(&out.verdicts, v.cause)
	if forced != "" {
		out.inc(&out.forced, forced)
	}
	return decision{traceID: pt.traceID, turnSpan: pt.turn.spanID, resource: pt.turn.resource, v: v}
}

// forceLocked decides a held trace now if its turn has arrived, or drops it.
func (p *verdictProcessor) forceLocked(pt *pendingTrace, forced, drop string, out *tally) (decision, bool) {
	if pt.turn != nil {
		return p.decideLocked(pt, forced, out), true
	}
	p.store.remove(pt)
	pt.elem = nil
	out.pendingDelta--
	out.inc(&out.dropped, drop)
	return decision{}, false
}

// sweep decides the turns whose wait is over and drops what aged out.
func (p *verdictProcessor) sweep(ctx context.Context) {
	now := p.now()
	var out tally
	var verdicts []decision
	p.mu.Lock()
	for e := p.store.order.Front(); e != nil; {
		next := e.Next()
		pt := e.Value.(*pendingTrace)
		switch {
		case pt.turn != nil && now.Sub(pt.turnAt) >= p.cfg.Wait:
			verdicts = append(verdicts, p.decideLocked(pt, forcedWait, &out))
		case now.Sub(pt.created) >= p.cfg.MaxAge:
			if d, ok := p.forceLocked(pt, forcedWait, dropNoTurn, &out); ok {
				verdicts = append(verdicts, d)
			}
		}
		e = next
	}
	p.mu.Unlock()
	p.record(ctx, &out)
	if err := p.emit(ctx, verdicts); err != nil {
		p.logger.Warn("verdicts not delivered", zap.Int("verdicts", len(verdicts)), zap.Error(err))
	}
}

// emit sends verdicts decided outside a batch (by the sweep or at shutdown).
func (p *verdictProcessor) emit(ctx context.Context, verdicts []decision) error {
	if len(verdicts) == 0 {
		return nil
	}
	td := ptrace.NewTraces()
	now := p.now()
	for _, d := range verdicts {
		appendVerdict(td, d, now, p.epoch)
	}
	err := p.next.ConsumeTraces(ctx, td)
	if err != nil {
		p.tel.ProcessorVerdictDropped.Add(ctx, int64(len(verdicts)), p.reasonAttrs[dropExportFailed])
	}
	return err
}

func (p *verdictProcessor) record(ctx context.Context, t *tally) {
	if t.pendingDelta != 0 {
		p.tel.ProcessorVerdictPendingTurns.Add(ctx, t.pendingDelta)
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
// the phone's resource. Its events are what the count connector counts: one
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
func appendVerdict(td ptrace.Traces, d decision, now, epoch time.Time) {
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
	a.EnsureCapacity(10)
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

	evs := span.Events()
	evs.EnsureCapacity(len(v.causes) + 1)
	ets := pcommon.NewTimestampFromTime(epoch)
	event := func(name, cause string) {
		ev := evs.AppendEmpty()
		ev.SetName(name)
		ev.SetTimestamp(ets)
		ev.Attributes().PutStr(semconv.VerdictCause, cause)
		ev.Attributes().PutStr(semconv.NetworkConnectionType, v.link)
	}
	event(semconv.SpanVerdict, v.cause)
	for _, c := range v.causes {
		event(semconv.EventImplicated, c)
	}
}
