package sharedstorage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// The pebble engine: the shared database as one Pebble database (an LSM
// tree: a write-ahead log, a memtable, sorted tables on the disk), in the
// directory shared_storage[_NAME].pebble. A transaction is one Pebble
// batch, committed whole or not at all; reads go to the database, not to
// a copy of every key in memory
// (docs/decisions/0313-pebble-beside-the-log.md).
//
// What a crash can lose is the log engine's:
//
//   - fsync on: a batch is committed with pebble.Sync, its write-ahead
//     record flushed to the disk before the commit returns.
//   - fsync off: also committed with pebble.Sync, on files whose
//     write-ahead log is never flushed (its Sync, SyncData and SyncTo do
//     nothing; closing a full log, once per memtable, does flush it). The
//     record is written to the file before the commit returns, as the
//     log engine's one write is, so a kill loses nothing committed; a
//     power loss loses what the kernel had not written back, the tail of
//     the last write-ahead log. pebble.NoSync would not do: Pebble keeps
//     a record that asks for no sync in its own buffer, written by its
//     flush goroutine when a 32 KiB block fills, so a kill loses what was
//     committed and not yet written: in a burst, up to a memtable of it
//     (1,095 to 2,011 of 6,000 commits of 1.2 KB in runs of
//     TestPebbleCrashKeepsWhatItShould).
//
// The format is pinned to pebble.FormatColumnarBlocks, the last before
// write-ahead records name the offset synced so far: with fsync off that
// offset is never really synced, and a power loss that kept a later
// block and not an earlier one would read as damage, not as a torn tail.
// Pinned, an upgrade of Pebble does not change what is written either.
//
// Pebble's memory is bounded by small settings (pebbleMemTableSize,
// pebbleMemTables, pebbleCacheSize, pebbleMaxOpenFiles) and its own log
// goes to the collector's logger at debug.

const (
	// pebbleMemTableSize is one memtable's size; Pebble starts at 256 KiB
	// and doubles up to it.
	pebbleMemTableSize = 4 << 20
	// pebbleMemTables bounds the memtables queued for a flush: writes
	// wait past pebbleMemTables × pebbleMemTableSize (8 MiB).
	pebbleMemTables = 2
	// pebbleCacheSize is the block cache, of blocks read from the tables.
	pebbleCacheSize = 8 << 20
	// pebbleMaxOpenFiles bounds the tables held open (Pebble's default is
	// 1,000).
	pebbleMaxOpenFiles = 64
	// pebbleFormat is the format new databases are made in (above).
	pebbleFormat = pebble.FormatColumnarBlocks
	// pebbleWALCategory is the category Pebble creates its write-ahead
	// logs in.
	pebbleWALCategory pebblevfs.DiskWriteCategory = "pebble-wal"
)

// pebbleStore is a storage.Client and storage.Walker over one Pebble
// database.
type pebbleStore struct {
	write *pebble.WriteOptions

	mu     sync.RWMutex // Close against everything else
	db     *pebble.DB
	closed bool
}

var (
	_ storage.Client = (*pebbleStore)(nil)
	_ storage.Walker = (*pebbleStore)(nil)
)

// pebbleFiles is a file system given to NewFactoryOn (the fault
// simulation's) that serves the pebble engine too: the database is kept
// on PebbleFS, and an error Pebble cannot go on after ends the process
// through Fatal, which never returns, as the collector's exit does not.
type pebbleFiles interface {
	PebbleFS() pebblevfs.FS
	Fatal(msg string)
}

// pebbleOpening is how a pebble store is opened.
type pebbleOpening struct {
	// fs is where the database is kept; nil: the operating system's.
	fs        pebblevfs.FS
	dir, name string
	fsync     bool
	// logger takes Pebble's own log, at debug (its errors at error); nil:
	// none.
	logger *zap.Logger
	// seed, for a new store, returns the operations it begins with.
	seed func() ([]*storage.Operation, error)
	// fatal, when set, is called on an error Pebble cannot go on after,
	// instead of ending the process (pebbleLogger).
	fatal func(msg string)
	// noSync commits with pebble.NoSync when fsync is off, on files that
	// flush as asked: what the engine does not do (a kill loses what
	// Pebble had not yet written), kept for the benchmark and the test
	// that show why.
	noSync bool
}

// pebbleDir is the directory of the pebble store called name in dir.
func pebbleDir(fs pebblevfs.FS, dir, name string) string { return fs.PathJoin(dir, name+".pebble") }

// openPebble opens (or makes) the pebble store called name in dir
// (name.pebble) on fs (nil: the operating system's files), with fsync
// as the extension's setting.
func openPebble(fs pebblevfs.FS, dir, name string, fsync bool) (*pebbleStore, error) {
	return pebbleOpening{fs: fs, dir: dir, name: name, fsync: fsync}.open()
}

