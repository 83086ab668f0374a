// Package persist keeps the verdict processor's held traces and decided
// trace IDs, and each launch's recent turns, through a storage extension
// (shared_storage in the configurations here, whose commit also carries
// what the count connector staged; or file_storage), as collector
// components keep their state: it owns the storage keys, the stored forms
// (the codec), what changed since the last commit and the commit itself.
// The processor never sees a key.
//
// It hears what changed from the pending store (State is a
// pending.Changes). The one way a trace leaves storage is Released, which
// the processor calls once the trace's verdict was accepted downstream or
// the trace was dropped: an eviction from memory leaves what is stored
// where it is, so a trace acknowledged to its sender is always either
// stored or delivered (docs/decisions/0227-the-processor-in-layers.md).
package persist

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/internal/leaf/idring"
	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
)

// Storage keys.
const (
	keyTrace   = 'q' // + 8-byte sequence number: a held trace (its ID is in the value)
	keyDecided = 'd' // + 4-byte chunk number: decidedChunk decided trace IDs
	keyMeta    = "m" // the decided ring's size, next slot and whether it is full
	keyLaunch  = 'l' // + 8-byte sequence number: a launch's recent turns (launches.Encode)
)

// decidedChunk is how many ring slots are stored under one key: the ring
// fills in order, so a commit rewrites one or two chunks however many
// turns it decided.
const decidedChunk = 64

// maxStoredRing bounds the decided ring's size a stored index may give (a
// larger one is corrupt: decided_cache_size of this size would be 16 M IDs).
const maxStoredRing = 1 << 24

// traceKey is where a held trace is stored. Keys are numbered in the order
// traces are first stored, so the traces of one moment share a few of
// bbolt's pages: a commit writes those, not one page per trace.
func traceKey(seq uint64) string { return seqKey(keyTrace, seq) }

func launchKey(seq uint64) string { return seqKey(keyLaunch, seq) }

func seqKey(kind byte, seq uint64) string {
	var k [9]byte
	k[0] = kind
	binary.BigEndian.PutUint64(k[1:], seq)
	return string(k[:])
}

func chunkKey(n int) string {
	var k [5]byte
	k[0] = keyDecided
	binary.BigEndian.PutUint32(k[1:], uint32(n))
	return string(k[:])
}

// stored is what State knows of one stored trace.
type stored struct {
	key uint64
	rs  []byte // its turn's resource as stored, encoded once
}

// State is the processor's stored state. It is used under the processor's
// lock, except Write, which runs outside it.
type State struct {
	client storage.Client
	ring   *idring.Ring[pcommon.TraceID]

	keys    map[pcommon.TraceID]*stored
	nextKey uint64
	// changed holds the traces whose stored form must be written, by the
	// entry they are held in (an entry evicted meanwhile is written all the
	// same: its verdict may not be accepted yet).
	changed   map[pcommon.TraceID]*pending.Entry
	deletes   []string
	ringDirty map[int]struct{}

	// The launches' recent turns, by launch: their keys and the launches
	// whose stored form must be written.
	launchKeys      map[launches.Key]uint64
	changedLaunches map[launches.Key]*launches.Launch

	// The orders Prepare walks the changes in, reused commit to commit.
	idOrder     []pcommon.TraceID
	launchOrder []launches.Key
	chunkOrder  []int
}

var (
	_ pending.Changes  = (*State)(nil)
	_ launches.Changes = (*State)(nil)
)

// Restored is what a start read back.
type Restored struct {
	Traces []*pending.Entry
	// Launches are the launches' recent turns.
	Launches []*launches.Launch
	// Unreadable counts stored values that could not be read (dropped).
	Unreadable int
	// RingDiscarded: the decided ring's stored index was invalid.
	RingDiscarded bool
}

