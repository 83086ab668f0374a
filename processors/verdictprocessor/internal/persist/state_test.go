package persist

import (
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"testing"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/internal/leaf/idring"
	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
)

// memClient is a storage client in memory, with a switch to fail batches.
type memClient struct {
	kv   map[string][]byte
	fail bool
}

func newMem() *memClient { return &memClient{kv: map[string][]byte{}} }

func (m *memClient) Get(_ context.Context, k string) ([]byte, error) { return m.kv[k], nil }
func (m *memClient) Set(_ context.Context, k string, v []byte) error { m.kv[k] = v; return nil }
func (m *memClient) Delete(_ context.Context, k string) error        { delete(m.kv, k); return nil }
func (m *memClient) Close(context.Context) error                     { return nil }

func (m *memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	if m.fail {
		return errors.New("disk full")
	}
	for _, op := range ops {
		switch op.Type {
		case storage.Set:
			m.kv[op.Key] = op.Value
		case storage.Delete:
			delete(m.kv, op.Key)
		case storage.Get:
			op.Value = m.kv[op.Key]
		}
	}
	return nil
}

func (m *memClient) Walk(ctx context.Context, fn storage.WalkFunc) error {
	var ops []*storage.Operation
	for _, k := range sortedKeys(m.kv) {
		more, err := fn(k, m.kv[k])
		if err != nil {
			return err
		}
		ops = append(ops, more...)
	}
	return m.Batch(ctx, ops...)
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func id(n byte) pcommon.TraceID { return pcommon.TraceID{0xAA, n} }

// open starts a store with persistence over client, as the processor does.
func open(t *testing.T, client *memClient, ring int) (*pending.Store, *State, Restored) {
	t.Helper()
	s := pending.New(ring, nil)
	st, r, err := Open(context.Background(), client, s.DecidedRing())
	if err != nil {
		t.Fatal(err)
	}
	s.ReportTo(st)
	for _, e := range r.Traces {
		s.Restore(e, time.Unix(100, 0))
	}
	return s, st, r
}

func commit(t *testing.T, st *State) {
	t.Helper()
	if err := st.Write(context.Background(), st.Prepare()); err != nil {
		t.Fatal(err)
	}
}

func storedTraces(t *testing.T, client *memClient) map[pcommon.TraceID]bool {
	t.Helper()
	out := map[pcommon.TraceID]bool{}
	for k, v := range client.kv {
		if k[0] == keyTrace {
			e := &pending.Entry{}
			if _, err := decodeTrace(v, &e.Trace); err != nil {
				t.Fatal(err)
			}
			out[e.ID] = true
		}
	}
	return out
}

// TestEvictedStaysStoredUntilReleased: a trace taken out of memory
// (evicted at max_pending, its verdict on its way) keeps its stored form,
// even one never committed before the eviction; only its release deletes
// it.
func TestEvictedStaysStoredUntilReleased(t *testing.T) {
	client := newMem()
	s, st, _ := open(t, client, 8)
	e := s.Add(id(1), time.Unix(1, 0))
	e.Turn = sampleTrace().Turn
	s.Changed(e)
	s.Evict(e) // before its first commit
	commit(t, st)
	if !storedTraces(t, client)[id(1)] {
		t.Fatal("a trace evicted before its first commit was never stored")
	}
	s.Release(e)
	s.MarkDecided(e.ID)
	commit(t, st)
	if storedTraces(t, client)[id(1)] {
		t.Fatal("a released trace is still stored")
	}
	_, _, r := open(t, client, 8)
	if len(r.Traces) != 0 {
		t.Fatalf("%d traces restored after the release", len(r.Traces))
	}
	s2, _, _ := open(t, client, 8)
	if !s2.Decided(id(1)) {
		t.Fatal("the decided ring lost the released trace")
	}
}

// TestFailedCommitIsWrittenAgain: a commit that fails leaves every change
// marked, so the next one stores the state as it is then; a trace
// released in between is not written back.
func TestFailedCommitIsWrittenAgain(t *testing.T) {
	client := newMem()
	s, st, _ := open(t, client, 8)
	a, b := s.Add(id(1), time.Unix(1, 0)), s.Add(id(2), time.Unix(1, 0))
	s.Changed(a)
	s.Changed(b)
	client.fail = true
	batch := st.Prepare()
	if err := st.Write(context.Background(), batch); err == nil {
		t.Fatal("the failing client accepted the batch")
	}
	st.Failed(batch)
	s.Release(b)
	client.fail = false
	commit(t, st)
	got := storedTraces(t, client)
	if !got[id(1)] || got[id(2)] {
		t.Fatalf("stored %v after the retry, want trace 1 only", got)
	}
}

// TestCorruptRingIndexIsDiscarded: a stored index of the decided ring that
// cannot be right (a next slot past the size, a size no configuration
// could give) is discarded, never a panic or a runaway loop.
func TestCorruptRingIndexIsDiscarded(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size, next uint64
	}{
		{"next past the size", 1, 1<<64 - 1},
		{"a huge size", 1 << 40, 0},
		{"no size", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := newMem()
			e := compact.Encoder{}
			e.Uint(tc.size)
			e.Uint(tc.next)
			e.Bool(true)
			client.kv[keyMeta] = e.B
			client.kv[chunkKey(0)] = make([]byte, 16*decidedChunk)
			ring := idring.New[pcommon.TraceID](100)
			_, r, err := Open(context.Background(), client, ring)
			if err != nil {
				t.Fatal(err)
			}
			if ring.Len() != 0 || !r.RingDiscarded {
				t.Fatalf("%d decided IDs restored from a corrupt index (discarded: %v)", ring.Len(), r.RingDiscarded)
			}
		})
	}
}

// TestStoredRingResized: decided IDs stored with one ring size are read
// back into another, the newest kept.
func TestStoredRingResized(t *testing.T) {
	client := newMem()
	s, st, _ := open(t, client, 200)
	for i := range 200 {
		var tid pcommon.TraceID
		binary.BigEndian.PutUint64(tid[8:], uint64(i)+1)
		s.MarkDecided(tid)
	}
	commit(t, st)
	s2, _, _ := open(t, client, 70)
	if n := s2.DecidedRing().Len(); n != 70 {
		t.Fatalf("%d decided IDs restored into a ring of 70", n)
	}
	for i := range 200 {
		var tid pcommon.TraceID
		binary.BigEndian.PutUint64(tid[8:], uint64(i)+1)
		if want := i >= 130; s2.Decided(tid) != want {
			t.Fatalf("trace %d restored %v, want %v (the newest 70 kept)", i, !want, want)
		}
	}
}

// TestUnreadableValuesDropped: a value of a layout this build cannot read
// is dropped and counted, the rest restored.
func TestUnreadableValuesDropped(t *testing.T) {
	client := newMem()
	s, st, _ := open(t, client, 8)
	e := s.Add(id(1), time.Unix(1, 0))
	s.Changed(e)
	commit(t, st)
	client.kv[traceKey(99)] = []byte{200, 1, 2}
	client.kv["zz"] = []byte("other")
	_, _, r := open(t, client, 8)
	if len(r.Traces) != 1 || r.Unreadable != 2 {
		t.Fatalf("restored %d traces, %d unreadable; want 1 and 2", len(r.Traces), r.Unreadable)
	}
	if _, ok := client.kv[traceKey(99)]; ok {
		t.Fatal("an unreadable value was left stored")
	}
}
