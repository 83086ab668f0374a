package sharedstorage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	filestorage "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
	"github.com/percause/percause/internal/leaf/vfs"
)

// sharedStorage is the extension: the database in its engine, one
// client of it for every namespace, and the staging in front of it. A
// file_storage is opened in every engine: it makes the directory, holds
// the bbolt engine's database and reads what the databases before kept.
type sharedStorage struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tel    *telemetry
	// fs is where the log engine keeps its files.
	fs vfs.FS

	// files is the file_storage the database (and the databases imported
	// from) live in.
	files storage.Extension

	mu sync.Mutex // GetClient and Shutdown, one at a time
	db *database
}

var _ storage.Extension = (*sharedStorage)(nil)

func newSharedStorage(ctx context.Context, set extension.Settings, cfg *Config) (*sharedStorage, error) {
	fsCfg := cfg.fileStorageConfig()
	// file_storage's Validate also reads directory_permissions into the
	// mode it creates the directory with.
	if err := fsCfg.Validate(); err != nil {
		return nil, fmt.Errorf("shared_storage: %w", err)
	}
	// file_storage makes the directory here, so the distribution's lock
	// file can be taken in it at Start.
	fs := filestorage.NewFactory()
	fsSet := set
	fsSet.ID = component.NewIDWithName(fs.Type(), set.ID.Name())
	ext, err := fs.Create(ctx, fsSet, fsCfg)
	if err != nil {
		return nil, fmt.Errorf("shared_storage: %w", err)
	}
	files, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("shared_storage: file_storage is a %T, not a storage extension", ext)
	}
	b, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("shared_storage: telemetry: %w", err)
	}
	return &sharedStorage{cfg: cfg, id: set.ID, logger: set.Logger, tel: newTelemetry(b), files: files}, nil
}

// Start opens the shared database in its engine (open).
func (s *sharedStorage) Start(ctx context.Context, host component.Host) error {
	if err := s.files.Start(ctx, host); err != nil {
		return fmt.Errorf("shared_storage: %w", err)
	}
	inner, err := s.open(ctx)
	if err != nil {
		_ = s.files.Shutdown(ctx)
		return fmt.Errorf("shared_storage: opening the database in %s: %w", s.cfg.Directory, err)
	}
	db, err := newDatabase(inner, s.cfg.StageFlush, s.tel)
	if err != nil {
		_ = inner.Close(ctx)
		_ = s.files.Shutdown(ctx)
		return err
	}
	s.mu.Lock()
	s.db = db
	s.mu.Unlock()
	return nil
}

// open opens the database in the configured engine: the log
// (shared_storage_NAME.*), Pebble (shared_storage_NAME.pebble), or
// file_storage's client for this extension (extension_shared_storage_NAME).
// A new log beside a bbolt database of this extension begins with its
// keys, so a switch of engine (the default's, from bbolt to the log)
// loses nothing; a new Pebble database begins with the log's keys, or
// when there is no log with the bbolt database's.
func (s *sharedStorage) open(ctx context.Context) (storage.Client, error) {
	if s.cfg.Engine == EngineBbolt {
		return s.files.GetClient(ctx, component.KindExtension, s.id, "")
	}
	name := "shared_storage"
	if s.id.Name() != "" {
		name += "_" + s.id.Name()
	}
	if s.cfg.Engine == EnginePebble {
		o := pebbleOpening{dir: s.cfg.Directory, name: name, fsync: s.cfg.FSync, logger: s.logger,
			seed: func() ([]*storage.Operation, error) { return s.seedPebble(ctx, name) }}
		if pf, ok := s.fs.(pebbleFiles); ok {
			o.fs, o.fatal = pf.PebbleFS(), pf.Fatal
		}
		return o.open()
	}
	l, err := openLogOn(vfs.Or(s.fs), s.cfg.Directory, name, s.cfg.FSync, s.cfg.CompactAfter, func() ([]*storage.Operation, error) {
		return s.readBbolt(ctx, "the log")
	})
	if err != nil {
		return nil, err
	}
	for _, c := range l.cuts {
		s.logger.Warn("shared_storage: cut off what a crash or a power loss left past the log's last whole record; "+
			"what it held was never acknowledged, or (without fsync) not yet on the disk", zap.String("cut", c.String()))
	}
	return l, nil
}

// seedPebble is what a new Pebble database begins with: the keys of this
// extension's log, when it has one, else those of its bbolt database.
// Their files are left as they were (a log's torn tail cut, as at its own
// start).
func (s *sharedStorage) seedPebble(ctx context.Context, name string) ([]*storage.Operation, error) {
	fs := vfs.Or(s.fs)
	names, err := fs.List(s.cfg.Directory)
	if err != nil {
		return nil, err
	}
	found := false
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, name+".")
		if ok && (rest == "snap" || strings.HasSuffix(rest, ".log")) {
			found = true
			break
		}
	}
	if !found {
		return s.readBbolt(ctx, "pebble")
	}
	l, err := openLogOn(fs, s.cfg.Directory, name, s.cfg.FSync, s.cfg.CompactAfter, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the log %s.*: %w", name, err)
	}
	l.mu.Lock()
	ops := make([]*storage.Operation, 0, len(l.kv))
	for k, v := range l.kv {
		ops = append(ops, storage.SetOperation(k, v))
	}
	l.mu.Unlock()
	if err := l.Close(ctx); err != nil {
		return nil, err
	}
	s.logger.Info("shared_storage: pebble begins with the keys of this extension's log; its files are left as they were",
		zap.String("log", filepath.Join(s.cfg.Directory, name)+".*"), zap.Int("keys", len(ops)))
	return ops, nil
}

// readBbolt reads every key of this extension's bbolt database, if there
// is one, as Set operations, for the engine that begins with them. The
// file is left as it was.
func (s *sharedStorage) readBbolt(ctx context.Context, engine string) ([]*storage.Operation, error) {
	path, found, err := fileStorageDatabase(s.cfg.Directory, component.KindExtension, s.id, "")
	if err != nil || !found {
		return nil, err
	}
	ops, err := s.readAll(ctx, component.KindExtension, s.id, "")
	if err != nil {
		return nil, fmt.Errorf("reading the bbolt database %s: %w", path, err)
	}
	s.logger.Info("shared_storage: "+engine+" begins with the keys of this extension's bbolt database; its file is left as it was",
		zap.String("file", path), zap.Int("keys", len(ops)))
	return ops, nil
}

// Shutdown commits what is staged and closes the database. The components
// have closed their clients already (extensions stop last).
func (s *sharedStorage) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	db := s.db
	s.mu.Unlock()
	var err error
	if db != nil {
		err = db.shutdown(ctx)
	}
	s.tel.b.Shutdown()
	return errors.Join(err, s.files.Shutdown(ctx))
}

// GetClient returns the namespace of kind/id/name in the shared database.
// At a namespace's first use, what file_storage kept for the same
// kind/id/name in this directory is read in (import.go).
func (s *sharedStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, errors.New("shared_storage: GetClient before Start")
	}
	prefix := namespace(kind, id, name)
	if err := s.importOnce(ctx, prefix, kind, id, name); err != nil {
		return nil, fmt.Errorf("shared_storage: %s: %w", prefix, err)
	}
	return &client{db: s.db, prefix: prefix}, nil
}