// open opens the store. A new one (no database in its directory) that
// seed gives operations to is made beside it (name.pebble.tmp), holding
// them, and renamed into place, so a crash leaves no store, which begins
// again, or one that holds them all.
func (o pebbleOpening) open() (*pebbleStore, error) {
	if o.fs == nil {
		o.fs = pebblevfs.Default
	}
	path := pebbleDir(o.fs, o.dir, o.name)
	if o.seed != nil {
		if err := o.seedNew(path); err != nil {
			return nil, err
		}
	}
	db, err := pebble.Open(path, o.options())
	if err != nil {
		return nil, fmt.Errorf("shared_storage: opening pebble in %s: %w", path, err)
	}
	write := pebble.Sync
	if o.noSync && !o.fsync {
		write = pebble.NoSync
	}
	return &pebbleStore{db: db, write: write}, nil
}

func (o pebbleOpening) options() *pebble.Options {
	fs := o.fs
	if !o.fsync && !o.noSync {
		fs = unsyncedWAL{fs}
	}
	logger := o.logger
	if logger == nil {
		logger = zap.NewNop()
	}
	return &pebble.Options{
		FS:                          fs,
		CacheSize:                   pebbleCacheSize,
		MemTableSize:                pebbleMemTableSize,
		MemTableStopWritesThreshold: pebbleMemTables,
		MaxOpenFiles:                pebbleMaxOpenFiles,
		FormatMajorVersion:          pebbleFormat,
		Logger:                      pebbleLogger{l: logger.Sugar(), fatal: o.fatal},
	}
}

// seedNew makes the store at path holding seed's operations when there is
// no database there.
func (o pebbleOpening) seedNew(path string) error {
	tmp := path + ".tmp"
	if err := o.fs.RemoveAll(tmp); err != nil { // a seeding a crash cut short
		return err
	}
	if _, err := o.fs.Stat(path); err == nil {
		desc, err := pebble.Peek(path, o.fs)
		if err != nil {
			return fmt.Errorf("shared_storage: reading pebble's directory %s: %w", path, err)
		}
		if desc.Exists {
			return nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ops, err := o.seed()
	if err != nil || len(ops) == 0 {
		return err
	}
	seeded := o
	seeded.seed, seeded.fsync, seeded.noSync = nil, true, false
	s, err := pebble.Open(tmp, seeded.options())
	if err != nil {
		return fmt.Errorf("shared_storage: making pebble in %s: %w", tmp, err)
	}
	st := &pebbleStore{db: s, write: pebble.Sync}
	err = st.Batch(context.Background(), ops...)
	err = errors.Join(err, st.Close(context.Background()))
	if err == nil {
		err = o.fs.RemoveAll(path) // an empty directory, or one without a database
	}
	if err == nil {
		err = o.fs.Rename(tmp, path)
	}
	if err == nil {
		err = syncPebbleDir(o.fs, o.dir)
	}
	if err != nil {
		_ = o.fs.RemoveAll(tmp)
		return fmt.Errorf("shared_storage: seeding pebble in %s: %w", path, err)
	}
	return nil
}

func syncPebbleDir(fs pebblevfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// keyBytes is key's bytes, not copied: Pebble copies what it keeps of a
// key, and never writes to one.
func keyBytes(key string) []byte { return unsafe.Slice(unsafe.StringData(key), len(key)) }

// pebbleReader is the database, or a batch over it.
type pebbleReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

// get reads key: a copy of its value, nil when there is none.
func pebbleGet(r pebbleReader, key string) ([]byte, error) {
	v, closer, err := r.Get(keyBytes(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("shared_storage: reading pebble: %w", err)
	}
	out := append([]byte{}, v...)
	return out, closer.Close()
}

// Batch runs ops in order as one transaction, one Pebble batch; a Get
// reads the keys as they stand at that point of the batch (an indexed
// batch: the batch's own writes over the database). A batch of reads only
// writes nothing. The Get results are put in place once it committed.
func (s *pebbleStore) Batch(_ context.Context, ops ...*storage.Operation) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	reads, writes := 0, 0
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			reads++
		case storage.Set, storage.Delete:
			writes++
		}
	}
	var got [][]byte
	if reads > 0 {
		got = make([][]byte, 0, reads)
	}
	if writes == 0 {
		for _, op := range ops {
			if op.Type == storage.Get {
				v, err := pebbleGet(s.db, op.Key)
				if err != nil {
					return err
				}
				got = append(got, v)
			}
		}
		putGets(ops, got)
		return nil
	}
	var b *pebble.Batch
	if reads > 0 {
		b = s.db.NewIndexedBatch()
	} else {
		b = s.db.NewBatch()
	}
	defer b.Close()
	for _, op := range ops {
		var err error
		switch op.Type {
		case storage.Get:
			var v []byte
			v, err = pebbleGet(b, op.Key)
			got = append(got, v)
		case storage.Set:
			err = b.Set(keyBytes(op.Key), op.Value, nil)
		case storage.Delete:
			err = b.Delete(keyBytes(op.Key), nil)
		}
		if err != nil {
			return err
		}
	}
	if err := b.Commit(s.write); err != nil {
		return fmt.Errorf("shared_storage: committing to pebble: %w", err)
	}
	putGets(ops, got)
	return nil
}

// putGets hands got, in order, to ops' Get operations.
func putGets(ops []*storage.Operation, got [][]byte) {
	i := 0
	for _, op := range ops {
		if op.Type == storage.Get {
			op.Value = got[i]
			i++
		}
	}
}

func (s *pebbleStore) Get(ctx context.Context, key string) ([]byte, error) {
	op := storage.GetOperation(key)
	err := s.Batch(ctx, op)
	return op.Value, err
}

func (s *pebbleStore) Set(ctx context.Context, key string, value []byte) error {
	return s.Batch(ctx, storage.SetOperation(key, value))
}

func (s *pebbleStore) Delete(ctx context.Context, key string) error {
	return s.Batch(ctx, storage.DeleteOperation(key))
}

// Walk calls fn for every key in key order (a copy of each value, the
// caller's to keep), then applies the operations fn returned as one
// transaction (none when fn fails; all gathered so far on
// storage.SkipAll).
func (s *pebbleStore) Walk(ctx context.Context, fn storage.WalkFunc) error {
	ops, err := s.walk(fn)
	if err != nil || len(ops) == 0 {
		return err
	}
	return s.Batch(ctx, ops...)
}

func (s *pebbleStore) walk(fn storage.WalkFunc) (ops []*storage.Operation, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, fmt.Errorf("shared_storage: reading pebble: %w", err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("shared_storage: reading pebble: %w", cerr)
		}
	}()
	for valid := it.First(); valid; valid = it.Next() {
		v, verr := it.ValueAndErr()
		if verr != nil {
			return nil, fmt.Errorf("shared_storage: reading pebble: %w", verr)
		}
		more, ferr := fn(string(it.Key()), slices.Clone(v))
		ops = append(ops, more...)
		if errors.Is(ferr, storage.SkipAll) {
			return ops, nil
		}
		if ferr != nil {
			return nil, ferr
		}
	}
	return ops, nil
}