// Open reads back what an earlier run stored through client into entries
// and the decided ring (which it fills), and keeps client for the commits.
func Open(ctx context.Context, client storage.Client, ring *idring.Ring[pcommon.TraceID]) (*State, Restored, error) {
	s := &State{client: client, ring: ring, keys: map[pcommon.TraceID]*stored{}, nextKey: 1,
		changed: map[pcommon.TraceID]*pending.Entry{}, ringDirty: map[int]struct{}{},
		launchKeys: map[launches.Key]uint64{}, changedLaunches: map[launches.Key]*launches.Launch{}}
	walker, ok := client.(storage.Walker)
	if !ok {
		return nil, Restored{}, errors.New("the storage cannot list what it holds, so it cannot be restored from")
	}
	var (
		out    Restored
		meta   []byte
		chunks = map[int][]byte{}
	)
	err := walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		switch {
		case len(key) == 9 && key[0] == keyTrace:
			seq := binary.BigEndian.Uint64([]byte(key[1:]))
			s.nextKey = max(s.nextKey, seq+1)
			e := &pending.Entry{}
			rs, err := decodeTrace(value, &e.Trace)
			if err != nil || s.keys[e.ID] != nil {
				if err != nil {
					out.Unreadable++
				}
				return []*storage.Operation{storage.DeleteOperation(key)}, nil
			}
			s.keys[e.ID] = &stored{key: seq, rs: rs}
			out.Traces = append(out.Traces, e)
		case len(key) == 9 && key[0] == keyLaunch:
			seq := binary.BigEndian.Uint64([]byte(key[1:]))
			s.nextKey = max(s.nextKey, seq+1)
			l, err := launches.Decode(value)
			if err != nil || s.launchKeys[l.Key] != 0 {
				if err != nil {
					out.Unreadable++
				}
				return []*storage.Operation{storage.DeleteOperation(key)}, nil
			}
			s.launchKeys[l.Key] = seq
			out.Launches = append(out.Launches, l)
		case len(key) == 5 && key[0] == keyDecided:
			chunks[int(binary.BigEndian.Uint32([]byte(key[1:])))] = append([]byte(nil), value...)
		case key == keyMeta:
			meta = append([]byte(nil), value...)
		default:
			// A key of another layout: not readable.
			out.Unreadable++
			return []*storage.Operation{storage.DeleteOperation(key)}, nil
		}
		return nil, nil
	})
	if err != nil {
		return nil, out, fmt.Errorf("reading what is stored: %w", err)
	}
	out.RingDiscarded = s.restoreRing(meta, chunks)
	return s, out, nil
}

// restoreRing rebuilds the ring of decided IDs, oldest first, into the
// ring of the configured size (the newest kept when it is smaller now). It
// reports whether a stored index was there but invalid.
func (s *State) restoreRing(meta []byte, chunks map[int][]byte) bool {
	d := compact.Decoder{B: meta}
	size64, next64, full := d.Uint(), d.Uint(), d.Bool()
	if d.Err != nil || size64 == 0 || size64 > maxStoredRing || next64 >= size64 {
		for n := range chunks {
			s.ringDirty[n] = struct{}{} // rewritten (or deleted) by the first commit
		}
		return len(chunks) > 0 || len(meta) > 0
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
	// Oldest first: from next to the end when the ring was full, then from
	// the start to next. Added to the ring as they were, not marked
	// changed: they are stored already.
	gaps := false
	visit := func(from, to int) {
		for i := from; i < to; i++ {
			if _, ok := chunks[i/decidedChunk]; !ok {
				i += decidedChunk - i%decidedChunk - 1 // a chunk never stored: skip it
				continue
			}
			if id, ok := slot(i); ok {
				s.ring.Add(id)
			} else {
				gaps = true // an ID undecided (Undecide): the ring closes up
			}
		}
	}
	if full {
		visit(next, size)
	}
	visit(0, next)
	if size == s.ring.Size() && !gaps {
		return false
	}
	// Another size: every chunk is rewritten, the ones beyond it deleted.
	for n := range chunks {
		s.ringDirty[n] = struct{}{}
	}
	for n := 0; n*decidedChunk < s.ring.Size(); n++ {
		s.ringDirty[n] = struct{}{}
	}
	return false
}

// Changed marks a held trace's stored form to be written.
func (s *State) Changed(e *pending.Entry) { s.changed[e.ID] = e }

// Released forgets a trace: its stored form is deleted by the next commit.
func (s *State) Released(id pcommon.TraceID) {
	delete(s.changed, id)
	if st, ok := s.keys[id]; ok {
		s.deletes = append(s.deletes, traceKey(st.key))
		delete(s.keys, id)
	}
}

// LaunchChanged marks a launch's stored form to be written.
func (s *State) LaunchChanged(l *launches.Launch) { s.changedLaunches[l.Key] = l }

// LaunchForgotten deletes a launch's stored form with the next commit.
func (s *State) LaunchForgotten(k launches.Key) {
	delete(s.changedLaunches, k)
	if seq, ok := s.launchKeys[k]; ok {
		s.deletes = append(s.deletes, launchKey(seq))
		delete(s.launchKeys, k)
	}
}

// DecidedSlot marks the ring's chunk holding slot to be written.
func (s *State) DecidedSlot(slot int) { s.ringDirty[slot/decidedChunk] = struct{}{} }

// Batch is one commit's operations and what they stored, for Failed to
// mark again.
type Batch struct {
	ops      []*storage.Operation
	written  []*pending.Entry
	launches []*launches.Launch
	deletes  []string
	chunks   []int
}

// Empty reports whether there is nothing to commit.
func (b *Batch) Empty() bool { return b == nil || len(b.ops) == 0 }

// Len is the number of operations.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.ops)
}

