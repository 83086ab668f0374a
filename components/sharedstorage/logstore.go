package sharedstorage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/percause/percause/internal/leaf/vfs"
)

// The log engine: the shared database as an append-only log of its
// transactions, replayed at start, beside a snapshot of its keys. A
// transaction is one record, written with one write (and, with fsync, one
// fdatasync): far cheaper than a B-tree's copy-on-write pages, which is
// what a request on its way to its 200 pays for
// (docs/decisions/0237-the-shared-store-is-a-log.md). The keys and values
// live in memory as well, so reads cost nothing; what the components keep
// in it is bounded by their own limits (held turns, rings, launches).
//
// Files, in the directory:
//
//	shared_storage_NAME.snap     the keys as of the end of log generation G
//	shared_storage_NAME.G.log    the transactions after it, one record each
//
// A record is its length (4 bytes), a CRC-32C of its payload (4 bytes) and
// the payload: varint count, then per operation a type byte, the key and,
// for a set, the value, each length-prefixed (so never empty). At start
// the snapshot is read, then every later generation's records in order;
// the first record that is cut short, fails its checksum or does not read
// as operations ends the replay (a crash mid-write, or what a power loss
// left past the last flush: zeros, garbage), and the log is cut there,
// named in a cut. Without fsync a power loss can leave that damage in a
// log with later ones after it (a compaction's), so those are cut too;
// with fsync every record was on the disk before it was acknowledged, so
// such damage is no crash's and the store does not open. When a generation's log passes
// compact_after, appends go on in a new generation and the keys as they
// stand are written to a new snapshot, behind a rename, so a crash at any
// moment leaves a snapshot and the logs after it.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	recordHeader = 8
	// maxRecord bounds a record read back: a longer length is corrupt.
	maxRecord = 1 << 30
	opSet     = 1
	opDelete  = 2
)

// logStore is a storage.Client and storage.Walker over one log.
type logStore struct {
	fs           vfs.FS
	dir, name    string
	fsync        bool
	compactAfter int64
	// cuts are what the start cut off: for the extension to name.
	cuts []logCut

	mu      sync.Mutex
	kv      map[string][]byte
	gen     uint64
	log     vfs.File
	logSize int64
	// torn: a write that failed left part of a record after logSize, and
	// cutting it back failed too; the next append cuts it first.
	torn   bool
	buf    []byte
	closed bool
	// compacting is closed when the compaction in flight has ended.
	compacting chan struct{}
	compactErr error
}

var (
	_ storage.Client = (*logStore)(nil)
	_ storage.Walker = (*logStore)(nil)
)

func (s *logStore) snapPath() string { return filepath.Join(s.dir, s.name+".snap") }

func (s *logStore) logPath(gen uint64) string {
	return filepath.Join(s.dir, s.name+"."+strconv.FormatUint(gen, 10)+".log")
}

// logCut is damage the start cut off the log: a crash's torn record, or
// what a power loss left past the last flush.
type logCut struct {
	File   string
	Offset int64 // where the file was cut
	Bytes  int64 // how many bytes were cut
	// Later are the logs after it, removed: their records followed the
	// damage, so none of them is kept.
	Later []string
}

func (c logCut) String() string {
	s := fmt.Sprintf("%s cut at byte %d (%d bytes)", c.File, c.Offset, c.Bytes)
	if len(c.Later) > 0 {
		s += fmt.Sprintf(", and the %d later logs removed: %s", len(c.Later), strings.Join(c.Later, ", "))
	}
	return s
}

// openLog opens (or makes) the log store called name in dir on the
// operating system's files.
func openLog(dir, name string, fsync bool, compactAfter int64, seed func() ([]*storage.Operation, error)) (*logStore, error) {
	return openLogOn(vfs.OS, dir, name, fsync, compactAfter, seed)
}

