package distro

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	filestorage "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/percause/percause/components/sharedstorage"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// dataLockFile is the file in a storage directory (file_storage's,
// shared_storage's) that the collector using it holds locked, naming
// itself inside. Two collectors on one folder would otherwise meet only
// in bbolt's own lock on each database, which says "timeout" and nothing
// of who holds it. The file is left in place when the collector ends: the
// lock, not the file, says the folder is in use, and the kernel lets go of
// it when the process dies however it dies.
const dataLockFile = "percause.lock"

// lockedFileStorageFactory is contrib's file_storage with its directory
// locked by the collector that starts it: a second collector on the same
// folder fails at start naming the first.
func lockedFileStorageFactory() extension.Factory {
	return lockedStorageFactory(filestorage.NewFactory(), func(cfg component.Config) (string, bool) {
		fc, ok := cfg.(*filestorage.Config)
		if !ok {
			return "", false
		}
		return fc.Directory, true
	})
}

// lockedSharedStorageFactory is shared_storage with the same lock as
// file_storage: one collector per folder whichever of the two keeps it.
func lockedSharedStorageFactory() extension.Factory {
	return lockedStorageFactory(sharedstorage.NewFactory(), func(cfg component.Config) (string, bool) {
		sc, ok := cfg.(*sharedstorage.Config)
		if !ok {
			return "", false
		}
		return sc.Directory, true
	})
}

// lockedStorageFactory wraps a storage extension's factory so that the
// extension holds the lock of the directory its config names from Start
// to Shutdown.
func lockedStorageFactory(inner extension.Factory, directory func(component.Config) (string, bool)) extension.Factory {
	create := func(ctx context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
		ext, err := inner.Create(ctx, set, cfg)
		if err != nil {
			return nil, err
		}
		se, ok := ext.(storage.Extension)
		dir, hasDir := directory(cfg)
		if !ok || !hasDir {
			return ext, nil
		}
		return &lockedStorage{Extension: se, id: set.ID, dir: dir, collector: collectorInstance(set)}, nil
	}
	return extension.NewFactory(inner.Type(), inner.CreateDefaultConfig, create, inner.Stability())
}

// collectorInstance names the collector an extension belongs to: its
// service.instance.id, made anew at each start (telemetry.go).
func collectorInstance(set extension.Settings) string {
	return verdict.AttrString(set.Resource.Attributes(), semconv.ServiceInstanceID)
}

// lockedStorage holds its directory's lock from Start to Shutdown.
type lockedStorage struct {
	storage.Extension
	id        component.ID
	dir       string
	collector string
	release   func()
}

func (l *lockedStorage) Start(ctx context.Context, host component.Host) error {
	release, err := holdDataFolder(l.dir, l.collector)
	if err != nil {
		return fmt.Errorf("%s: %w", l.id, err)
	}
	if err := l.Extension.Start(ctx, host); err != nil {
		release()
		return err
	}
	l.release = release
	return nil
}

func (l *lockedStorage) Shutdown(ctx context.Context) error {
	err := l.Extension.Shutdown(ctx)
	if l.release != nil {
		l.release()
		l.release = nil
	}
	return err
}

// heldFolders are the data folders this process holds locked, by their
// absolute path. Storage extensions of one collector on one folder
// (file_storage for a queue, shared_storage for the verdict state) share
// its lock; another collector in this process is refused like one in
// another process (flock would refuse a second open file in this process
// too, so the lock is taken once per folder here).
var heldFolders = struct {
	sync.Mutex
	by map[string]*heldFolder
}{by: map[string]*heldFolder{}}

type heldFolder struct {
	f         *os.File
	collector string
	users     int
}

// holdDataFolder takes dir's lock for collector, or shares it when that
// collector holds it already; release lets go of it with the last user.
func holdDataFolder(dir, collector string) (release func(), err error) {
	key, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("locking the data folder %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(key); err == nil {
		key = real
	}
	heldFolders.Lock()
	defer heldFolders.Unlock()
	h := heldFolders.by[key]
	switch {
	case h != nil && h.collector != collector:
		return nil, inUse(dir, filepath.Join(dir, dataLockFile), h.f)
	case h == nil:
		f, err := lockDataFolder(dir)
		if err != nil {
			return nil, err
		}
		h = &heldFolder{f: f, collector: collector}
		heldFolders.by[key] = h
	}
	h.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			heldFolders.Lock()
			defer heldFolders.Unlock()
			if h.users--; h.users == 0 {
				h.f.Close() // closing the file lets go of the lock
				delete(heldFolders.by, key)
			}
		})
	}, nil
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
		defer f.Close()
		return nil, inUse(dir, path, f)
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

// inUse is the refusal of a folder another collector holds, naming it
// from what it wrote in the lock file.
func inUse(dir, path string, lock *os.File) error {
	b := make([]byte, 512)
	n, _ := lock.ReadAt(b, 0)
	holder := strings.TrimSpace(string(b[:n]))
	if holder == "" {
		holder = "another process (it has not named itself in " + path + " yet)"
	}
	return fmt.Errorf("the data folder %s is in use by %s: one collector per data folder; stop that one, or give this one a folder of its own (the storage extension's directory, PERCAUSE_DATA_DIR in the shipped configurations)", dir, holder)
}
