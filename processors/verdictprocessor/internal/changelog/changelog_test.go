package changelog

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func cluster(t *testing.T) (*kfake.Cluster, Config) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "launches"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, Config{Brokers: c.ListenAddrs(), Topic: "launches"}
}

func open(t *testing.T, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// write writes what is marked, each key's value from values.
func write(t *testing.T, l *Log, values map[string]string) error {
	t.Helper()
	b := l.Prepare(func(key string) []byte {
		if v, ok := values[key]; ok && v != "" {
			return []byte(v)
		}
		return nil
	})
	err := l.Write(context.Background(), b)
	if err != nil {
		l.Failed(b)
	}
	return err
}

// TestReadGivesEachKeysLatestValue: a partition read back gives each key
// its latest value, a forgotten key none, and only the keys marked on
// that partition.
func TestReadGivesEachKeysLatestValue(t *testing.T) {
	_, cfg := cluster(t)
	l := open(t, cfg)
	l.Mark(1, "a")
	l.Mark(1, "b")
	l.Mark(2, "c")
	if err := write(t, l, map[string]string{"a": "a1", "b": "b1", "c": "c1"}); err != nil {
		t.Fatal(err)
	}
	l.Mark(1, "a")
	l.Mark(1, "b")
	if err := write(t, l, map[string]string{"a": "a2"}); err != nil { // b forgotten
		t.Fatal(err)
	}
	got, err := open(t, cfg).Read(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["a"]) != "a2" {
		t.Errorf("partition 1 read back as %q, want only a=a2", got)
	}
	got, err = l.Read(context.Background(), 2)
	if err != nil || len(got) != 1 || string(got["c"]) != "c1" {
		t.Errorf("partition 2 read back as %q (%v), want only c=c1", got, err)
	}
	got, err = l.Read(context.Background(), 0)
	if err != nil || len(got) != 0 {
		t.Errorf("the empty partition read back as %q (%v)", got, err)
	}
}

// TestAFailedWriteKeepsItsKeysDirty: a write no broker acknowledges is an
// error, and its keys are written by the next one.
func TestAFailedWriteKeepsItsKeysDirty(t *testing.T) {
	c, cfg := cluster(t)
	l := open(t, cfg)
	l.Mark(0, "a")
	c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := l.Prepare(func(string) []byte { return []byte("v") })
	if err := l.Write(ctx, b); err == nil {
		t.Fatal("a write to a closed cluster succeeded")
	}
	l.Failed(b)
	if l.Dirty() != 1 {
		t.Errorf("%d keys dirty after the failed write, want 1", l.Dirty())
	}
}

func TestValidate(t *testing.T) {
	if err := (&Config{}).Validate(); !errors.Is(err, ErrNoBrokers) || !errors.Is(err, ErrNoTopic) {
		t.Errorf("empty config: %v", err)
	}
	if err := (&Config{Brokers: []string{"b:9092"}, Topic: "t"}).Validate(); err != nil {
		t.Error(err)
	}
	if err := (&Config{Brokers: []string{"b:9092"}, Topic: "t", Heartbeat: -time.Second}).Validate(); !errors.Is(err, ErrHeartbeat) {
		t.Errorf("negative heartbeat: %v", err)
	}
	if got := (&Config{}).HeartbeatEvery(); got != DefaultHeartbeat {
		t.Errorf("heartbeat unset: every %s, want %s", got, DefaultHeartbeat)
	}
}

// BenchmarkReadBack is a takeover's read: one partition holding n
// launches, each one record of the size a launch of 8 kept turns takes
// (about 400 bytes), against the alternative of reading the turns topic's
// records back instead: 4 turns of each launch, 586 bytes each (a joined
// turn of one unit and one take, as the fleet test measures it), without
// even decoding them.
func BenchmarkReadBack(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, shape := range []struct {
			name           string
			perLaunch, len int
		}{{"changelog", 1, 400}, {"turns", 4, 586}} {
			b.Run(fmt.Sprintf("%s/launches=%d", shape.name, n), func(b *testing.B) {
				c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "launches"))
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				l, err := Open(Config{Brokers: c.ListenAddrs(), Topic: "launches"}, "bench")
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				value := make([]byte, shape.len)
				for r := 0; r < shape.perLaunch; r++ {
					for i := 0; i < n; i++ {
						l.Mark(0, fmt.Sprintf("launch-%d-%d", i, r))
					}
					if err := l.Write(context.Background(), l.Prepare(func(string) []byte { return value })); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for b.Loop() {
					got, err := l.Read(context.Background(), 0)
					if err != nil || len(got) != n*shape.perLaunch {
						b.Fatalf("read %d keys (%v)", len(got), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/takeover")
			})
		}
	}
}

// TestMovedSeesAnotherOwnersWriting: an owner's own writes and reads
// never read as a move; another owner's fence does, once.
func TestMovedSeesAnotherOwnersWriting(t *testing.T) {
	_, cfg := cluster(t)
	a, b := open(t, cfg), open(t, cfg)
	if _, err := a.Read(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	a.Mark(1, "k")
	if err := write(t, a, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if moved, err := a.Moved(context.Background(), []int32{1, 2}); err != nil || len(moved) != 0 {
		t.Fatalf("after its own write: moved %v (%v), want none", moved, err)
	}
	got, err := b.Read(context.Background(), 1)
	if err != nil || string(got["k"]) != "v" {
		t.Fatalf("the next owner read %q (%v)", got, err)
	}
	if err := b.Fence(context.Background(), 1, "b"); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Read(context.Background(), 1); err != nil || len(got) != 1 {
		t.Errorf("the fence read back as a key: %q (%v)", got, err)
	}
	if moved, err := a.Moved(context.Background(), []int32{1, 2}); err != nil || len(moved) != 1 || moved[0] != 1 {
		t.Errorf("after the fence: moved %v (%v), want [1]", moved, err)
	}
	if moved, _ := a.Moved(context.Background(), []int32{1}); len(moved) != 0 {
		t.Errorf("a move was told twice: %v", moved)
	}
}

// TestHeartbeatWritesOnEveryInputPartition: a heartbeat is one record of
// no content, named by its header, on each partition of the input topic;
// without an input topic none is written.
func TestHeartbeatWritesOnEveryInputPartition(t *testing.T) {
	c, cfg := cluster(t)
	if n, err := open(t, cfg).Heartbeat(context.Background()); n != 0 || err != nil {
		t.Fatalf("no input topic: %d heartbeats, %v", n, err)
	}
	if err := c.CreateTopic("turns", 4, nil); err != nil {
		t.Fatal(err)
	}
	cfg.Input = "turns"
	n, err := open(t, cfg).Heartbeat(context.Background())
	if err != nil || n != 4 {
		t.Fatalf("%d heartbeats, %v; want 4", n, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.ConsumeTopics("turns"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	parts := map[int32]bool{}
	for len(parts) < 4 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if len(r.Value) != 0 || len(r.Headers) != 1 || r.Headers[0].Key != HeartbeatHeader {
				t.Errorf("partition %d: value %q, headers %v", r.Partition, r.Value, r.Headers)
			}
			if parts[r.Partition] {
				t.Errorf("partition %d: two heartbeats", r.Partition)
			}
			parts[r.Partition] = true
		})
	}
	if len(parts) != 4 {
		t.Errorf("heartbeats read on %d partitions, want 4", len(parts))
	}
}

// BenchmarkHeartbeat is one round of heartbeats on an input topic of 6
// partitions, the fleet test's: what a gateway spends every heartbeat.
func BenchmarkHeartbeat(b *testing.B) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "launches", "turns"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	l, err := Open(Config{Brokers: c.ListenAddrs(), Topic: "launches", Input: "turns"}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if n, err := l.Heartbeat(context.Background()); err != nil || n != 6 {
			b.Fatalf("%d heartbeats, %v", n, err)
		}
	}
}
