package distro

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	filestorage "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// dataLockFile is the file in a file_storage directory that the collector
// using it holds locked, naming itself inside. Two collectors on one folder
// would otherwise meet only in bbolt's own lock on each database, which
// says "timeout" and nothing of who holds it. The file is left in place
// when the collector ends: the lock, not the file, says the folder is in
// use, and the kernel lets go of it when the process dies however it dies.
const dataLockFile = "percause.lock"

// lockedFileStorageFactory is contrib's file_storage with its directory
// locked by the collector that starts it: a second collector on the same
// folder fails at start naming the first.
func lockedFileStorageFactory() extension.Factory {
	inner := filestorage.NewFactory()
	create := func(ctx context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
		ext, err := inner.Create(ctx, set, cfg)
		if err != nil {
			return nil, err
		}
		se, ok := ext.(storage.Extension)
		fc, isFileConfig := cfg.(*filestorage.Config)
		if !ok || !isFileConfig {
			return ext, nil
		}
		return &lockedStorage{Extension: se, id: set.ID, dir: fc.Directory}, nil
	}
	return extension.NewFactory(inner.Type(), inner.CreateDefaultConfig, create, inner.Stability())
}

// lockedStorage holds its directory's lock from Start to Shutdown.
type lockedStorage struct {
	storage.Extension
	id   component.ID
	dir  string
	lock *os.File
}

func (l *lockedStorage) Start(ctx context.Context, host component.Host) error {
	f, err := lockDataFolder(l.dir)
	if err != nil {
		return fmt.Errorf("%s: %w", l.id, err)
	}
	if err := l.Extension.Start(ctx, host); err != nil {
		f.Close()
		return err
	}
	l.lock = f
	return nil
}

func (l *lockedStorage) Shutdown(ctx context.Context) error {
	err := l.Extension.Shutdown(ctx)
	if l.lock != nil {
		l.lock.Close() // closing the file lets go of the lock
		l.lock = nil
	}
	return err
}

// lockDataFolder takes dir's lock without waiting and writes who holds it;
// when another process holds it, the error names that process from what
// it wrote.
func lockDataFolder(dir string) (*os.File, error) {
	path := filepath.Join(dir, dataLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking the data folder %s: %w", dir, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the data folder %s: %w", dir, err)
	}
	if held {
		b := make([]byte, 512)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := strings.TrimSpace(string(b[:n]))
		if holder == "" {
			holder = "another process (it has not named itself in " + path + " yet)"
		}
		return nil, fmt.Errorf("the data folder %s is in use by %s: one collector per data folder; stop that one, or give this one a folder of its own (file_storage's directory, PERCAUSE_DATA_DIR in the shipped configurations)", dir, holder)
	}
	me := fmt.Sprintf("percause pid %d (started %s)\n", os.Getpid(), time.Now().Format(time.RFC3339))
	if err = f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(me), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the data folder %s: writing %s: %w", dir, path, err)
	}
	return f, nil
}
