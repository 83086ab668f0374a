package linesconnector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/percause/percause/components/linesconnector/internal/metadata"
	"github.com/percause/percause/exporters/textlines"
)

// Log record attributes the connector reads: where a line came from, as the
// filelog receiver names them (include_file_name, include_file_path,
// include_file_record_number). `percause lines` sets the same ones.
const (
	AttrFileName     = "log.file.name"
	AttrFilePath     = "log.file.path"
	AttrRecordNumber = "log.file.record_number"
)

// Outcomes of a line (the outcome attribute of otelcol_connector_lines_lines).
const (
	outcomeTurn      = "turn"
	outcomeTake      = "take"
	outcomeMalformed = "malformed"
	outcomeOther     = "other"
)

// Reasons a line read is not emitted (otelcol_connector_lines_dropped).
const (
	dropTakeWithoutTurn = "take_without_turn" // a take without a trace ID that no turn named in time
	dropDuplicate       = "duplicate"         // a line already held (read twice)
	dropExportFailed    = "export_failed"     // the traces pipeline refused takes of earlier deliveries emitted alone (a turn is held again)
)

// MessageWaitsForDelivery is the message the connector logs (debug) when a
// delivery of logs waits for the outcome of another delivery still carrying
// some of its lines to the traces pipeline.
const MessageWaitsForDelivery = "lines connector: a delivery waits for the delivery carrying the same lines"

// Reasons a held line is let go before its partner came (logged).
const (
	releaseWait     = "wait"
	releaseLimit    = "pending_limit"
	releaseShutdown = "shutdown"
)

type linesConnector struct {
	id     component.ID
	cfg    *Config
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	next   consumer.Traces
	now    func() time.Time
	manual bool // tests sweep by hand with their own clock

	mu      sync.Mutex
	st      *state
	batches uint64 // ConsumeLogs calls so far, numbering each one's lines
	// flying holds the emissions on their way to the next consumer, by the
	// traces of the turns they remembered as emitted, and by the take IDs
	// those turns name: until the next consumer answers, that memory is
	// provisional, and a delivery with a line it would be read against
	// waits for the answer (carryingLocked).
	flying      map[pcommon.TraceID]*flight
	flyingTakes map[string][]*flight
	waiting     int // deliveries waiting for a flight (Simulated.Waiting)

	stop chan struct{}
	done chan struct{}

	outcomeAttrs map[string]metric.MeasurementOption
	reasonAttrs  map[string]metric.MeasurementOption
}

type option func(*linesConnector)

// withClock replaces the clock and turns off the background sweep.
func withClock(now func() time.Time) option {
	return func(c *linesConnector) { c.now, c.manual = now, true }
}

func newConnector(set connector.Settings, cfg *Config, next consumer.Traces, opts ...option) (*linesConnector, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	c := &linesConnector{
		id: set.ID, cfg: cfg, logger: set.Logger, tel: tel, next: next, now: time.Now,
		st:           newState(cfg),
		flying:       map[pcommon.TraceID]*flight{},
		flyingTakes:  map[string][]*flight{},
		outcomeAttrs: map[string]metric.MeasurementOption{},
		reasonAttrs:  map[string]metric.MeasurementOption{},
	}
	for _, o := range []string{outcomeTurn, outcomeTake, outcomeMalformed, outcomeOther} {
		c.outcomeAttrs[o] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeOutcome, o)))
	}
	for _, r := range append([]string{dropTakeWithoutTurn, dropDuplicate, dropExportFailed}, textlines.Reasons...) {
		c.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeReason, r)))
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

func (c *linesConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (c *linesConnector) Start(ctx context.Context, host component.Host) error {
	if c.cfg.Storage != nil {
		if err := c.restore(ctx, host); err != nil {
			return fmt.Errorf("lines connector: %w", err)
		}
	}
	if c.manual {
		return nil
	}
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	interval := min(max(c.cfg.Wait/10, 10*time.Millisecond), time.Second)
	go func() {
		defer close(c.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				c.sweep(context.Background())
			}
		}
	}()
	return nil
}

// restore opens the store of held lines and holds again what an earlier
// run left in it.
func (c *linesConnector) restore(ctx context.Context, host component.Host) error {
	store, err := openHeld(ctx, host, *c.cfg.Storage, c.id)
	if err != nil {
		return err
	}
	recs, lines, err := store.read(ctx)
	if err != nil {
		_ = store.client.Close(ctx)
		return fmt.Errorf("storage %s: %w", *c.cfg.Storage, err)
	}
	out := newEmission()
	c.mu.Lock()
	c.st.store = store
	c.st.restore(recs, lines, &out)
	held := c.st.held
	c.mu.Unlock()
	if held > 0 {
		c.tel.ConnectorLinesPending.Add(ctx, int64(held))
		c.logger.Info("lines connector: holds again the lines an earlier run held", zap.Int("lines", held))
	}
	return nil
}