// Prepare takes every change marked since the last commit as one batch.
// Under the processor's lock.
func (s *State) Prepare() *Batch {
	if len(s.changed) == 0 && len(s.deletes) == 0 && len(s.ringDirty) == 0 && len(s.changedLaunches) == 0 {
		return nil
	}
	b := &Batch{ops: make([]*storage.Operation, 0, len(s.changed)+len(s.changedLaunches)+len(s.deletes)+len(s.ringDirty)+1)}
	// In the order of the IDs, not the map's: a commit writes the same
	// records with the same keys whenever the same things changed (the
	// fault simulation replays a schedule from its seed alone).
	for _, id := range inOrder(s.changed, &s.idOrder, func(a, b pcommon.TraceID) int { return bytes.Compare(a[:], b[:]) }) {
		e := s.changed[id]
		st, ok := s.keys[id]
		if !ok {
			st = &stored{key: s.nextKey}
			s.nextKey++
			s.keys[id] = st
		}
		if st.rs == nil && e.Turn != nil {
			st.rs = compact.EncodeResource(e.Turn.Resource)
		}
		b.ops = append(b.ops, storage.SetOperation(traceKey(st.key), encodeTrace(nil, &e.Trace, st.rs)))
		b.written = append(b.written, e)
	}
	clear(s.changed)
	s.prepareLaunches(b)
	b.deletes, s.deletes = s.deletes, nil
	for _, k := range b.deletes {
		b.ops = append(b.ops, storage.DeleteOperation(k))
	}
	s.prepareRing(b)
	return b
}

func (s *State) prepareLaunches(b *Batch) {
	for _, k := range inOrder(s.changedLaunches, &s.launchOrder, func(a, b launches.Key) int {
		return cmp.Or(cmp.Compare(a.Installation, b.Installation), cmp.Compare(a.Instance, b.Instance))
	}) {
		l := s.changedLaunches[k]
		seq, ok := s.launchKeys[k]
		if !ok {
			seq = s.nextKey
			s.nextKey++
			s.launchKeys[k] = seq
		}
		b.ops = append(b.ops, storage.SetOperation(launchKey(seq), launches.Encode(l)))
		b.launches = append(b.launches, l)
	}
	clear(s.changedLaunches)
}

