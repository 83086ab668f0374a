package verdictprocessor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/changelog"
)

// The handover (launches.changelog): a decide gateway reading its turns
// from a Kafka topic, keyed by launch, keeps each launch (its recent turns
// and which of them were decided) in a changelog topic, on the partition
// number its turns come on, beside each commit. A gateway that takes a
// partition over (a rebalance, a gateway killed, added or stopped) reads
// the partition's changelog back before it decides the partition's next
// turn: the launches' history follows the partition, and a turn read
// again after the move is decided once, its trace among the decided
// (docs/decisions/0317-launches-follow-their-partition-through-a-changelog.md).
//
// The Kafka receiver names each record's partition and offset in its
// client metadata; a record of a partition this processor has not read
// since it started, or whose offset skips past the last one it read
// (another gateway read those), is a takeover.

// The Kafka receiver's client metadata keys.
const (
	metaKafkaPartition = "kafka.partition"
	metaKafkaOffset    = "kafka.offset"
)

type handover struct {
	log *changelog.Log
	// takeovers serializes the reads back: a partition is read once.
	takeovers sync.Mutex
	// Under the processor's lock:
	// last is the offset of the last record read of each partition.
	last map[int32]int64
	// partitionOf is the partition each kept launch's turns come on.
	partitionOf map[launches.Key]int32
	// marked are the launches marked since the last write, by their
	// changelog key.
	marked map[string]launches.Key
}

// openHandover connects the changelog's producer (Start, after storage).
func (p *verdictProcessor) openHandover() error {
	l, err := changelog.Open(*p.cfg.Launches.Changelog, "percause-"+p.id.String())
	if err != nil {
		return fmt.Errorf("verdict processor: %w", err)
	}
	p.handover = &handover{log: l, last: map[int32]int64{}, partitionOf: map[launches.Key]int32{}, marked: map[string]launches.Key{}}
	p.launches.ReportTo(handoverChanges{Changes: p.state, p: p})
	return nil
}

// changelogKey is a launch's record key: its two IDs quoted, so no two
// launches share one.
func changelogKey(k launches.Key) string {
	return strconv.Quote(k.Installation) + "/" + strconv.Quote(k.Instance)
}

// markLocked says launch k changed: the next commit writes it, on the
// partition its turns come on (a launch whose turns came from no
// partition, before this processor read Kafka, is not written).
func (h *handover) markLocked(k launches.Key) {
	part, ok := h.partitionOf[k]
	if !ok {
		return
	}
	key := changelogKey(k)
	h.marked[key] = k
	h.log.Mark(part, key)
}

// handoverChanges hears what the launches book tells storage, and marks
// it for the changelog too.
type handoverChanges struct {
	launches.Changes
	p *verdictProcessor
}

func (c handoverChanges) LaunchChanged(l *launches.Launch) {
	c.Changes.LaunchChanged(l)
	c.p.handover.markLocked(l.Key)
}

func (c handoverChanges) LaunchForgotten(k launches.Key) {
	c.Changes.LaunchForgotten(k)
	c.p.handover.markLocked(k) // written empty: the book no longer has it
	delete(c.p.handover.partitionOf, k)
}

// decidedForHandoverLocked marks the launch of a trace whose decision was accepted:
// the changelog says which of its turns were decided.
func (p *verdictProcessor) decidedForHandoverLocked(k launches.Key) {
	if p.handover != nil {
		p.handover.markLocked(k)
	}
}

// prepareLocked takes the launches marked for the changelog, each
// encoded as it stands, with which of its kept turns were decided.
func (h *handover) prepareLocked(p *verdictProcessor) changelog.Batch {
	b := h.log.Prepare(func(key string) []byte {
		k := h.marked[key]
		l := p.launches.Get(k)
		if l == nil {
			return nil
		}
		return encodeHandover(l, p.held.Decided)
	})
	clear(h.marked)
	return b
}

// writeChangelog writes what the commit's changelog batch holds; on a
// failure its launches are marked again, and the commit fails with it.
func (p *verdictProcessor) writeChangelog(ctx context.Context, b changelog.Batch) error {
	err := p.handover.log.Write(ctx, b)
	if err == nil {
		return nil
	}
	p.mu.Lock()
	p.handover.log.Failed(b)
	p.mu.Unlock()
	return fmt.Errorf("verdict processor: writing the launches' changelog: %w", err)
}

