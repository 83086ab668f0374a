// Package changelog keeps what a processor must hand over with a Kafka
// partition in a changelog topic beside it, as Kafka Streams does: one
// record a key, on the partition number its input came from, the latest
// value winning and an empty one forgetting the key. Whoever takes the
// partition over reads it back (Read) before it decides the partition's
// next records.
//
// The changelog owns its dirty set, its producer and its reads; its owner
// names keys and gives values, and never sees a record. What it marks
// (Mark) is written by the next Prepare and Write, which the owner runs
// beside its own commit: a failed write marks its keys again (Failed).
//
// A new owner writes a fence once it has read a partition back (Fence):
// a record of no content whose only effect is to move the partition's
// end. An owner that lost the partition and lives sees that end pass what
// it read and wrote there itself (Moved), and lets go of what it held.
package changelog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config is where the changelog is kept.
type Config struct {
	// Brokers are the Kafka brokers (host:port).
	Brokers []string `mapstructure:"brokers"`
	// Topic is the changelog topic: as many partitions as the input topic,
	// compacted (cleanup.policy=compact).
	Topic string `mapstructure:"topic"`
	// Input is the topic the owner reads its records from (the spans or
	// the turns topic). With it, the owner writes a heartbeat, a record of
	// no content, on each of the input's partitions every Heartbeat: a
	// partition that moved after its last record still gets one, and
	// whoever owns it reads back what the last owner held there and
	// decides it (a gateway killed at the last turn of a trip). Empty:
	// what a partition held waits for the partition's next record.
	Input string `mapstructure:"input_topic"`
	// Heartbeat is how often the heartbeats are written; 0 is
	// DefaultHeartbeat.
	Heartbeat time.Duration `mapstructure:"heartbeat"`
}

// DefaultHeartbeat is how often an owner writes its heartbeats when
// Heartbeat is not set: what a moved partition held is decided at most
// this long after the move, plus the group's rebalance
// (docs/decisions/0318-a-heartbeat-on-every-partition.md).
const DefaultHeartbeat = 5 * time.Second

// HeartbeatHeader names a heartbeat record, for a person reading the
// input topic; a consumer reads the record as no data.
const HeartbeatHeader = "percause.heartbeat"

// HeartbeatEvery is Heartbeat, or DefaultHeartbeat when it is not set.
func (c *Config) HeartbeatEvery() time.Duration {
	if c.Heartbeat > 0 {
		return c.Heartbeat
	}
	return DefaultHeartbeat
}

// Errors Validate wraps.
var (
	ErrNoBrokers = errors.New("changelog: brokers must name at least one broker")
	ErrNoTopic   = errors.New("changelog: topic must be set")
	ErrHeartbeat = errors.New("changelog: heartbeat must not be negative")
)

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs error
	if len(c.Brokers) == 0 {
		errs = errors.Join(errs, ErrNoBrokers)
	}
	if c.Topic == "" {
		errs = errors.Join(errs, ErrNoTopic)
	}
	if c.Heartbeat < 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: %s", ErrHeartbeat, c.Heartbeat))
	}
	return errs
}

// writeTimeout bounds one Write: a broker that does not answer refuses
// the commit it runs beside, which is retried, rather than holding it.
const writeTimeout = 10 * time.Second

// readTimeout bounds one Read.
const readTimeout = 60 * time.Second

// quietEnd is how long a Read that has read something polls for more
// before it takes the partition as read.
const quietEnd = 2 * time.Second

// slot is one key of one partition.
type slot struct {
	partition int32
	key       string
}

// Log is a changelog topic. Mark, Prepare and Failed run under the
// owner's lock; Write and Read outside it.
type Log struct {
	cfg   Config
	cl    *kgo.Client
	dirty map[slot]struct{}
	// io is held across each write and each look at the ends, so an end
	// is never compared with known while this owner's own write is on its
	// way.
	io sync.Mutex
	// known is, for each partition this owner read or wrote, the end it
	// knows of: what it read to, or past its own last record. An end past
	// it is another owner's writing (Moved). Under io.
	known map[int32]int64
}

// Open connects a producer to the changelog (each record acknowledged by
// every in-sync replica, idempotent, placed on the partition its key was
// marked on).
func Open(cfg Config, clientID string) (*Log, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(clientID),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
	)
	if err != nil {
		return nil, fmt.Errorf("changelog %s: %w", cfg.Topic, err)
	}
	return &Log{cfg: cfg, cl: cl, dirty: map[slot]struct{}{}, known: map[int32]int64{}}, nil
}

// Close lets the producer go.
func (l *Log) Close() { l.cl.Close() }

// Topic is the changelog's topic.
func (l *Log) Topic() string { return l.cfg.Topic }

// Mark says key of partition changed: the next Prepare writes its value.
func (l *Log) Mark(partition int32, key string) {
	l.dirty[slot{partition, key}] = struct{}{}
}

// Forget drops the marks of the partitions in gone: another owner has
// them now, and a write there would read to it as a takeover.
func (l *Log) Forget(gone map[int32]bool) {
	for s := range l.dirty {
		if gone[s.partition] {
			delete(l.dirty, s)
		}
	}
}

// Dirty is how many keys wait for a write.
func (l *Log) Dirty() int { return len(l.dirty) }

// Batch is what one Write sends.
type Batch struct {
	records []*kgo.Record
	slots   []slot
}

// Len is how many records the batch holds.
func (b Batch) Len() int { return len(b.records) }

