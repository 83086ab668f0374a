package verdictprocessor

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"
)

// Persistence through a storage extension (file_storage), as contrib
// components keep their state: every pending trace under its own key, and
// the ring of decided trace IDs in chunks. A request that leaves a trace
// pending returns only once that trace is stored, so what the receiver
// acknowledged survives a crash; the requests of one moment share one
// storage transaction (group commit), which is what keeps the cost per span
// small under load (docs/decisions/0221-pending-state-in-file-storage.md).

// Storage keys.
const (
	keyTrace   = 'q' // + 8-byte sequence number: a pending trace (encodeTrace; the trace ID is in the value)
	keyDecided = 'd' // + 4-byte chunk number: decidedChunk trace IDs
	keyMeta    = "m" // the decided ring's size, next slot and whether it is full
)

// Storage operations named in the storage_errors counter.
const (
	opRestore = "restore"
	opCommit  = "commit"
	opClose   = "close"
)

// maxStoredRing bounds the decided ring's size a stored index may give (a
// larger one is corrupt: decided_cache_size of this size would be 16 M IDs).
const maxStoredRing = 1 << 24

// commitRetry is how soon a failed commit is tried again when nothing else
// asks for one.
const commitRetry = 100 * time.Millisecond

// traceKey is where a pending trace is stored. Keys are numbered in the
// order traces are first stored, so the traces of one moment share a few
// of bbolt's pages: a commit writes those, not one page per trace.
func traceKey(seq uint64) string {
	var k [9]byte
	k[0] = keyTrace
	binary.BigEndian.PutUint64(k[1:], seq)
	return string(k[:])
}

func chunkKey(n int) string {
	var k [5]byte
	k[0] = keyDecided
	binary.BigEndian.PutUint32(k[1:], uint32(n))
	return string(k[:])
}

// openStorage gets the processor's client from the storage extension the
// config names and reads back what an earlier run left.
func (p *verdictProcessor) openStorage(ctx context.Context, host component.Host) error {
	ext, ok := host.GetExtensions()[*p.cfg.Storage]
	if !ok {
		return fmt.Errorf("verdict processor: storage extension %s is not configured (list it under service.extensions)", p.cfg.Storage)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("verdict processor: extension %s is not a storage extension", p.cfg.Storage)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, p.id, "")
	if err != nil {
		return fmt.Errorf("verdict processor: storage %s: %w", p.cfg.Storage, err)
	}
	if err := p.restore(ctx, client); err != nil {
		_ = client.Close(ctx)
		return err
	}
	p.storage = client
	return nil
}

// restore reads the pending traces and the decided ring an earlier run
// stored. A restored turn waits afresh: the senders whose requests were
// refused while the collector was down send them again now, so its missing
// parts get a whole wait (and decision window) to arrive.
func (p *verdictProcessor) restore(ctx context.Context, client storage.Client) error {
	walker, ok := client.(storage.Walker)
	if !ok {
		return fmt.Errorf("verdict processor: storage %s cannot list what it holds, so it cannot be restored from", p.cfg.Storage)
	}
	now := p.now()
	var (
		restored, bad int64
		meta          []byte
		chunks        = map[int][]byte{}
	)
	err := walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		switch {
		case len(key) == 9 && key[0] == keyTrace:
			seq := binary.BigEndian.Uint64([]byte(key[1:]))
			pt := &pendingTrace{}
			if err := decodeTrace(value, pt); err != nil {
				bad++
				p.logger.Warn("verdict processor: dropping a stored trace it cannot read", zap.Uint64("key", seq), zap.Error(err))
				return []*storage.Operation{storage.DeleteOperation(key)}, nil
			}
			p.nextKey = max(p.nextKey, seq+1)
			if p.store.get(pt.traceID) != nil {
				return []*storage.Operation{storage.DeleteOperation(key)}, nil
			}
			p.store.insert(pt, now)
			pt.storeKey = seq
			if pt.turn != nil {
				pt.turnAt = now
			}
			restored++
		case len(key) == 5 && key[0] == keyDecided:
			chunks[int(binary.BigEndian.Uint32([]byte(key[1:])))] = append([]byte(nil), value...)
		case key == keyMeta:
			meta = append([]byte(nil), value...)
		default:
			// A key of another layout (an earlier build's): not readable.
			bad++
			return []*storage.Operation{storage.DeleteOperation(key)}, nil
		}
		return nil, nil
	})
	if err != nil {
		p.tel.ProcessorVerdictStorageErrors.Add(ctx, 1, p.opAttrs[opRestore])
		return fmt.Errorf("verdict processor: reading storage %s: %w", p.cfg.Storage, err)
	}
	p.restoreDecided(meta, chunks)
	// Past the pending limit (a smaller max_pending than before), the
	// sweep decides the oldest (forced: pending_limit), held until accepted.
	if restored > 0 {
		p.tel.ProcessorVerdictRestored.Add(ctx, restored)
		p.tel.ProcessorVerdictPendingTurns.Add(ctx, restored)
		p.logger.Info("verdict processor: restored pending turns from storage", zap.Int64("traces", restored), zap.Int("decided_ids", p.decided.Len()))
	}
	if bad > 0 {
		p.tel.ProcessorVerdictStorageErrors.Add(ctx, bad, p.opAttrs[opRestore])
	}
	return nil
}