// Shutdown lets every held line go: turns are emitted with the takes they
// have, takes with a trace ID alone; takes without one are dropped. The
// collector shuts a connector down before the pipelines after it, so the
// verdict processor still decides what is emitted here.
func (c *linesConnector) Shutdown(ctx context.Context) error {
	if c.stop != nil {
		close(c.stop)
		<-c.done
		c.stop = nil
	}
	c.mu.Lock()
	out := newEmission()
	c.st.releaseAll(&out, releaseShutdown)
	c.takeOffLocked(&out)
	c.mu.Unlock()
	err := c.emit(ctx, &out)
	// Refused, what was held stays stored: the next start holds it again.
	err = errors.Join(err, c.st.store.close(ctx))
	c.tel.Shutdown()
	return err
}

// sweep lets go the lines whose wait is over.
func (c *linesConnector) sweep(ctx context.Context) {
	c.mu.Lock()
	out := newEmission()
	c.st.expire(c.now(), &out)
	c.takeOffLocked(&out)
	c.mu.Unlock()
	if err := c.emit(ctx, &out); err != nil {
		c.logger.Warn("lines connector: the traces pipeline refused what the sweep emitted", zap.Error(err))
	}
}

// line is one line read with where it came from.
type line struct {
	rec      textlines.Record
	text     string // the line as read
	resource pcommon.Resource
	file     string
	number   int64
	at       time.Time // the line's own time, else when it was read
	timed    bool      // at is the line's own time (its prefix's, or its log record's)
	arrived  time.Time
	batch    uint64 // the ConsumeLogs call that brought it
	// trace is the line's trace ID, or the log record's when the line has
	// none (zero: neither).
	trace pcommon.TraceID
	// launch is the launch the connector gave a turn line that carries
	// none (its resource has no service.instance.id); "" otherwise.
	launch string
	// launchAssumed is what was assumed in giving it ("" when the
	// evidence held).
	launchAssumed string

	// held: the line is held (alone, or joined to a held turn).
	held bool
	// stored is the stored record the line is in, while it is held or on
	// its way (nil: not stored, or no storage configured); noting: it is
	// among the lines the next write stores.
	stored *heldRecord
	noting bool
}

func (c *linesConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	lines := c.read(ctx, ld, c.now())
	out := newEmission()
	c.mu.Lock()
	// A line another delivery is carrying to the next consumer waits for
	// its answer: read now, it would be a duplicate of a turn that may yet
	// be refused, and this delivery acknowledged for lines then lost (its
	// sender, answered, does not send them again). Accepted, they are
	// duplicates; refused, this delivery carries them itself.
	if err := c.awaitCarriersLocked(ctx, lines); err != nil {
		return err // unlocked: nothing of this delivery was taken in, and its sender sends again
	}
	c.batches++
	out.batch = c.batches
	for i := range lines {
		lines[i].batch = out.batch
		c.st.add(&lines[i], &out)
	}
	c.st.limit(&out)
	c.takeOffLocked(&out)
	// Stored before the answer: a line held when its sender is answered
	// outlives the process. Failed, the lines stay held in memory, the
	// sender is told, and the same lines delivered again (duplicates of
	// those held) are answered once a write stores them.
	stored := c.st.store.writeLocked(ctx)
	c.mu.Unlock()

	// An error goes back to the receiver, which may deliver the logs again:
	// what was refused was not remembered as emitted, so the lines delivered
	// again are emitted then; the spans made from a line are the same every
	// time (their IDs derive from the line), so a redelivery of what was
	// accepted cannot make a second turn.
	return errors.Join(c.emit(ctx, &out), stored)
}

