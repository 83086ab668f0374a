package linesconnector

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/exporters/textlines"
)

// The held lines, kept through a storage extension (storage: in the
// configuration), so a line acknowledged to its sender and held for the
// lines it joins outlives the process: a kill, or a shutdown whose
// emission the traces pipeline refused, leaves it stored, and the next
// start holds it again.
//
// A delivery's lines still held when it is done are stored together, one
// record a delivery ('h' + a sequence number), before the delivery is
// answered; lines a failed write left unstored go with the next record.
// A record is deleted once none of its lines is held or on its way: each
// was emitted and the traces pipeline accepted it, or was dropped. The
// store owns its keys, its codec and its deletes; the state only says
// which lines it holds.

const keyHeld = 'h'

// heldCodec is the version of a stored record; a record of another
// version does not read.
const heldCodec = 1

// stager is a storage client that adds operations to the next commit of
// its storage, shared with other components, without waiting for it (the
// shared_storage extension's clients are).
type stager interface {
	Stage(ops []*storage.Operation, committed func(error))
}

// heldRecord is one stored record: its key and how many of its lines are
// still held or on their way.
type heldRecord struct {
	key  string
	live int
}

// heldStore keeps the held lines in a storage client. Used under the
// connector's lock, but for the callbacks of staged deletes (mu).
type heldStore struct {
	client  storage.Client
	stage   stager // nil: deletes go with the next write, or the shutdown's
	nextSeq uint64
	// unstored are lines taken into the held state and not yet stored;
	// those no longer held when the next write comes are passed over.
	unstored []*line

	mu      sync.Mutex
	deletes []*storage.Operation // keys to delete with the next write (no stager), or whose staged delete failed
}