// openLogOn opens (or makes) the log store called name in dir on fs. A
// new store (none of its files found) begins with the operations seed
// returns (nil: none), written whole, behind a rename, before the log is
// opened, so a crash leaves either no store, which begins again, or one
// that holds them all.
func openLogOn(fs vfs.FS, dir, name string, fsync bool, compactAfter int64, seed func() ([]*storage.Operation, error)) (*logStore, error) {
	s := &logStore{fs: fs, dir: dir, name: name, fsync: fsync, compactAfter: compactAfter, kv: map[string][]byte{}}
	snapGen, err := s.readSnapshot()
	if err != nil {
		return nil, err
	}
	gens, err := s.generations(snapGen)
	if err != nil {
		return nil, err
	}
	if snapGen == 0 && len(gens) == 0 && seed != nil {
		if gens, err = s.writeSeed(seed); err != nil {
			return nil, err
		}
	}
	s.gen = snapGen + 1
	for i, g := range gens {
		s.gen = g
		cut, err := s.replay(g, gens[i+1:])
		if err != nil {
			return nil, err
		}
		if cut {
			break
		}
	}
	if s.fsync {
		if err := s.flushEarlier(gens); err != nil {
			return nil, err
		}
	}
	f, err := s.createLog(s.gen)
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err == nil && s.fsync {
		// A killed process can leave records written and not flushed
		// (never acknowledged): read back now, they are relied on, so they
		// go to the disk before anything after them.
		err = f.Datasync()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	s.log, s.logSize = f, size
	return s, nil
}

// flushEarlier flushes the logs replayed before the one appended to: a
// killed process can leave records in any of them written and not
// flushed (one whose compaction failed left an empty log after it), and
// the store relies on them from now on.
func (s *logStore) flushEarlier(gens []uint64) error {
	for _, g := range gens {
		if g >= s.gen {
			continue
		}
		f, err := s.fs.OpenFile(s.logPath(g), os.O_WRONLY|os.O_APPEND, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			continue // cut: a later log after damage
		}
		if err == nil {
			err = errors.Join(f.Datasync(), f.Close())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeSeed writes a new store's first log, generation 1, holding seed's
// operations as one record, and returns the generations there are then.
func (s *logStore) writeSeed(seed func() ([]*storage.Operation, error)) ([]uint64, error) {
	ops, err := seed()
	if err != nil || len(ops) == 0 {
		return nil, err
	}
	tmp := s.logPath(1) + ".tmp"
	err = writeSynced(s.fs, tmp, encode(nil, ops))
	if err == nil {
		err = s.fs.Rename(tmp, s.logPath(1))
	}
	if err == nil {
		err = s.fs.SyncDir(s.dir)
	}
	if err != nil {
		_ = s.fs.Remove(tmp)
		return nil, err
	}
	return []uint64{1}, nil
}

// writeSynced writes b to a new file at path and flushes it to the disk.
func writeSynced(fs vfs.FS, path string, b []byte) error {
	f, err := fs.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// createLog opens generation gen's log for appending, making it if need
// be; with fsync, the directory is synced before any record is said to be
// stored in it, whether the file is new or not: one a failed sync left
// (made, never synced into its folder) would vanish with a power loss,
// and every record in it.
func (s *logStore) createLog(gen uint64) (vfs.File, error) {
	f, err := s.fs.OpenFile(s.logPath(gen), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if s.fsync {
		if err := s.fs.SyncDir(s.dir); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// readSnapshot loads the snapshot, if any, and returns the generation it
// ends (0: none).
func (s *logStore) readSnapshot() (uint64, error) {
	b, err := s.fs.ReadFile(s.snapPath())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(b) < 8 {
		return 0, fmt.Errorf("shared_storage: snapshot %s is cut short", s.snapPath())
	}
	gen := binary.BigEndian.Uint64(b[:8])
	rest := b[8:]
	for len(rest) > 0 {
		payload, n, ok := nextRecord(rest)
		if !ok {
			// A snapshot is written whole and renamed into place: a bad
			// one is not a crash's, and nothing safe can be read from it.
			return 0, fmt.Errorf("shared_storage: snapshot %s is corrupt", s.snapPath())
		}
		if err := s.apply(payload); err != nil {
			return 0, fmt.Errorf("shared_storage: snapshot %s: %w", s.snapPath(), err)
		}
		rest = rest[n:]
	}
	return gen, nil
}

// generations lists the logs after the snapshot's generation, in order,
// removing those it covers and any file the store was writing and never
// renamed into place.
func (s *logStore) generations(after uint64) ([]uint64, error) {
	names, err := s.fs.List(s.dir)
	if err != nil {
		return nil, err
	}
	var gens []uint64
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, s.name+".")
		if !ok {
			continue
		}
		if strings.HasSuffix(rest, ".tmp") {
			// A snapshot or first log this store was writing when it
			// stopped, never renamed into place.
			_ = s.fs.Remove(filepath.Join(s.dir, name))
			continue
		}
		num, ok := strings.CutSuffix(rest, ".log")
		g, err := strconv.ParseUint(num, 10, 64)
		if !ok || err != nil {
			continue
		}
		if g <= after {
			_ = s.fs.Remove(filepath.Join(s.dir, name)) // written into the snapshot
			continue
		}
		gens = append(gens, g)
	}
	slices.Sort(gens)
	return gens, nil
}

// replay applies generation g's records, later being the generations
// after it. The first record that does not read ends it: the log is cut
// there (reported true), and so are the later logs, which only a power
// loss without fsync can leave behind damage; with fsync that is damage
// no crash explains, and an error names the file.
func (s *logStore) replay(g uint64, later []uint64) (bool, error) {
	path := s.logPath(g)
	b, err := s.fs.ReadFile(path)
	if err != nil {
		return false, err
	}
	off := 0
	for off < len(b) {
		payload, n, ok := nextRecord(b[off:])
		if !ok || s.check(payload) != nil {
			break
		}
		if err := s.apply(payload); err != nil {
			return false, fmt.Errorf("shared_storage: %s at byte %d: %w", path, off, err)
		}
		off += n
	}
	if off == len(b) {
		return false, nil
	}
	if s.fsync && !s.allEmpty(later) {
		return false, fmt.Errorf("shared_storage: %s is corrupt at byte %d, and later logs follow it", path, off)
	}
	c := logCut{File: path, Offset: int64(off), Bytes: int64(len(b) - off)}
	for _, l := range later {
		c.Later = append(c.Later, s.logPath(l))
	}
	// The later logs go first: a crash meanwhile leaves this one's damage
	// to be cut again, never their records after it.
	for _, l := range c.Later {
		if err := s.fs.Remove(l); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
	}
	if err := s.fs.Truncate(path, int64(off)); err != nil {
		return false, err
	}
	s.cuts = append(s.cuts, c)
	return true, nil
}

// allEmpty reports whether the logs of gens hold nothing: made by a
// compaction that failed before its first record (its folder's sync),
// they follow no damage.
func (s *logStore) allEmpty(gens []uint64) bool {
	for _, g := range gens {
		if b, err := s.fs.ReadFile(s.logPath(g)); err != nil || len(b) > 0 {
			return false
		}
	}
	return true
}

// nextRecord reads the record at the start of b.
func nextRecord(b []byte) (payload []byte, n int, ok bool) {
	if len(b) < recordHeader {
		return nil, 0, false
	}
	size := binary.BigEndian.Uint32(b[:4])
	// A record holds at least its count: a length of 0 (an all-zero
	// header, whose checksum of nothing is 0 and holds) is no record.
	if size == 0 || size > maxRecord || int(size) > len(b)-recordHeader {
		return nil, 0, false
	}
	payload = b[recordHeader : recordHeader+int(size)]
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(b[4:8]) {
		return nil, 0, false
	}
	return payload, recordHeader + int(size), true
}

// check reads a record's operations without applying them: a record is
// applied whole or not at all.
func (s *logStore) check(payload []byte) error { return eachOp(payload, nil) }

// apply replays one record's operations on the keys.
func (s *logStore) apply(payload []byte) error {
	return eachOp(payload, func(typ byte, key, value []byte) {
		if typ == opSet {
			s.kv[string(key)] = slices.Clone(value)
		} else {
			delete(s.kv, string(key))
		}
	})
}

// eachOp reads a record's operations, handing each to fn (nil: none):
// a type byte, the key and, for a set, the value, with nothing after.
func eachOp(payload []byte, fn func(typ byte, key, value []byte)) error {
	count, n := binary.Uvarint(payload)
	if n <= 0 {
		return errCorruptRecord
	}
	p := payload[n:]
	for range count {
		if len(p) < 1 || (p[0] != opSet && p[0] != opDelete) {
			return errCorruptRecord
		}
		typ := p[0]
		key, rest, ok := readBytes(p[1:])
		if !ok {
			return errCorruptRecord
		}
		p = rest
		var value []byte
		if typ == opSet {
			if value, p, ok = readBytes(p); !ok {
				return errCorruptRecord
			}
		}
		if fn != nil {
			fn(typ, key, value)
		}
	}
	if len(p) != 0 {
		return errCorruptRecord
	}
	return nil
}

var errCorruptRecord = errors.New("shared_storage: a record whose checksum holds does not read as operations")

func readBytes(p []byte) (v, rest []byte, ok bool) {
	l, n := binary.Uvarint(p)
	if n <= 0 || l > uint64(len(p)-n) {
		return nil, nil, false
	}
	return p[n : n+int(l)], p[n+int(l):], true
}

// encode appends the record of ops' writes to buf.
func encode(buf []byte, ops []*storage.Operation) []byte {
	buf = append(buf, make([]byte, recordHeader)...)
	writes := 0
	for _, op := range ops {
		if op.Type != storage.Get {
			writes++
		}
	}
	buf = binary.AppendUvarint(buf, uint64(writes))
	for _, op := range ops {
		switch op.Type {
		case storage.Set:
			buf = append(buf, opSet)
			buf = appendBytes(buf, []byte(op.Key))
			buf = appendBytes(buf, op.Value)
		case storage.Delete:
			buf = append(buf, opDelete)
			buf = appendBytes(buf, []byte(op.Key))
		}
	}
	payload := buf[recordHeader:]
	binary.BigEndian.PutUint32(buf[:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	return buf
}

func appendBytes(buf, v []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(v)))
	return append(buf, v...)
}

// Batch runs ops in order as one transaction: one record appended, then
// the keys changed in memory; Get results come from the keys as they
// stand at that point of the batch.
func (s *logStore) Batch(_ context.Context, ops ...*storage.Operation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	writes := false
	for _, op := range ops {
		if op.Type != storage.Get {
			writes = true
			break
		}
	}
	if writes {
		if err := s.appendLocked(ops); err != nil {
			return err
		}
	}
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value = slices.Clone(s.kv[op.Key])
		case storage.Set:
			// Kept as handed over, as a Go map keeps a slice: a client
			// does not change a value it has set (README, "Values"). A
			// copy here was an allocation per operation.
			s.kv[op.Key] = op.Value
		case storage.Delete:
			delete(s.kv, op.Key)
		}
	}
	if s.logSize >= s.compactAfter && s.compacting == nil {
		s.startCompactionLocked()
	}
	return nil
}

// appendLocked writes one record; a write that fails leaves the log cut
// back to where it was, so the next record follows a whole one.
func (s *logStore) appendLocked(ops []*storage.Operation) error {
	if s.torn {
		// A record after a torn one would be cut with it at the next start.
		if err := s.log.Truncate(s.logSize); err != nil {
			return fmt.Errorf("shared_storage: cutting a torn record off the log: %w", err)
		}
		s.torn = false
	}
	s.buf = encode(s.buf[:0], ops)
	n, err := s.log.Write(s.buf)
	if err == nil && s.fsync {
		err = s.log.Datasync()
	}
	if err != nil {
		if n > 0 {
			s.torn = s.log.Truncate(s.logSize) != nil
		}
		return fmt.Errorf("shared_storage: writing the log: %w", err)
	}
	s.logSize += int64(n)
	return nil
}

// startCompactionLocked moves appends to a new generation and writes the
// keys as they stand to a new snapshot, in the background.
func (s *logStore) startCompactionLocked() {
	next, err := s.createLog(s.gen + 1)
	if err != nil {
		s.compactErr = err
		return
	}
	oldLog, oldGen := s.log, s.gen
	s.log, s.logSize, s.gen = next, 0, s.gen+1
	keys := make(map[string][]byte, len(s.kv))
	for k, v := range s.kv {
		keys[k] = v // values are never changed in place, only replaced
	}
	done := make(chan struct{})
	s.compacting = done
	compact := func(locked bool) {
		err := s.writeSnapshot(keys, oldGen)
		_ = oldLog.Close()
		if err == nil {
			_ = s.fs.Remove(s.logPath(oldGen))
		}
		if !locked {
			s.mu.Lock()
			defer s.mu.Unlock()
		}
		s.compacting, s.compactErr = nil, err
		close(done)
	}
	if vfs.Inline(s.fs) {
		compact(true) // the simulation's: every call in its order
		return
	}
	go compact(false)
}

// writeSnapshot writes keys, as of the end of generation gen, to a new
// snapshot file and renames it into place.
func (s *logStore) writeSnapshot(keys map[string][]byte, gen uint64) error {
	tmp := s.snapPath() + ".tmp"
	f, err := s.fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	var head [8]byte
	binary.BigEndian.PutUint64(head[:], gen)
	_, err = f.Write(head[:])
	ops := make([]*storage.Operation, 0, 256)
	var buf []byte
	flush := func() {
		if len(ops) == 0 || err != nil {
			return
		}
		buf = encode(buf[:0], ops)
		_, err = f.Write(buf)
		ops = ops[:0]
	}
	for k, v := range keys {
		ops = append(ops, storage.SetOperation(k, v))
		if len(ops) == cap(ops) {
			flush()
		}
	}
	flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.Rename(tmp, s.snapPath())
	}
	if err == nil {
		err = s.fs.SyncDir(s.dir)
	}
	if err != nil {
		_ = s.fs.Remove(tmp)
	}
	return err
}

func (s *logStore) Get(ctx context.Context, key string) ([]byte, error) {
	op := storage.GetOperation(key)
	err := s.Batch(ctx, op)
	return op.Value, err
}

func (s *logStore) Set(ctx context.Context, key string, value []byte) error {
	return s.Batch(ctx, storage.SetOperation(key, value))
}

func (s *logStore) Delete(ctx context.Context, key string) error {
	return s.Batch(ctx, storage.DeleteOperation(key))
}

// Walk calls fn for every key in key order, then applies the operations
// fn returned as one transaction (none when fn fails; all gathered so far
// on storage.SkipAll).
func (s *logStore) Walk(ctx context.Context, fn storage.WalkFunc) error {
	s.mu.Lock()
	keys := make([]string, 0, len(s.kv))
	for k := range s.kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values := make([][]byte, len(keys))
	for i, k := range keys {
		values[i] = s.kv[k]
	}
	s.mu.Unlock()
	var ops []*storage.Operation
	for i, k := range keys {
		more, err := fn(k, values[i])
		ops = append(ops, more...)
		if errors.Is(err, storage.SkipAll) {
			break
		}
		if err != nil {
			return err
		}
	}
	if len(ops) == 0 {
		return nil
	}
	return s.Batch(ctx, ops...)
}

// Close waits for a compaction in flight and closes the log.
func (s *logStore) Close(context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	wait := s.compacting
	s.mu.Unlock()
	if wait != nil {
		<-wait
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.torn {
		// A record whose write failed (its batch refused) and whose cut
		// back failed then would be read at the next start as stored.
		if err = s.log.Truncate(s.logSize); err != nil {
			err = fmt.Errorf("shared_storage: cutting a refused record off the log: %w", err)
		} else {
			s.torn = false
		}
	}
	err = errors.Join(err, s.log.Close())
	if s.compactErr != nil {
		err = errors.Join(err, fmt.Errorf("shared_storage: the last compaction: %w", s.compactErr))
	}
	return err
}
