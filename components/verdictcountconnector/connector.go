package verdictcountconnector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/percause/percause/components/verdictcountconnector/internal/metadata"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/idring"
	"github.com/percause/percause/verdict"
)

// The counters it writes: the OpenTelemetry names whose Prometheus names
// (percause_turns_total, percause_cause_implicated_total) the dashboards and
// alerts read.
const (
	MetricTurns      = "percause.turns"
	MetricImplicated = "percause.cause.implicated"

	descTurns      = "Voice turns decided by the verdict processor, by primary cause."
	descImplicated = "Causes implicated in voice turns, one per cause per turn."
)

// DefaultRecent is how many counted verdict span IDs are remembered.
const DefaultRecent = 100000

// DefaultFlushInterval is how long the counts of stored verdicts wait to be
// handed on together (handon.go says why they wait; 0244's last section
// why half a second).
const DefaultFlushInterval = 500 * time.Millisecond

// ErrRecentNotPositive is the configuration error for recent.
var ErrRecentNotPositive = errors.New("recent must be positive")

// ErrFlushIntervalNegative is the configuration error for flush_interval.
var ErrFlushIntervalNegative = errors.New("flush_interval must not be negative")

// ErrResourceAttributeEmpty is the configuration error for an empty name in
// resource_attributes.
var ErrResourceAttributeEmpty = errors.New("resource_attributes names an empty attribute")

