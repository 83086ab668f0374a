package verdictprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

// Storage operations named in the storage_errors counter.
const (
	opRestore = "restore"
	opCommit  = "commit"
	opClose   = "close"
)

// telemetry is the processor's own metrics (metadata.yaml). The counts a
// request changes are observed, read only when the collector's metrics
// are (internal/leaf/observed): an addition costs nanoseconds and no
// allocation, where each of the five or six synchronous Adds a request
// cost 275 ns and an allocation on its own, more on a busy request's way
// (docs/decisions/0245-own-counts-are-observed.md).
// The storage errors and the restored count, rare, and the decision
// latency, a histogram, are recorded as they happen, with their attribute
// sets made once.
type telemetry struct {
	b       *metadata.TelemetryBuilder
	opAttrs map[string]metric.MeasurementOption
	// beforeShutdown, when set (tests), runs just before the observed
	// instruments stop: the last moment a reader sees what the stop
	// itself counted.
	beforeShutdown func()
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	t := &telemetry{b: b, opAttrs: map[string]metric.MeasurementOption{}}
	attr := func(key, value string) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String(key, value)))
	}
	for _, o := range []string{opRestore, opCommit, opClose} {
		t.opAttrs[o] = attr(metadata.AttributeOperation, o)
	}
	return t, nil
}

// shutdown stops the observed instruments: a processor shut down (on a
// reload) must not go on reporting beside the one that replaces it.
func (t *telemetry) shutdown() {
	if t.beforeShutdown != nil {
		t.beforeShutdown()
	}
	t.b.Shutdown()
}

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
	b := t.b
	if c.pendingDelta != 0 {
		b.ProcessorVerdictPendingTurns.Add(c.pendingDelta)
	}
	if c.refused != 0 {
		b.ProcessorVerdictRefused.Add(c.refused)
	}
	for k, n := range c.verdicts {
		b.ProcessorVerdictVerdicts.AddFor(k, n)
	}
	for r, n := range c.forced {
		b.ProcessorVerdictForced.AddFor(r, n)
	}
	for r, n := range c.dropped {
		b.ProcessorVerdictDropped.AddFor(r, n)
	}
	for _, l := range c.latencies {
		b.ProcessorVerdictDecisionLatency.Record(ctx, l)
	}
	if c.launchesDelta != 0 {
		b.ProcessorVerdictLaunches.Add(c.launchesDelta)
	}
	for r, n := range c.forgotten {
		b.ProcessorVerdictLaunchesForgotten.AddFor(r, n)
	}
	if c.disagreements != 0 {
		b.ProcessorVerdictHistoryDisagreements.Add(c.disagreements)
	}
}

func (t *telemetry) restored(ctx context.Context, n int64) {
	t.b.ProcessorVerdictRestored.Add(ctx, n)
	t.b.ProcessorVerdictPendingTurns.Add(n)
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