// restoreDecided rebuilds the ring of decided IDs, oldest first, into a
// ring of the configured size (the newest kept when it is smaller now).
func (p *verdictProcessor) restoreDecided(meta []byte, chunks map[int][]byte) {
	p.decided.track()
	d := decoder{b: meta}
	size64, next64, full := d.uint(), d.uint(), d.bool()
	if d.err != nil || size64 == 0 || size64 > maxStoredRing || next64 >= size64 {
		if len(chunks) > 0 || len(meta) > 0 {
			p.logger.Warn("verdict processor: the stored decided IDs have no valid index; starting without them")
		}
		for n := range chunks {
			p.decided.dirty[n] = struct{}{} // rewritten (or deleted) by the first commit
		}
		return
	}
	size, next := int(size64), int(next64)
	slot := func(i int) (pcommon.TraceID, bool) {
		var id pcommon.TraceID
		c := chunks[i/decidedChunk]
		off := (i % decidedChunk) * len(id)
		if off+len(id) > len(c) {
			return id, false
		}
		copy(id[:], c[off:])
		return id, !id.IsEmpty()
	}
	// Oldest first: from next to the end when the ring was full, then
	// from the start to next.
	visit := func(from, to int) {
		for i := from; i < to; i++ {
			if _, ok := chunks[i/decidedChunk]; !ok {
				i += decidedChunk - i%decidedChunk - 1 // a chunk never stored: skip it
				continue
			}
			if id, ok := slot(i); ok {
				p.decided.add(id)
			}
		}
	}
	if full {
		visit(next, size)
	}
	visit(0, next)
	if size == p.decided.Size() {
		clear(p.decided.dirty) // stored as it is
		return
	}
	// Another size: every chunk is rewritten, the ones beyond it deleted.
	for n := range chunks {
		p.decided.dirty[n] = struct{}{}
	}
	for n := 0; n*decidedChunk < p.decided.Size(); n++ {
		p.decided.dirty[n] = struct{}{}
	}
}

// markLocked records that a trace's stored form must change.
func (p *verdictProcessor) markLocked(id pcommon.TraceID) {
	if p.storage != nil {
		p.dirty[id] = struct{}{}
	}
}

// commit stores every change marked since the previous commit in one
// transaction. On failure the changes stay marked, for the next cycle.
func (p *verdictProcessor) commit(ctx context.Context) error {
	p.mu.Lock()
	if len(p.dirty) == 0 && len(p.decided.dirty) == 0 && len(p.deletes) == 0 {
		p.mu.Unlock()
		return nil
	}
	ops := make([]*storage.Operation, 0, len(p.dirty)+len(p.deletes)+len(p.decided.dirty)+1)
	ids := make([]pcommon.TraceID, 0, len(p.dirty))
	for id := range p.dirty {
		pt := p.store.get(id)
		if pt == nil {
			continue // removed since: its key, if it had one, is in deletes
		}
		ids = append(ids, id)
		if pt.storeKey == 0 {
			pt.storeKey = p.nextKey
			p.nextKey++
		}
		ops = append(ops, storage.SetOperation(traceKey(pt.storeKey), encodeTrace(nil, pt)))
	}
	clear(p.dirty)
	deletes := p.deletes
	p.deletes = nil
	for _, k := range deletes {
		ops = append(ops, storage.DeleteOperation(traceKey(k)))
	}
	chunks := make([]int, 0, len(p.decided.dirty))
	ringChunks := (p.decided.Size() + decidedChunk - 1) / decidedChunk
	for n := range p.decided.dirty {
		chunks = append(chunks, n)
		if n >= ringChunks {
			ops = append(ops, storage.DeleteOperation(chunkKey(n)))
			continue
		}
		lo, hi := n*decidedChunk, min((n+1)*decidedChunk, p.decided.Size())
		v := make([]byte, 0, (hi-lo)*len(pcommon.TraceID{}))
		for _, id := range p.decided.Slots()[lo:hi] {
			v = append(v, id[:]...)
		}
		ops = append(ops, storage.SetOperation(chunkKey(n), v))
	}
	if len(chunks) > 0 {
		e := encoder{}
		e.uint(uint64(p.decided.Size()))
		e.uint(uint64(p.decided.Next()))
		e.bool(p.decided.Full())
		ops = append(ops, storage.SetOperation(keyMeta, e.b))
	}
	clear(p.decided.dirty)
	p.mu.Unlock()

	err := p.storage.Batch(ctx, ops...)
	if err == nil {
		return nil
	}
	// Mark it all again: the next commit stores the state as it is then.
	p.mu.Lock()
	for _, id := range ids {
		p.dirty[id] = struct{}{}
	}
	for _, n := range chunks {
		p.decided.dirty[n] = struct{}{}
	}
	p.deletes = append(p.deletes, deletes...)
	p.mu.Unlock()
	p.tel.ProcessorVerdictStorageErrors.Add(ctx, 1, p.opAttrs[opCommit])
	if p.storageErrLog.Allow() {
		p.logger.Error("verdict processor: storing pending turns failed; the requests that needed it are refused for a retry",
			zap.Int("operations", len(ops)), zap.Error(err))
	}
	time.AfterFunc(commitRetry, p.poke)
	return fmt.Errorf("verdict processor: storing the pending turns: %w", err)
}

// closeStorage closes the storage client (the last cycle has stored the
// last changes). The client stays referenced: nothing commits after the
// last cycle.
func (p *verdictProcessor) closeStorage(ctx context.Context) error {
	if p.storage == nil || p.storageClosed {
		return nil
	}
	p.storageClosed = true
	err := p.storage.Close(ctx)
	if err != nil {
		p.tel.ProcessorVerdictStorageErrors.Add(ctx, 1, p.opAttrs[opClose])
	}
	return err
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
