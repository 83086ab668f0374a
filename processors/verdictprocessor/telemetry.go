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
	// opTakeover is a partition's changelog read back (a failed changelog
	// write fails its commit, counted as one).
	opTakeover = "takeover"
	// opHeartbeat is the heartbeats written on the input's partitions.
	opHeartbeat = "heartbeat"
)

// telemetry is the processor's own metrics (metadata.yaml). The counts a
// request changes are observed, read only when the collector's metrics
// are (internal/leaf/observed): an addition costs nanoseconds and no
// allocation, where each of the five or six synchronous Adds a request
// cost a few hundred nanoseconds and an allocation on its own
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
	for _, o := range []string{opRestore, opCommit, opClose, opTakeover, opHeartbeat} {
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
	forgotten     keyedCounts
	refused       int64
	verdicts      keyedCounts
	forced        keyedCounts
	dropped       keyedCounts
	latencies     []float64
}

// keyedCounts are counts by attribute value: a batch touches one or two
// values of each, so a list does (a map made for each batch was a tenth
// of what holding a batch allocated).
type keyedCounts []keyedCount

type keyedCount struct {
	key string
	n   int64
}

func (t *tally) inc(m *keyedCounts, key string) { t.add(m, key, 1) }

func (t *tally) add(m *keyedCounts, key string, n int64) {
	for i := range *m {
		if (*m)[i].key == key {
			(*m)[i].n += n
			return
		}
	}
	*m = append(*m, keyedCount{key, n})
}

func (t *telemetry) record(ctx context.Context, c *tally) {
	b := t.b
	if c.pendingDelta != 0 {
		b.ProcessorVerdictPendingTurns.Add(c.pendingDelta)
	}
	if c.refused != 0 {
		b.ProcessorVerdictRefused.Add(c.refused)
	}
	for _, kc := range c.verdicts {
		b.ProcessorVerdictVerdicts.AddFor(kc.key, kc.n)
	}
	for _, kc := range c.forced {
		b.ProcessorVerdictForced.AddFor(kc.key, kc.n)
	}
	for _, kc := range c.dropped {
		b.ProcessorVerdictDropped.AddFor(kc.key, kc.n)
	}
	for _, l := range c.latencies {
		b.ProcessorVerdictDecisionLatency.Record(ctx, l)
	}
	if c.launchesDelta != 0 {
		b.ProcessorVerdictLaunches.Add(c.launchesDelta)
	}
	for _, kc := range c.forgotten {
		b.ProcessorVerdictLaunchesForgotten.AddFor(kc.key, kc.n)
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