// Prepare takes the dirty set: each key's value as value gives it now (nil
// forgets the key).
func (l *Log) Prepare(value func(key string) []byte) Batch {
	var b Batch
	for s := range l.dirty {
		b.records = append(b.records, &kgo.Record{Topic: l.cfg.Topic, Partition: s.partition, Key: []byte(s.key), Value: value(s.key)})
		b.slots = append(b.slots, s)
	}
	clear(l.dirty)
	return b
}

// Write produces the batch and waits until every record is acknowledged.
func (l *Log) Write(ctx context.Context, b Batch) error {
	if b.Len() == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	l.io.Lock()
	defer l.io.Unlock()
	if err := l.cl.ProduceSync(ctx, b.records...).FirstErr(); err != nil {
		return fmt.Errorf("changelog %s: %w", l.cfg.Topic, err)
	}
	for _, r := range b.records {
		l.known[r.Partition] = max(l.known[r.Partition], r.Offset+1)
	}
	return nil
}

// fenceKey is the key of the record a new owner writes when it takes a
// partition over: it holds nothing (an owner reads it as nothing), and it
// moves the partition's end, which tells the last owner, if it lives,
// that the partition moved (Moved).
const fenceKey = "~"

// Fence writes the takeover's record on partition.
func (l *Log) Fence(ctx context.Context, partition int32, owner string) error {
	b := Batch{records: []*kgo.Record{{Topic: l.cfg.Topic, Partition: partition, Key: []byte(fenceKey), Value: []byte(owner)}}}
	return l.Write(ctx, b)
}

// Moved reports, of the partitions given, those whose end is past the end
// this owner knows of: another owner wrote there since, so it took the
// partition over.
func (l *Log) Moved(ctx context.Context, partitions []int32) ([]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	l.io.Lock()
	defer l.io.Unlock()
	ends, err := kadm.NewClient(l.cl).ListEndOffsets(ctx, l.cfg.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("changelog %s: the ends of its partitions: %w", l.cfg.Topic, err)
	}
	var moved []int32
	for _, p := range partitions {
		known, ok := l.known[p]
		if end, found := ends.Lookup(l.cfg.Topic, p); ok && found && end.Offset > known {
			moved = append(moved, p)
			delete(l.known, p)
		}
	}
	return moved, nil
}

// Heartbeat writes a record of no content on each partition of the input
// topic and returns how many it wrote; without an input topic it writes
// none.
func (l *Log) Heartbeat(ctx context.Context) (int, error) {
	if l.cfg.Input == "" {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	topics, err := kadm.NewClient(l.cl).ListTopics(ctx, l.cfg.Input)
	if err == nil {
		err = topics.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("heartbeat on %s: its partitions: %w", l.cfg.Input, err)
	}
	parts := topics[l.cfg.Input].Partitions.Numbers()
	records := make([]*kgo.Record, len(parts))
	for i, p := range parts {
		records[i] = &kgo.Record{Topic: l.cfg.Input, Partition: p, Value: []byte{},
			Headers: []kgo.RecordHeader{{Key: HeartbeatHeader}}}
	}
	if err := l.cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return 0, fmt.Errorf("heartbeat on %s: %w", l.cfg.Input, err)
	}
	return len(records), nil
}

// Failed marks a batch whose Write failed dirty again.
func (l *Log) Failed(b Batch) {
	for _, s := range b.slots {
		l.dirty[s] = struct{}{}
	}
}

// Read reads partition from its start to its end as it stands now: each
// key's latest value, a key whose latest value is empty left out.
func (l *Log) Read(ctx context.Context, partition int32) (map[string][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	l.io.Lock()
	ends, err := kadm.NewClient(l.cl).ListEndOffsets(ctx, l.cfg.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		l.io.Unlock()
		return nil, fmt.Errorf("changelog %s: the end of partition %d: %w", l.cfg.Topic, partition, err)
	}
	end, ok := ends.Lookup(l.cfg.Topic, partition)
	if !ok {
		l.io.Unlock()
		return nil, fmt.Errorf("changelog %s has no partition %d", l.cfg.Topic, partition)
	}
	l.known[partition] = max(l.known[partition], end.Offset)
	l.io.Unlock()
	out := map[string][]byte{}
	if end.Offset <= 0 {
		return out, nil
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(l.cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{l.cfg.Topic: {partition: kgo.NewOffset().AtStart()}}),
	)
	if err != nil {
		return nil, fmt.Errorf("changelog %s: %w", l.cfg.Topic, err)
	}
	defer cl.Close()
	read := false
	for {
		// A tail compacted away (a tombstone past its retention) never
		// arrives: once something was read, a quiet poll is the end.
		pctx, pcancel := context.WithTimeout(ctx, quietEnd)
		fs := cl.PollFetches(pctx)
		pcancel()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("changelog %s: reading partition %d to offset %d: %w", l.cfg.Topic, partition, end.Offset, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = errors.Join(ferr, err)
			}
		})
		if ferr != nil {
			return nil, fmt.Errorf("changelog %s: reading partition %d: %w", l.cfg.Topic, partition, ferr)
		}
		done, got := false, false
		fs.EachRecord(func(r *kgo.Record) {
			got = true
			if r.Offset >= end.Offset {
				done = true
				return
			}
			switch {
			case string(r.Key) == fenceKey:
			case len(r.Value) == 0:
				delete(out, string(r.Key))
			default:
				out[string(r.Key)] = r.Value
			}
			if r.Offset == end.Offset-1 {
				done = true
			}
		})
		if done || (read && !got) {
			return out, nil
		}
		read = read || got
	}
}