// takeOverIfMoved reads a partition's changelog back before the
// processor reads a record of it that another gateway may have read the
// partition's earlier records for, and notes the partition each launch
// of the record comes on. A failed read refuses the record, which the
// receiver sends again.
func (p *verdictProcessor) takeOverIfMoved(ctx context.Context, td ptrace.Traces) error {
	part, off, ok := kafkaRecordOf(ctx)
	if !ok {
		return nil
	}
	h := p.handover
	h.takeovers.Lock()
	defer h.takeovers.Unlock()
	p.mu.Lock()
	last, seen := h.last[part]
	p.mu.Unlock()
	if !seen || off > last+1 {
		if err := p.readBack(ctx, part); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !seen || off > last {
		h.last[part] = off
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		if k, ok := launches.KeyOf(rss.At(i).Resource()); ok {
			h.partitionOf[k] = part
		}
	}
	return nil
}

// readBack reads partition part's changelog and keeps what it says: each
// launch this processor kept less recently than the changelog did, and
// every decided turn.
func (p *verdictProcessor) readBack(ctx context.Context, part int32) error {
	start := time.Now()
	values, err := p.handover.log.Read(ctx, part)
	if err != nil {
		p.logger.Warn("verdict processor: reading a partition's launches back failed; the record is refused for a retry",
			zap.Int32("partition", part), zap.Error(err))
		return fmt.Errorf("verdict processor: taking partition %d over: %w", part, err)
	}
	var taken, decided, bad int
	p.mu.Lock()
	for _, v := range values {
		l, ids, err := decodeHandover(v)
		if err != nil {
			bad++
			continue
		}
		p.handover.partitionOf[l.Key] = part
		if cur := p.launches.Get(l.Key); cur == nil || cur.Seen.Before(l.Seen) {
			if cur == nil {
				p.tel.b.ProcessorVerdictLaunches.Add(1)
			}
			p.launches.Restore(l)
			p.state.LaunchChanged(l)
			taken++
		}
		for _, id := range ids {
			if !p.held.Decided(id) {
				p.held.MarkDecided(id)
				decided++
			}
		}
	}
	p.mu.Unlock()
	fields := []zap.Field{zap.Int32("partition", part), zap.String("changelog", p.handover.log.Topic()),
		zap.Int("launches", len(values)), zap.Int("taken", taken), zap.Int("decided_turns", decided),
		zap.Duration("took", time.Since(start))}
	if bad > 0 {
		p.logger.Warn("verdict processor: launches in the changelog could not be read; their turns are decided without them",
			append(fields, zap.Int("unreadable", bad))...)
	}
	p.logger.Info("verdict processor: took over partition "+strconv.Itoa(int(part)), fields...)
	return nil
}

// kafkaRecordOf is the partition and offset the Kafka receiver named for
// the record a request came from.
func kafkaRecordOf(ctx context.Context) (int32, int64, bool) {
	md := client.FromContext(ctx).Metadata
	ps, os := md.Get(metaKafkaPartition), md.Get(metaKafkaOffset)
	if len(ps) != 1 || len(os) != 1 {
		return 0, 0, false
	}
	part, err1 := strconv.ParseInt(ps[0], 10, 32)
	off, err2 := strconv.ParseInt(os[0], 10, 64)
	if err1 != nil || err2 != nil || part < 0 || off < 0 {
		return 0, 0, false
	}
	return int32(part), off, true
}

// handoverVersion is the changelog value's version.
const handoverVersion = 1

// encodeHandover is a launch's changelog value: the version, the traces
// of its kept turns that were decided, then the launch as storage keeps
// it (launches.Encode).
func encodeHandover(l *launches.Launch, decided func(pcommon.TraceID) bool) []byte {
	e := compact.Encoder{B: make([]byte, 0, 96+48*len(l.Turns))}
	e.B = append(e.B, handoverVersion)
	n := 0
	for i := range l.Turns {
		if decided(l.Turns[i].Trace) {
			n++
		}
	}
	e.Uint(uint64(n))
	for i := range l.Turns {
		if decided(l.Turns[i].Trace) {
			e.B = append(e.B, l.Turns[i].Trace[:]...)
		}
	}
	e.B = append(e.B, launches.Encode(l)...)
	return e.B
}

// errHandoverVersion is a changelog value of a version this build does
// not read.
var errHandoverVersion = errors.New("changelog value of a version this build does not read")

// decodeHandover reads a changelog value.
func decodeHandover(b []byte) (*launches.Launch, []pcommon.TraceID, error) {
	if len(b) == 0 {
		return nil, nil, compact.ErrCorrupt
	}
	if b[0] != handoverVersion {
		return nil, nil, fmt.Errorf("%w: %d", errHandoverVersion, b[0])
	}
	d := compact.Decoder{B: b[1:]}
	n := d.Count(launches.KeptTurns)
	ids := make([]pcommon.TraceID, n)
	for i := range ids {
		copy(ids[i][:], d.Raw(len(ids[i])))
	}
	if d.Err != nil {
		return nil, nil, d.Err
	}
	l, err := launches.Decode(d.B)
	if err != nil {
		return nil, nil, err
	}
	return l, ids, nil
}