// Config is the connector's configuration.
type Config struct {
	// Recent is how many verdict span IDs counted recently are remembered:
	// a verdict seen again within them is not counted again.
	Recent int `mapstructure:"recent"`
	// Storage names a storage extension that keeps the counted IDs, so a
	// verdict decided again after a restart is not counted again. With
	// shared_storage the IDs join the verdict processor's commit; with
	// another extension (file_storage) each delivery commits on its own.
	Storage *component.ID `mapstructure:"storage"`
	// FlushInterval is how long, with storage, the counts of stored
	// verdicts wait to be handed on in one delivery with the others stored
	// meanwhile; 0 hands each commit's counts on at once. Without storage
	// each delivery's counts go on at once: whether they were accepted
	// decides whether its verdicts are counted.
	FlushInterval time.Duration `mapstructure:"flush_interval"`
	// ResourceAttributes are the verdict resource's attributes the counts
	// keep on their resource (empty: all of them, as the count connector
	// does). Counts whose kept attributes agree share a resource, so the
	// counts of many launches go on under one.
	ResourceAttributes []string `mapstructure:"resource_attributes"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{Recent: DefaultRecent, FlushInterval: DefaultFlushInterval}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Recent <= 0 {
		return fmt.Errorf("%w: recent is %d", ErrRecentNotPositive, c.Recent)
	}
	if c.FlushInterval < 0 {
		return fmt.Errorf("%w: flush_interval is %s", ErrFlushIntervalNegative, c.FlushInterval)
	}
	if slices.Contains(c.ResourceAttributes, "") {
		return ErrResourceAttributeEmpty
	}
	return nil
}

// NewFactory returns the factory of the verdict count connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(metadata.Type, createDefaultConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability))
}

func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("verdict count connector: config is a %T", cfg)
	}
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	cn := &counter{cfg: c, id: set.ID, logger: set.Logger, next: next, tel: tel,
		recent: idring.New[pcommon.SpanID](c.Recent), counting: map[pcommon.SpanID]chan struct{}{}}
	cn.committed = newCommittedCounts(c.FlushInterval, cn.handOn, set.Logger)
	return cn, nil
}

// counter is the connector. Its state is the ring of verdict span IDs
// counted recently (kept in storage when configured), and the IDs being
// counted now.
type counter struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	next   consumer.Metrics
	tel    *metadata.TelemetryBuilder

	mu     sync.Mutex
	recent *idring.Ring[pcommon.SpanID]
	// counting holds the verdicts a delivery has claimed and not yet
	// settled; another delivery of one of them waits for the outcome.
	counting map[pcommon.SpanID]chan struct{}
	store    *countedStore // nil without storage
	// committed holds the counts of stored verdicts until they go on.
	committed *committedCounts

	// handingOn lets one delivery of counts at a time into the counters'
	// pipeline: the Prometheus exporter adds a delta to its series by
	// reading the series and storing the sum, with no lock between the two,
	// so two deliveries to one series at once could lose one of them.
	handingOn sync.Mutex
}

// handOn gives counts to the counters' pipeline, one delivery at a time.
func (c *counter) handOn(ctx context.Context, md pmetric.Metrics) error {
	c.handingOn.Lock()
	defer c.handingOn.Unlock()
	return c.next.ConsumeMetrics(ctx, md)
}

// Start reads back the verdicts counted before, when storage is
// configured.
func (c *counter) Start(ctx context.Context, host component.Host) error {
	if c.cfg.Storage == nil {
		return nil
	}
	store, ids, err := openCounted(ctx, host, *c.cfg.Storage, c.id, c.cfg.Recent)
	if err != nil {
		return fmt.Errorf("verdict count connector: %w", err)
	}
	for _, id := range ids {
		c.recent.Add(id)
	}
	c.store = store
	if len(ids) > 0 {
		c.logger.Info("verdict count connector: the verdicts counted before read back", zap.Int("verdicts", c.recent.Len()))
	}
	return nil
}

// Shutdown hands on the counts of stored verdicts that wait, and closes
// the storage client.
func (c *counter) Shutdown(ctx context.Context) error {
	c.committed.stop()
	defer c.tel.Shutdown()
	if c.store == nil {
		return nil
	}
	return c.store.close(ctx)
}

func (c *counter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// point is one counter's data point being summed: its attributes and count.
type point struct {
	metric string
	attrs  [3]string // cause, link, installation ("": no installation label)
	count  int64
}

// ConsumeTraces counts the batch's verdict spans not counted before, one
// data point per counter and attribute set under each verdict's resource,
// and marks them counted once the next consumer accepted the counts. A
// refusal leaves them uncounted, so the retry counts them. Whether a
// verdict was counted and the claim to count it are one step: a second
// delivery of a verdict being counted waits for the first's outcome.
func (c *counter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	ids, rcs, dups, err := c.claim(ctx, td)
	if dups > 0 {
		c.tel.ConnectorVerdictcountDuplicates.Add(dups)
	}
	if err != nil || len(ids) == 0 {
		return err
	}
	// The resources are td's, which the caller may change once this
	// returns (with a shared commit, before the counts go on): the counts
	// keep copies, of the attributes they keep.
	for i := range rcs {
		rcs[i].res = c.countsResource(rcs[i].res)
	}
	if c.store != nil {
		return c.countStored(ctx, ids, rcs)
	}
	md, _ := metricsOf(rcs)
	err = c.handOn(ctx, md)
	c.settle(ids, err == nil)
	if err != nil {
		return err
	}
	c.tel.ConnectorVerdictcountVerdicts.Add(int64(len(ids)))
	return nil
}

// countStored stores the IDs of the verdicts claimed and, once they are
// stored, sends their counts on: a count is never seen before the verdict
// it counts is remembered. With a shared commit (shared_storage) the IDs
// join the next commit of the verdict processor, which comes before the
// request that sent the verdicts is answered, and the counts go on after
// it; otherwise they are committed here. Stored, the counts wait up to
// flush_interval to go on with others (handon.go).
func (c *counter) countStored(ctx context.Context, ids []pcommon.SpanID, rcs []resourceCounts) error {
	c.mu.Lock()
	ops, seq := c.store.opsFor(ids)
	c.mu.Unlock()
	done := func(err error) error {
		if err != nil {
			c.mu.Lock()
			c.store.failed(ops)
			c.mu.Unlock()
			c.settle(ids, false)
			c.logger.Warn("verdict count connector: the counted verdicts could not be stored; their counts are not made", zap.Error(err))
			return fmt.Errorf("verdict count connector: storing the counted verdicts: %w", err)
		}
		c.mu.Lock()
		c.store.committed(seq, len(ids))
		c.mu.Unlock()
		// Stored: from here on they count. The counters' pipeline never
		// refuses (the Prometheus exporter); if it does, the counts are
		// lost, and said so.
		c.committed.add(rcs)
		c.settle(ids, true)
		c.tel.ConnectorVerdictcountVerdicts.Add(int64(len(ids)))
		return nil
	}
	return c.store.commit(ctx, ops, done)
}

// claim takes the batch's verdicts not counted and not being counted, and
// writes their counts. It waits for any verdict of the batch that another
// delivery is counting.
func (c *counter) claim(ctx context.Context, td ptrace.Traces) ([]pcommon.SpanID, []resourceCounts, int64, error) {
	for {
		c.mu.Lock()
		if wait := c.busyLocked(td); wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, nil, 0, ctx.Err()
			}
		}
		ids, rcs, dups := c.countLocked(td)
		done := make(chan struct{})
		for _, id := range ids {
			c.counting[id] = done
		}
		c.mu.Unlock()
		return ids, rcs, dups, nil
	}
}

// busyLocked returns the claim of another delivery on a verdict of td, if
// any.
func (c *counter) busyLocked(td ptrace.Traces) chan struct{} {
	var wait chan struct{}
	verdict.Each(td, func(_ pcommon.Resource, s ptrace.Span) {
		if ch, ok := c.counting[s.SpanID()]; ok && wait == nil {
			wait = ch
		}
	})
	return wait
}

// countLocked sums the counts of td's verdicts not counted before, by
// resource (td's own).
func (c *counter) countLocked(td ptrace.Traces) ([]pcommon.SpanID, []resourceCounts, int64) {
	var rcs []resourceCounts
	var ids []pcommon.SpanID
	var dups int64
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var points []point
		var ts pcommon.Timestamp
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				if s.Name() != semconv.SpanVerdict {
					continue
				}
				if c.recent.Has(s.SpanID()) || slices.Contains(ids, s.SpanID()) {
					dups++
					continue
				}
				ids = append(ids, s.SpanID())
				if ts == 0 {
					ts = eventTime(s)
				}
				verdict.EachCounted(s, func(e verdict.Counted) { points = add(points, e) })
			}
		}
		if len(points) > 0 {
			rcs = append(rcs, resourceCounts{res: rs.Resource(), points: points, ts: ts})
		}
	}
	return ids, rcs, dups
}

// settle ends a claim: the verdicts are counted when the counts were
// accepted, else left for a retry to count.
func (c *counter) settle(ids []pcommon.SpanID, counted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	done := c.counting[ids[0]]
	for _, id := range ids {
		delete(c.counting, id)
		if counted {
			c.recent.Add(id)
		}
	}
	close(done)
}

// countsResource is a copy of a verdict resource with the attributes the
// counts keep.
func (c *counter) countsResource(src pcommon.Resource) pcommon.Resource {
	res := pcommon.NewResource()
	if len(c.cfg.ResourceAttributes) == 0 {
		src.CopyTo(res)
		return res
	}
	attrs := res.Attributes()
	attrs.EnsureCapacity(len(c.cfg.ResourceAttributes))
	for _, k := range c.cfg.ResourceAttributes {
		if v, ok := src.Attributes().Get(k); ok {
			v.CopyTo(attrs.PutEmpty(k))
		}
	}
	return res
}

// eventTime is the time of the span's first event (the processor's epoch).
func eventTime(s ptrace.Span) pcommon.Timestamp {
	if s.Events().Len() > 0 {
		return s.Events().At(0).Timestamp()
	}
	return 0
}

// add counts one event: its cause, its link (unknown when absent) and its
// installation when it names one, as the count connector configured for
// these events does.
func add(points []point, e verdict.Counted) []point {
	metric := MetricTurns
	if e.Implicated {
		metric = MetricImplicated
	}
	key := [3]string{e.Cause, e.Link, e.Installation}
	for i := range points {
		if points[i].metric == metric && points[i].attrs == key {
			points[i].count++
			return points
		}
	}
	return append(points, point{metric: metric, attrs: key, count: 1})
}

// metricsOf writes counts as metrics, and how many points they are. The
// resources move into them: rcs's are the counts' own copies.
//
// Under each resource, the points go on in resource entries of at most
// pointsPerEntry. The Prometheus exporter keeps, for every series, the
// resource of the delivery that last changed it, and so everything that
// entry holds: with a whole delivery in one entry, each installation that
// went quiet kept its last whole delivery alive
// (TestQuietInstallationsKeepOnlyTheirOwnCounts measures what a quiet
// series holds; docs/decisions/0244 compares the other ways to cut them).
func metricsOf(rcs []resourceCounts) (pmetric.Metrics, int) {
	md := pmetric.NewMetrics()
	n := 0
	for _, rc := range rcs {
		n += len(rc.points)
		for start := 0; start < len(rc.points); start += pointsPerEntry {
			end := min(start+pointsPerEntry, len(rc.points))
			res := rc.res
			if end < len(rc.points) {
				res = pcommon.NewResource()
				rc.res.CopyTo(res)
			}
			appendResource(md, res, rc.points[start:end], rc.ts)
		}
	}
	return md, n
}

// pointsPerEntry bounds the points under one resource entry of a delivery:
// what a series the exporter keeps can keep alive beside its own.
const pointsPerEntry = 8

// appendResource writes the counts of one resource, moved in: a delta sum
// per counter, every point starting and ending at the events' time (the
// verdict processor's epoch), so the Prometheus exporter adds them up.
func appendResource(md pmetric.Metrics, res pcommon.Resource, points []point, ts pcommon.Timestamp) {
	// The Prometheus exporter joins the resource's attributes into each
	// point's (resource_constant_labels): room for them saves it a copy.
	room := 3 + res.Attributes().Len()
	rm := md.ResourceMetrics().AppendEmpty()
	res.MoveTo(rm.Resource())
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	for _, name := range []string{MetricTurns, MetricImplicated} {
		var sum pmetric.Sum
		for _, p := range points {
			if p.metric != name {
				continue
			}
			if sum == (pmetric.Sum{}) {
				m := sm.Metrics().AppendEmpty()
				m.SetName(name)
				if name == MetricTurns {
					m.SetDescription(descTurns)
				} else {
					m.SetDescription(descImplicated)
				}
				sum = m.SetEmptySum()
				sum.SetIsMonotonic(true)
				sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
			}
			dp := sum.DataPoints().AppendEmpty()
			a := dp.Attributes()
			a.EnsureCapacity(room)
			a.PutStr(semconv.VerdictCause, p.attrs[0])
			a.PutStr(semconv.NetworkConnectionType, p.attrs[1])
			if p.attrs[2] != "" {
				a.PutStr(semconv.AppInstallationID, p.attrs[2])
			}
			dp.SetIntValue(p.count)
			dp.SetStartTimestamp(ts)
			dp.SetTimestamp(ts)
		}
	}
}
