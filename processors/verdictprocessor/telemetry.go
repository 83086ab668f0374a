package verdictprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
	"github.com/percause/percause/verdict"
)

// Storage operations named in the storage_errors counter.
const (
	opRestore = "restore"
	opCommit  = "commit"
	opClose   = "close"
)

// telemetry is the processor's own metrics (metadata.yaml), with their
// attribute sets made once, so recording does not allocate.
type telemetry struct {
	b           *metadata.TelemetryBuilder
	causeAttrs  map[string]metric.MeasurementOption
	reasonAttrs map[string]metric.MeasurementOption
	opAttrs     map[string]metric.MeasurementOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	t := &telemetry{b: b, causeAttrs: map[string]metric.MeasurementOption{},
		reasonAttrs: map[string]metric.MeasurementOption{}, opAttrs: map[string]metric.MeasurementOption{}}
	attr := func(key, value string) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String(key, value)))
	}
	for _, c := range semconv.Causes {
		t.causeAttrs[c] = attr(metadata.AttributeCause, c)
	}
	for _, r := range []string{
		verdict.ForcedWait, verdict.ForcedMaxAge, verdict.ForcedPendingLimit, verdict.ForcedShutdown,
		dropNoTurn, dropPendingLimit, dropShutdown, dropDecided, verdict.DropDuplicateSpan,
		verdict.DropDuplicateTake, dropTakeWithoutID, verdict.DropUnitLimit, dropExportFailed,
		launches.ForgotLimit, launches.ForgotIdle,
	} {
		t.reasonAttrs[r] = attr(metadata.AttributeReason, r)
	}
	for _, o := range []string{opRestore, opCommit, opClose} {
		t.opAttrs[o] = attr(metadata.AttributeOperation, o)
	}
	return t, nil
}

func (t *telemetry) shutdown() { t.b.Shutdown() }

// tally collects telemetry under the processor's lock; record writes it
// after.
type tally struct {
	pendingDelta  int64
	launchesDelta int64
	disagreements int64
	forgotten     map[string]int64
	refused       int64
	verdicts      map[string]int64
	forced        map[string]int64
	dropped       map[string]int64
	latencies     []float64
}

func (t *tally) inc(m *map[string]int64, key string) { t.add(m, key, 1) }

func (t *tally) add(m *map[string]int64, key string, n int64) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[key] += n
}

func (t *telemetry) record(ctx context.Context, c *tally) {
	if c.pendingDelta != 0 {
		t.b.ProcessorVerdictPendingTurns.Add(ctx, c.pendingDelta)
	}
	if c.refused != 0 {
		t.b.ProcessorVerdictRefused.Add(ctx, c.refused)
	}
	for k, n := range c.verdicts {
		t.b.ProcessorVerdictVerdicts.Add(ctx, n, t.causeAttrs[k])
	}
	for r, n := range c.forced {
		t.b.ProcessorVerdictForced.Add(ctx, n, t.reasonAttrs[r])
	}
	for r, n := range c.dropped {
		t.b.ProcessorVerdictDropped.Add(ctx, n, t.reasonAttrs[r])
	}
	for _, l := range c.latencies {
		t.b.ProcessorVerdictDecisionLatency.Record(ctx, l)
	}
	if c.launchesDelta != 0 {
		t.b.ProcessorVerdictLaunches.Add(ctx, c.launchesDelta)
	}
	for r, n := range c.forgotten {
		t.b.ProcessorVerdictLaunchesForgotten.Add(ctx, n, t.reasonAttrs[r])
	}
	if c.disagreements != 0 {
		t.b.ProcessorVerdictHistoryDisagreements.Add(ctx, c.disagreements)
	}
}

func (t *telemetry) restored(ctx context.Context, n int64) {
	t.b.ProcessorVerdictRestored.Add(ctx, n)
	t.b.ProcessorVerdictPendingTurns.Add(ctx, n)
}

func (t *telemetry) storageError(ctx context.Context, op string, n int64) {
	t.b.ProcessorVerdictStorageErrors.Add(ctx, n, t.opAttrs[op])
}

// logLimiter allows one log line per interval.
type logLimiter struct {
	mu    sync.Mutex
	every time.Duration
	last  time.Time
}

func (l *logLimiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Sub(l.last) < l.every {
		return false
	}
	l.last = now
	return true
}
