package verdictcountconnector

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The counted verdict span IDs, kept through a storage extension, so a
// verdict decided again after a restart (its counts were made, the
// processor's record of it was not yet stored) is not counted again.
// Each commit stores the IDs one delivery counted under a key of their own
// ('c' + a sequence number), oldest deleted once more than recent are
// kept; the counts of a delivery go downstream only once the commit that
// stores its IDs is done, so nothing counted is ever seen before it is
// remembered (docs/decisions/0225-verdicts-counted-once.md).

const keyCounted = 'c'

// maxStoredBatch bounds the IDs a stored value may hold (a larger one is
// corrupt).
const maxStoredBatch = 1 << 20

func countedKey(seq uint64) string {
	var k [9]byte
	k[0] = keyCounted
	binary.BigEndian.PutUint64(k[1:], seq)
	return string(k[:])
}

// stager is a storage client that adds operations to the next commit of
// its storage, shared with other components, without waiting for it (the
// shared_storage extension's clients are).
type stager interface {
	Stage(ops []*storage.Operation, committed func(error))
}

// countedStore is what the connector keeps in storage. Used under the
// connector's lock, except the commit.
type countedStore struct {
	client  storage.Client
	stage   stager // nil: the client commits itself (Batch)
	recent  int
	nextSeq uint64
	// batches are the stored keys, oldest first, with how many IDs each.
	batches []storedBatch
	held    int // IDs the stored batches hold
	// prune holds the keys let go of, deleted by the next commit.
	prune []*storage.Operation
}

type storedBatch struct {
	seq uint64
	n   int
}

// openCounted gets the connector's client from the storage extension id
// names and reads back the IDs an earlier run counted, oldest first.
func openCounted(ctx context.Context, host component.Host, id, self component.ID, recent int) (*countedStore, []pcommon.SpanID, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, nil, fmt.Errorf("storage extension %s is not configured (list it under service.extensions)", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, nil, fmt.Errorf("extension %s is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindConnector, self, "")
	if err != nil {
		return nil, nil, fmt.Errorf("storage %s: %w", id, err)
	}
	s := &countedStore{client: client, recent: recent, nextSeq: 1}
	s.stage, _ = client.(stager)
	ids, err := s.restore(ctx)
	if err != nil {
		_ = client.Close(ctx)
		return nil, nil, fmt.Errorf("storage %s: %w", id, err)
	}
	return s, ids, nil
}

// restore reads the stored batches in the order they were counted.
func (s *countedStore) restore(ctx context.Context) ([]pcommon.SpanID, error) {
	walker, ok := s.client.(storage.Walker)
	if !ok {
		return nil, errors.New("the storage cannot list what it holds, so the counted verdicts cannot be read back")
	}
	type stored struct {
		seq uint64
		ids []pcommon.SpanID
	}
	var all []stored
	err := walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		if len(key) != 9 || key[0] != keyCounted || len(value)%8 != 0 || len(value)/8 > maxStoredBatch {
			return []*storage.Operation{storage.DeleteOperation(key)}, nil
		}
		b := stored{seq: binary.BigEndian.Uint64([]byte(key[1:]))}
		for off := 0; off < len(value); off += 8 {
			b.ids = append(b.ids, pcommon.SpanID(value[off:off+8]))
		}
		all = append(all, b)
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	var ids []pcommon.SpanID
	for _, b := range all {
		s.committed(b.seq, len(b.ids))
		s.nextSeq = max(s.nextSeq, b.seq+1)
		ids = append(ids, b.ids...)
	}
	return ids, nil
}

// opsFor stores ids under a new key, with the deletes of the keys let go
// of since the last commit; it returns the key's sequence number for
// committed.
func (s *countedStore) opsFor(ids []pcommon.SpanID) ([]*storage.Operation, uint64) {
	v := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		v = append(v, id[:]...)
	}
	seq := s.nextSeq
	s.nextSeq++
	ops := append([]*storage.Operation{storage.SetOperation(countedKey(seq), v)}, s.prune...)
	s.prune = nil
	return ops, seq
}

// committed records that key seq holds n IDs, and lets go of the oldest
// keys once the rest still hold recent (the ring remembers recent, so
// keeping more would only be read back to be dropped).
func (s *countedStore) committed(seq uint64, n int) {
	s.batches = append(s.batches, storedBatch{seq: seq, n: n})
	s.held += n
	for len(s.batches) > 1 && s.held-s.batches[0].n >= s.recent {
		s.prune = append(s.prune, storage.DeleteOperation(countedKey(s.batches[0].seq)))
		s.held -= s.batches[0].n
		s.batches = s.batches[1:]
	}
}

// failed puts back the deletes of a commit that failed.
func (s *countedStore) failed(ops []*storage.Operation) {
	for _, op := range ops {
		if op.Type == storage.Delete {
			s.prune = append(s.prune, op)
		}
	}
}

// commit stores ops and calls done with the outcome: joined to the
// storage's next shared commit when it has one (done runs after it, and
// the delivery is accepted now), or committed here (done's answer is the
// delivery's).
func (s *countedStore) commit(ctx context.Context, ops []*storage.Operation, done func(error) error) error {
	if s.stage != nil {
		var once sync.Once
		s.stage.Stage(ops, func(err error) { once.Do(func() { _ = done(err) }) })
		return nil
	}
	return done(s.client.Batch(ctx, ops...))
}

func (s *countedStore) close(ctx context.Context) error { return s.client.Close(ctx) }