// openHeld gets the connector's client from the storage extension id names.
func openHeld(ctx context.Context, host component.Host, id, self component.ID) (*heldStore, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("storage extension %s is not configured (list it under service.extensions)", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("extension %s is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindConnector, self, "")
	if err != nil {
		return nil, fmt.Errorf("storage %s: %w", id, err)
	}
	s := &heldStore{client: client, nextSeq: 1}
	s.stage, _ = client.(stager)
	return s, nil
}

func heldKey(seq uint64) string {
	var k [9]byte
	k[0] = keyHeld
	binary.BigEndian.PutUint64(k[1:], seq)
	return string(k[:])
}

// took notes lines taken into the held state: stored by the next write.
func (s *heldStore) took(ls ...*line) {
	if s == nil {
		return
	}
	for _, l := range ls {
		if l.stored == nil && !l.noting {
			l.noting = true
			s.unstored = append(s.unstored, l)
		}
	}
}

// writeLocked stores the held lines not yet stored as one record, with the
// deletes waiting for a write, and reports the write's error: the lines
// then stay unstored, for the next write.
func (s *heldStore) writeLocked(ctx context.Context) error {
	if s == nil {
		return nil
	}
	var ls []*line
	for _, l := range s.unstored {
		l.noting = false
		if l.held && l.stored == nil {
			ls = append(ls, l)
		}
	}
	s.unstored = s.unstored[:0]
	s.mu.Lock()
	ops := s.deletes
	s.deletes = nil
	s.mu.Unlock()
	if len(ls) == 0 && len(ops) == 0 {
		return nil
	}
	var rec *heldRecord
	if len(ls) > 0 {
		value, err := encodeHeld(ls)
		if err != nil {
			return err
		}
		rec = &heldRecord{key: heldKey(s.nextSeq), live: len(ls)}
		s.nextSeq++
		ops = append(ops, storage.SetOperation(rec.key, value))
	}
	if err := s.client.Batch(ctx, ops...); err != nil {
		s.took(ls...)
		s.mu.Lock()
		for _, op := range ops {
			if op.Type == storage.Delete {
				s.deletes = append(s.deletes, op)
			}
		}
		s.mu.Unlock()
		return fmt.Errorf("lines connector: storing the held lines: %w", err)
	}
	for _, l := range ls {
		l.stored = rec
	}
	return nil
}

// settle notes that stored lines are held no more, nor on their way: a
// record none of whose lines is left is deleted.
func (s *heldStore) settle(ls ...*line) {
	if s == nil {
		return
	}
	for _, l := range ls {
		rec := l.stored
		if rec == nil {
			continue
		}
		l.stored = nil
		if rec.live--; rec.live == 0 {
			s.delete(storage.DeleteOperation(rec.key))
		}
	}
}

// delete removes a record: with the storage's next shared commit when it
// has one (staged again if that commit fails), else with the next write.
// A delete lost to a crash leaves lines that were emitted: the next start
// holds them again and emits them again, and the verdict processor's
// decided traces make that no second verdict.
func (s *heldStore) delete(op *storage.Operation) {
	if s.stage == nil {
		s.mu.Lock()
		s.deletes = append(s.deletes, op)
		s.mu.Unlock()
		return
	}
	s.stage.Stage([]*storage.Operation{op}, func(err error) {
		if err != nil {
			s.mu.Lock()
			s.deletes = append(s.deletes, storage.DeleteOperation(op.Key))
			s.mu.Unlock()
		}
	})
}

// flushDeletes writes the deletes waiting for a write (at shutdown).
func (s *heldStore) flushDeletes(ctx context.Context) error {
	s.mu.Lock()
	ops := s.deletes
	s.deletes = nil
	s.mu.Unlock()
	if len(ops) == 0 {
		return nil
	}
	return s.client.Batch(ctx, ops...)
}

func (s *heldStore) close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return errors.Join(s.flushDeletes(ctx), s.client.Close(ctx))
}

// restoredBatch is the batch of a line read back from storage: no
// delivery's, so an emission counts it as acknowledged to its sender.
const restoredBatch = ^uint64(0)

// read reads back the stored records in the order they were written, each
// with its lines.
func (s *heldStore) read(ctx context.Context) ([]*heldRecord, [][]*line, error) {
	walker, ok := s.client.(storage.Walker)
	if !ok {
		return nil, nil, errors.New("the storage cannot list what it holds, so the held lines cannot be read back")
	}
	type stored struct {
		seq   uint64
		key   string
		lines []*line
	}
	var all []stored
	err := walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		if len(key) != 9 || key[0] != keyHeld {
			return nil, fmt.Errorf("a key that is no record of held lines: %q", key)
		}
		ls, err := decodeHeld(value)
		if err != nil {
			return nil, fmt.Errorf("held lines %x: %w", key[1:], err)
		}
		all = append(all, stored{seq: binary.BigEndian.Uint64([]byte(key[1:])), key: key, lines: ls})
		return nil, nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	recs := make([]*heldRecord, len(all))
	lines := make([][]*line, len(all))
	for i, st := range all {
		recs[i], lines[i] = &heldRecord{key: st.key}, st.lines
		s.nextSeq = max(s.nextSeq, st.seq+1)
	}
	return recs, lines, nil
}

// restored counts the lines of each record read back that the state holds
// again; a record none of whose lines is held (each a duplicate of one
// before it) is deleted.
func (s *heldStore) restored(recs []*heldRecord, lines [][]*line) {
	for i, rec := range recs {
		for _, l := range lines[i] {
			if l.held {
				rec.live++
			} else {
				l.stored = nil
			}
		}
		if rec.live == 0 {
			s.delete(storage.DeleteOperation(rec.key))
		}
	}
}

// The codec: JSON, a record's resources once each.

type heldValue struct {
	Version   int          `json:"v"`
	Resources [][]byte     `json:"resources"`
	Lines     []storedLine `json:"lines"`
}

type storedLine struct {
	Text          string `json:"text"`
	Resource      int    `json:"resource"`
	File          string `json:"file,omitempty"`
	Number        int64  `json:"number,omitempty"`
	At            int64  `json:"at"`
	Timed         bool   `json:"timed,omitempty"`
	Arrived       int64  `json:"arrived"`
	Trace         string `json:"trace,omitempty"`
	Launch        string `json:"launch,omitempty"`
	LaunchAssumed string `json:"launch_assumed,omitempty"`
}

func encodeHeld(ls []*line) ([]byte, error) {
	v := heldValue{Version: heldCodec}
	index := map[string]int{}
	var m plog.ProtoMarshaler
	for _, l := range ls {
		ld := plog.NewLogs()
		l.resource.CopyTo(ld.ResourceLogs().AppendEmpty().Resource())
		res, err := m.MarshalLogs(ld)
		if err != nil {
			return nil, err
		}
		n, ok := index[string(res)]
		if !ok {
			n = len(v.Resources)
			index[string(res)] = n
			v.Resources = append(v.Resources, res)
		}
		sl := storedLine{Text: l.text, Resource: n, File: l.file, Number: l.number,
			At: l.at.UnixNano(), Timed: l.timed, Arrived: l.arrived.UnixNano(),
			Launch: l.launch, LaunchAssumed: l.launchAssumed}
		if !l.trace.IsEmpty() {
			sl.Trace = hex.EncodeToString(l.trace[:])
		}
		v.Lines = append(v.Lines, sl)
	}
	return json.Marshal(v)
}

// decodeHeld reads a stored record's lines; a record that does not read
// whole is an error, naming what is wrong.
func decodeHeld(b []byte) ([]*line, error) {
	var v heldValue
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.Version != heldCodec {
		return nil, fmt.Errorf("codec version %d, this build reads %d", v.Version, heldCodec)
	}
	var u plog.ProtoUnmarshaler
	resources := make([]pcommon.Resource, len(v.Resources))
	for i, raw := range v.Resources {
		ld, err := u.UnmarshalLogs(raw)
		if err != nil || ld.ResourceLogs().Len() != 1 {
			return nil, fmt.Errorf("resource %d does not read", i)
		}
		resources[i] = ld.ResourceLogs().At(0).Resource()
	}
	out := make([]*line, 0, len(v.Lines))
	for i, sl := range v.Lines {
		if sl.Resource < 0 || sl.Resource >= len(resources) {
			return nil, fmt.Errorf("line %d names resource %d of %d", i, sl.Resource, len(resources))
		}
		rec, err := textlines.Read(sl.Text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i, err)
		}
		l := &line{rec: rec, text: sl.Text, resource: resources[sl.Resource], file: sl.File, number: sl.Number,
			at: time.Unix(0, sl.At), timed: sl.Timed, arrived: time.Unix(0, sl.Arrived), batch: restoredBatch,
			launch: sl.Launch, launchAssumed: sl.LaunchAssumed}
		if sl.Trace != "" {
			if len(sl.Trace) != 32 {
				return nil, fmt.Errorf("line %d: trace %q is not 32 hex digits", i, sl.Trace)
			}
			if _, err := hex.Decode(l.trace[:], []byte(sl.Trace)); err != nil {
				return nil, fmt.Errorf("line %d: trace %q: %w", i, sl.Trace, err)
			}
		}
		out = append(out, l)
	}
	return out, nil
}