// read reads the lines of a delivery's log records, and counts what it
// read by outcome.
func (c *linesConnector) read(ctx context.Context, ld plog.Logs, now time.Time) []line {
	var lines []line
	counts := map[string]int64{}
	malformed := map[string]int64{}
	var unknown int64
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		// Lines may be held past this call; the batch is the caller's.
		res := pcommon.NewResource()
		rl.Resource().CopyTo(res)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				file, number := recordSource(lr)
				for n, text := range strings.Split(lr.Body().AsString(), "\n") {
					if n > 0 && text == "" {
						continue
					}
					rec, err := textlines.Read(text)
					if err != nil {
						if errors.Is(err, textlines.ErrNotALine) {
							counts[outcomeOther]++
							continue
						}
						counts[outcomeMalformed]++
						var le *textlines.LineError
						reason := textlines.ReasonSyntax
						if errors.As(err, &le) {
							reason = le.Reason
						}
						malformed[reason]++
						c.logger.Warn("lines connector: malformed line", zap.String("file", orDash(file)),
							zap.Int64("line", number+int64(n)), zap.String("reason", reason), zap.Error(err))
						continue
					}
					if rec.Kind == textlines.KindTurn {
						counts[outcomeTurn]++
					} else {
						counts[outcomeTake]++
					}
					unknown += int64(rec.Unknown)
					lines = append(lines, lineOf(rec, text, res, lr, file, number+int64(n), now))
				}
			}
		}
	}

	for o, n := range counts {
		c.tel.ConnectorLinesLines.Add(ctx, n, c.outcomeAttrs[o])
	}
	for r, n := range malformed {
		c.tel.ConnectorLinesMalformed.Add(ctx, n, c.reasonAttrs[r])
	}
	if unknown > 0 {
		c.tel.ConnectorLinesUnknownFields.Add(ctx, unknown)
	}
	return lines
}

// lineOf is a line read from a log record: its trace the line's own, else
// the record's; its time the line's own, else the record's, else when it
// was read.
func lineOf(rec textlines.Record, text string, res pcommon.Resource, lr plog.LogRecord, file string, number int64, now time.Time) line {
	l := line{rec: rec, text: text, resource: res, file: file, number: number, arrived: now}
	if rec.TraceID != "" {
		l.trace = traceIDOf(rec.TraceID)
	} else if !lr.TraceID().IsEmpty() {
		l.trace = lr.TraceID()
	}
	switch {
	case !rec.Time.IsZero():
		l.at, l.timed = rec.Time, true
	case lr.Timestamp() != 0:
		l.at, l.timed = lr.Timestamp().AsTime(), true
	case lr.ObservedTimestamp() != 0:
		l.at = lr.ObservedTimestamp().AsTime()
	default:
		l.at = now
	}
	return l
}

// awaitCarriersLocked waits, lock let go meanwhile, until no delivery on
// its way to the next consumer carries a line of lines; a context that
// ends first returns its error with the lock let go.
func (c *linesConnector) awaitCarriersLocked(ctx context.Context, lines []line) error {
	for {
		f := c.carryingLocked(lines)
		if f == nil {
			return nil
		}
		c.waiting++
		c.mu.Unlock()
		c.logger.Debug(MessageWaitsForDelivery, zap.Int("lines", len(lines)))
		select {
		case <-f.done:
		case <-ctx.Done():
			c.mu.Lock()
			c.waiting--
			c.mu.Unlock()
			return ctx.Err()
		}
		c.mu.Lock()
		c.waiting--
	}
}

// carryingLocked returns the emission on its way to the next consumer that
// one of lines would be read against, if any: a turn line's trace (its own,
// else the one derived from it) or a take line's trace among the turns it
// remembered as emitted, or a take line without a trace ID naming a take
// one of those turns names.
func (c *linesConnector) carryingLocked(lines []line) *flight {
	if len(c.flying) == 0 {
		return nil
	}
	for i := range lines {
		l := &lines[i]
		switch {
		case l.rec.Kind == textlines.KindTurn:
			trace := l.trace
			if trace.IsEmpty() {
				trace = derivedTrace(l)
			}
			if f := c.flying[trace]; f != nil {
				return f
			}
		case !l.trace.IsEmpty():
			if f := c.flying[l.trace]; f != nil {
				return f
			}
		default:
			if fs := c.flyingTakes[l.rec.Take.ID]; len(fs) > 0 {
				return fs[0]
			}
		}
	}
	return nil
}

// flight is an emission on its way to the next consumer: the turns it
// remembered as emitted (their traces, and the take IDs they name), until
// the next consumer answers; done is closed then.
type flight struct {
	done   chan struct{}
	traces []pcommon.TraceID
	takes  []string
}

// takeOffLocked notes an emission's turns as on their way, before the lock
// that released them is let go.
func (c *linesConnector) takeOffLocked(out *emission) {
	var f *flight
	for _, ref := range out.emitted {
		e, ok := c.st.emitted.entry(ref)
		if !ok {
			continue // forgotten already: the ring is smaller than the emission
		}
		if f == nil {
			f = &flight{done: make(chan struct{})}
		}
		f.traces = append(f.traces, e.trace)
		c.flying[e.trace] = f
		for _, id := range e.names {
			f.takes = append(f.takes, id)
			c.flyingTakes[id] = append(c.flyingTakes[id], f)
		}
	}
	out.flight = f
}

// landLocked ends a flight once the next consumer has answered (and a
// refusal has been undone): the deliveries waiting for it go on.
func (c *linesConnector) landLocked(f *flight) {
	for _, t := range f.traces {
		if c.flying[t] == f {
			delete(c.flying, t)
		}
	}
	for _, id := range f.takes {
		removeFrom(c.flyingTakes, id, f)
	}
	close(f.done)
}