func (s *State) prepareRing(b *Batch) {
	if len(s.ringDirty) == 0 {
		return
	}
	chunks := (s.ring.Size() + decidedChunk - 1) / decidedChunk
	for _, n := range inOrder(s.ringDirty, &s.chunkOrder, cmp.Compare[int]) {
		b.chunks = append(b.chunks, n)
		if n >= chunks {
			b.ops = append(b.ops, storage.DeleteOperation(chunkKey(n)))
			continue
		}
		lo, hi := n*decidedChunk, min((n+1)*decidedChunk, s.ring.Size())
		v := make([]byte, 0, (hi-lo)*len(pcommon.TraceID{}))
		for _, id := range s.ring.Slots()[lo:hi] {
			v = append(v, id[:]...)
		}
		b.ops = append(b.ops, storage.SetOperation(chunkKey(n), v))
	}
	e := compact.Encoder{}
	e.Uint(uint64(s.ring.Size()))
	e.Uint(uint64(s.ring.Next()))
	e.Bool(s.ring.Full())
	b.ops = append(b.ops, storage.SetOperation(keyMeta, e.B))
	clear(s.ringDirty)
}

// inOrder is m's keys in the order of compare, in the space of
// scratch (kept for the next commit: no allocation once it is large
// enough).
func inOrder[K comparable, V any](m map[K]V, scratch *[]K, compare func(a, b K) int) []K {
	keys := (*scratch)[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	*scratch = keys
	return keys
}

// stager is a client whose transactions carry what other components
// staged (shared_storage's).
type stager interface {
	Stage(ops []*storage.Operation, committed func(error))
}

// Write commits a batch in one transaction. Outside the processor's lock.
// An empty batch still commits what other components staged (shared
// storage's count connector): the outcome of a request is theirs too.
func (s *State) Write(ctx context.Context, b *Batch) error {
	if b.Empty() {
		if _, shared := s.client.(stager); shared {
			return s.client.Batch(ctx) // nothing staged: no transaction
		}
		return nil
	}
	return s.client.Batch(ctx, b.ops...)
}

// Failed marks a batch that could not be written to be written again: the
// next commit stores the state as it is then. A trace released since is
// not written again. Under the processor's lock.
func (s *State) Failed(b *Batch) {
	if b == nil {
		return // only what others staged was written
	}
	for _, e := range b.written {
		if _, ok := s.keys[e.ID]; ok {
			if _, again := s.changed[e.ID]; !again {
				s.changed[e.ID] = e
			}
		}
	}
	for _, l := range b.launches {
		if _, ok := s.launchKeys[l.Key]; ok {
			if _, again := s.changedLaunches[l.Key]; !again {
				s.changedLaunches[l.Key] = l
			}
		}
	}
	s.deletes = append(s.deletes, b.deletes...)
	for _, n := range b.chunks {
		s.ringDirty[n] = struct{}{}
	}
}

// Close closes the storage client.
func (s *State) Close(ctx context.Context) error { return s.client.Close(ctx) }

// Contents is what storage holds, read back as it is: for tests and
// diagnostics.
type Contents struct {
	Traces  []pcommon.TraceID
	Decided []pcommon.TraceID // the ring's slots as stored, in slot order
}

// Contents reads what is stored now.
func (s *State) Contents(ctx context.Context) (Contents, error) {
	var c Contents
	chunks := map[int][]byte{}
	err := s.client.(storage.Walker).Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		switch {
		case len(key) == 9 && key[0] == keyTrace:
			var t pending.Entry
			if _, err := decodeTrace(value, &t.Trace); err == nil {
				c.Traces = append(c.Traces, t.ID)
			}
		case len(key) == 5 && key[0] == keyDecided:
			chunks[int(binary.BigEndian.Uint32([]byte(key[1:])))] = append([]byte(nil), value...)
		}
		return nil, nil
	})
	for n := 0; len(chunks) > 0; n++ {
		b, ok := chunks[n]
		if !ok {
			break
		}
		delete(chunks, n)
		for len(b) >= 16 {
			c.Decided = append(c.Decided, pcommon.TraceID(b[:16]))
			b = b[16:]
		}
	}
	return c, err
}