// Close closes the database; later operations get ErrClosed.
func (s *pebbleStore) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("shared_storage: closing pebble: %w", err)
	}
	return nil
}

// pebbleLogger hands Pebble's log to the collector's: what it tells (the
// logs it replayed at open, its jobs) at debug, its errors at error. A
// fatal error (a write-ahead write or flush the disk refused, damage
// found in a table) is logged and ends the process, as Pebble's own
// logger does: Pebble's commits cannot go on after one, and a process
// that went on would hang or lose what it acknowledged. fatal, when set,
// is called instead of the exit (the simulation's); it must not return
// either, since Pebble goes on after Fatalf as if it had committed.
type pebbleLogger struct {
	l     *zap.SugaredLogger
	fatal func(msg string)
}

func (p pebbleLogger) Infof(format string, args ...any) { p.l.Debugf("pebble: "+format, args...) }

func (p pebbleLogger) Errorf(format string, args ...any) { p.l.Errorf("pebble: "+format, args...) }

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf("pebble: "+format, args...)
	p.l.Errorw("shared_storage: " + msg + "; the collector stops: what was committed is kept")
	if p.fatal != nil {
		p.fatal(msg) // never returns
	}
	_ = p.l.Sync()
	os.Exit(1)
}

// unsyncedWAL is a file system whose write-ahead logs are written and
// never flushed to the disk while they are written (Sync, SyncData and
// SyncTo do nothing); closing one, when a memtable is full, flushes it.
type unsyncedWAL struct{ pebblevfs.FS }

func (fs unsyncedWAL) Create(name string, category pebblevfs.DiskWriteCategory) (pebblevfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return unsyncedIf(f, err, category)
}

func (fs unsyncedWAL) ReuseForWrite(oldname, newname string, category pebblevfs.DiskWriteCategory) (pebblevfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return unsyncedIf(f, err, category)
}

func (fs unsyncedWAL) OpenReadWrite(name string, category pebblevfs.DiskWriteCategory, opts ...pebblevfs.OpenOption) (pebblevfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return unsyncedIf(f, err, category)
}

func unsyncedIf(f pebblevfs.File, err error, category pebblevfs.DiskWriteCategory) (pebblevfs.File, error) {
	if err != nil || category != pebbleWALCategory {
		return f, err
	}
	return unsyncedFile{f}, nil
}

// unsyncedFile is a write-ahead log being written: its syncs do nothing,
// its close flushes it.
type unsyncedFile struct{ pebblevfs.File }

func (unsyncedFile) Sync() error                             { return nil }
func (unsyncedFile) SyncData() error                         { return nil }
func (unsyncedFile) SyncTo(int64) (fullSync bool, err error) { return false, nil }

func (f unsyncedFile) Close() error { return errors.Join(f.File.Sync(), f.File.Close()) }