// emit sends what was released and records the telemetry of a state change.
func (c *linesConnector) emit(ctx context.Context, out *emission) error {
	if out.pendingDelta != 0 {
		c.tel.ConnectorLinesPending.Add(ctx, out.pendingDelta)
	}
	for r, n := range out.dropped {
		c.tel.ConnectorLinesDropped.Add(ctx, n, c.reasonAttr(r))
	}
	for _, r := range out.released {
		c.logger.Debug("lines connector: let a line go before the lines it joins came",
			zap.String("what", r.what), zap.String("file", orDash(r.file)), zap.Int64("line", r.number), zap.String("reason", r.reason))
	}
	if out.traces.ResourceSpans().Len() == 0 {
		return nil // nothing released, so no flight either
	}
	err := c.next.ConsumeTraces(ctx, out.traces)
	reheld, kept := 0, 0
	if err != nil || out.flight != nil || len(out.stored) > 0 {
		c.mu.Lock()
		if err != nil {
			// A turn counts as emitted only once the next consumer accepted
			// it: the same lines delivered again are emitted then. A turn
			// of an earlier delivery, whose sender was answered, is held
			// again: the next sweep emits it again.
			c.st.refused(out)
			reheld, kept = c.st.rehold(out, c.now())
		}
		// What was accepted, or refused and not held again, is on its
		// way no more: its stored record may go.
		for _, l := range out.stored {
			if !l.held {
				c.st.store.settle(l)
			}
		}
		if out.flight != nil {
			// Refused, forgotten first: a delivery waiting for the answer
			// then finds the turns not emitted, and carries them itself.
			c.landLocked(out.flight)
		}
		c.mu.Unlock()
	}
	if err != nil {
		if reheld > 0 {
			c.tel.ConnectorLinesPending.Add(ctx, int64(reheld))
		}
		if lost := out.acked - kept; lost > 0 {
			c.tel.ConnectorLinesDropped.Add(ctx, int64(lost), c.reasonAttr(dropExportFailed))
		}
		return err
	}
	if out.turns > 0 {
		c.tel.ConnectorLinesTurns.Add(ctx, int64(out.turns))
	}
	if out.takes > 0 {
		c.tel.ConnectorLinesTakes.Add(ctx, int64(out.takes))
	}
	return nil
}

func (c *linesConnector) reasonAttr(r string) metric.MeasurementOption {
	if a, ok := c.reasonAttrs[r]; ok {
		return a
	}
	return metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttributeReason, r)))
}

// recordSource is the file and line number a record says it came from.
func recordSource(lr plog.LogRecord) (string, int64) {
	a := lr.Attributes()
	file := ""
	if v, ok := a.Get(AttrFileName); ok {
		file = v.AsString()
	} else if v, ok := a.Get(AttrFilePath); ok {
		file = v.AsString()
	}
	var n int64
	if v, ok := a.Get(AttrRecordNumber); ok {
		switch v.Type() {
		case pcommon.ValueTypeInt:
			n = v.Int()
		case pcommon.ValueTypeDouble:
			n = int64(v.Double())
		}
	}
	return file, n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// emission is what one call releases: traces to send and telemetry.
type emission struct {
	traces       ptrace.Traces
	turns, takes int
	pendingDelta int64
	dropped      map[string]int64
	released     []released
	// batch is the ConsumeLogs call that made it (0: the sweep or the
	// shutdown); acked counts the lines it sends that came in earlier
	// calls, already acknowledged to their sender: a refusal loses those,
	// while this call's own lines go back to the sender with the error.
	batch uint64
	acked int
	// emitted are the turns it remembered as emitted, forgotten again when
	// the next consumer refuses it.
	emitted []ringRef
	// carried are the turns it sends whose turn line came in an earlier
	// call: held again when the next consumer refuses it.
	carried []*heldTurn
	// flight notes those turns as on their way until the next consumer
	// answers (nil: none).
	flight *flight
	// stored are the lines it sends that are in a stored record: settled
	// once the next consumer accepts them (those a refusal holds again
	// stay stored).
	stored []*line
}

// count notes one line the emission sends.
func (e *emission) count(l *line) {
	if l.batch != e.batch {
		e.acked++
	}
	if l.stored != nil {
		e.stored = append(e.stored, l)
	}
}

type released struct {
	what, file, reason string
	number             int64
}

func newEmission() emission { return emission{traces: ptrace.NewTraces()} }

func (e *emission) drop(reason string) {
	if e.dropped == nil {
		e.dropped = map[string]int64{}
	}
	e.dropped[reason]++
}
