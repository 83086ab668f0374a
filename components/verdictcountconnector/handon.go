package verdictcountconnector

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
)

// The counts of stored verdicts (with storage) wait to be handed on
// together: every delivery into the counters' pipeline pays that
// pipeline's whole way (the exporter helper's telemetry and timeout, the
// Prometheus exporter's copy of each point and of the resource it holds on
// to) however few points it carries, and with a verdict or two per commit
// that way cost more than the verdict processor's own work on the turn
// (docs/decisions/0244-counts-handed-on-together.md gives the figures).
// What waits is only what is already remembered as counted, so a count
// is still never seen before its verdict is stored; a crash loses at most
// flush_interval of increments, the same as it loses every increment not
// yet scraped.

// resourceCounts are the counts under one resource (a verdict's, or the
// attributes of it the counts keep): its points, all stamped ts.
type resourceCounts struct {
	res    pcommon.Resource
	points []point
	ts     pcommon.Timestamp
}

// committedCounts holds counts whose verdicts are stored, summed by
// resource and series, until they are handed on: at once with an interval
// of 0, else in one delivery an interval after the first of them came.
type committedCounts struct {
	every  time.Duration
	handOn func(context.Context, pmetric.Metrics) error
	// logger says what the counters' pipeline refused (nothing in the
	// configurations here refuses: the Prometheus exporter).
	logger *zap.Logger

	mu      sync.Mutex
	waiting []waitingResource
	byKey   map[string]int // appendResourceKey's key → index in waiting
	key     []byte         // the key being looked up
	timer   *time.Timer    // armed while counts wait
	// spare are the series indexes of resources handed on, emptied, for
	// the next interval's resources: an index grows to the series of its
	// interval, and making it again every interval allocated several
	// times what reusing it does (docs/performance.md).
	spare   []map[seriesKey]int
	stopped bool // after stop: counts are handed on at once
}

// waitingResource is one resource's counts waiting, with the index of its
// points by series (a resource may carry the counts of every launch and
// installation within the interval: hundreds of series).
type waitingResource struct {
	resourceCounts
	series map[seriesKey]int
}

// seriesKey is a point's series within its resource.
type seriesKey struct {
	metric string
	attrs  [3]string
}

func newCommittedCounts(every time.Duration, handOn func(context.Context, pmetric.Metrics) error, logger *zap.Logger) *committedCounts {
	return &committedCounts{every: every, handOn: handOn, logger: logger, byKey: map[string]int{}}
}

// add takes the counts of verdicts just stored; their resources become
// its own.
func (c *committedCounts) add(rcs []resourceCounts) {
	c.mu.Lock()
	if c.every <= 0 || c.stopped {
		c.mu.Unlock()
		c.deliver(rcs)
		return
	}
	for _, rc := range rcs {
		c.key = appendResourceKey(c.key[:0], rc.res, rc.ts)
		i, ok := c.byKey[string(c.key)] // looked up without a copy
		if !ok {
			i = len(c.waiting)
			c.byKey[string(c.key)] = i
			c.waiting = append(c.waiting, waitingResource{resourceCounts{res: rc.res, ts: rc.ts}, c.spareSeriesLocked()})
		}
		w := &c.waiting[i]
		for _, p := range rc.points {
			k := seriesKey{p.metric, p.attrs}
			if j, ok := w.series[k]; ok {
				w.points[j].count += p.count
				continue
			}
			w.series[k] = len(w.points)
			w.points = append(w.points, p)
		}
	}
	if c.timer == nil && len(c.waiting) > 0 {
		c.timer = time.AfterFunc(c.every, c.flush)
	}
	c.mu.Unlock()
}

// flush hands on every count waiting.
func (c *committedCounts) flush() {
	c.mu.Lock()
	waiting := c.waiting
	c.waiting = nil
	clear(c.byKey)
	for i := range waiting {
		clear(waiting[i].series)
		c.spare = append(c.spare, waiting[i].series)
	}
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.mu.Unlock()
	rcs := make([]resourceCounts, len(waiting))
	for i := range waiting {
		rcs[i] = waiting[i].resourceCounts
	}
	c.deliver(rcs)
}

// spareSeriesLocked is an empty series index, one handed on before if
// there is one.
func (c *committedCounts) spareSeriesLocked() map[seriesKey]int {
	n := len(c.spare)
	if n == 0 {
		return map[seriesKey]int{}
	}
	m := c.spare[n-1]
	c.spare = c.spare[:n-1]
	return m
}

// stop hands on what waits; counts stored after it go on at once (closing
// the storage client, right after, commits what it staged).
func (c *committedCounts) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.flush()
}

func (c *committedCounts) deliver(rcs []resourceCounts) {
	if len(rcs) == 0 {
		return
	}
	md, n := metricsOf(rcs)
	if err := c.handOn(context.Background(), md); err != nil {
		c.logger.Error("verdict count connector: counts stored but refused downstream", zap.Int("points", n), zap.Error(err))
	}
}

// appendResourceKey appends what tells resources apart: the points' time
// (one verdict processor stamps every point with its epoch) and the
// attributes in order.
func appendResourceKey(b []byte, res pcommon.Resource, ts pcommon.Timestamp) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(ts))
	res.Attributes().Range(func(k string, v pcommon.Value) bool {
		b = append(b, k...)
		b = append(b, 0, byte(v.Type()))
		b = append(b, v.AsString()...)
		b = append(b, 0)
		return true
	})
	return b
}
