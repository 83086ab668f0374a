package simulation

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
)

// pebbleFS is the simulated file system as Pebble asks for one, so the
// pebble engine runs on the same files, faults, kills and power losses as
// the log. Directories are kept as the simulated file system keeps them:
// a directory made exists through any death (only its entries need a
// sync), which is what Pebble's own directory syncs then decide.
type pebbleFS struct {
	fs  *FS
	gen int // the process that opened the database
}

var _ pebblevfs.FS = pebbleFS{}

// PebbleFS is the file system the pebble engine opens its database on
// (shared_storage looks for it on the file system it was given).
func (p processFS) PebbleFS() pebblevfs.FS { return pebbleFS(p) }

// files is the files as the process that opened the database sees them.
func (p pebbleFS) files() processFS { return processFS(p) }

// Fatal is what the process does on an error Pebble cannot go on after:
// it ends, as the collector's exit would, every call after fails, and the
// call never returns (Pebble goes on as if committed when it does, which
// the exit never lets it).
func (p processFS) Fatal(msg string) {
	fs := p.fs
	fs.mu.Lock()
	if !fs.goneLocked(p.gen) {
		fs.die()
		fs.event("the process ends: %s", msg)
	}
	fs.mu.Unlock()
	select {}
}

// Create makes name anew: an existing file is removed first, so a handle
// still open on it keeps the old data, as Pebble expects.
func (p pebbleFS) Create(name string, _ pebblevfs.DiskWriteCategory) (pebblevfs.File, error) {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	if ok, err := p.files().Exists(name); err != nil {
		return nil, err
	} else if ok {
		if err := p.files().Remove(name); err != nil {
			return nil, err
		}
	}
	f, err := p.files().OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	return pebbleFile{f.(*file), p.gen}, nil
}

func (p pebbleFS) Link(oldname, newname string) error {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: errors.ErrUnsupported}
}

func (p pebbleFS) Open(name string, opts ...pebblevfs.OpenOption) (pebblevfs.File, error) {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	f, err := p.files().OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	pf := pebbleFile{f.(*file), p.gen}
	for _, o := range opts {
		o.Apply(pf)
	}
	return pf, nil
}

func (p pebbleFS) OpenReadWrite(name string, _ pebblevfs.DiskWriteCategory, opts ...pebblevfs.OpenOption) (pebblevfs.File, error) {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	f, err := p.files().OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	pf := pebbleFile{f.(*file), p.gen}
	for _, o := range opts {
		o.Apply(pf)
	}
	return pf, nil
}

func (p pebbleFS) OpenDir(name string) (pebblevfs.File, error) {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	if !p.isDir(name) {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return dirFile{fs: p.fs, gen: p.gen, name: filepath.Clean(name)}, nil
}

func (p pebbleFS) Remove(name string) error {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	if p.isDir(name) {
		return p.removeDir(name, false)
	}
	return p.files().Remove(name)
}

func (p pebbleFS) RemoveAll(name string) error {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	if !p.isDir(name) {
		err := p.files().Remove(name)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return p.removeDir(name, true)
}

// removeDir removes the directory name, and with all what is in it, in
// name order (the calls a fault can hit come in one order).
func (p pebbleFS) removeDir(name string, all bool) error {
	name = filepath.Clean(name)
	var inside []string
	p.fs.mu.Lock()
	for f := range p.fs.files {
		if strings.HasPrefix(f, name+string(filepath.Separator)) {
			inside = append(inside, f)
		}
	}
	p.fs.mu.Unlock()
	if len(inside) > 0 && !all {
		return &os.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
	}
	sort.Strings(inside)
	for _, f := range inside {
		if err := p.files().Remove(f); err != nil {
			return err
		}
	}
	p.fs.mu.Lock()
	defer p.fs.mu.Unlock()
	for d := range p.fs.dirs {
		if d == name || strings.HasPrefix(d, name+string(filepath.Separator)) {
			delete(p.fs.dirs, d)
		}
	}
	return nil
}

func (p pebbleFS) Rename(oldname, newname string) error {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	return p.files().Rename(oldname, newname)
}

// ReuseForWrite renames oldname to newname and opens it for writing, its
// old bytes left in place for Pebble to write over (a recycled log).
func (p pebbleFS) ReuseForWrite(oldname, newname string, category pebblevfs.DiskWriteCategory) (pebblevfs.File, error) {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	if err := p.files().Rename(oldname, newname); err != nil {
		return nil, err
	}
	return p.OpenReadWrite(newname, category)
}

func (p pebbleFS) MkdirAll(dir string, perm os.FileMode) error {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	return p.files().MkdirAll(dir, perm)
}

// Lock: one process runs at a time in the simulation.
func (p pebbleFS) Lock(string) (io.Closer, error) { return io.NopCloser(nil), nil }

// List names the files and directories directly in dir.
func (p pebbleFS) List(dir string) ([]string, error) {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	names, err := p.files().List(dir)
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	p.fs.mu.Lock()
	for d := range p.fs.dirs {
		if filepath.Dir(d) == dir && d != dir {
			names = append(names, filepath.Base(d))
		}
	}
	p.fs.mu.Unlock()
	sort.Strings(names)
	return names, nil
}

func (p pebbleFS) Stat(name string) (pebblevfs.FileInfo, error) {
	p.fs.parkIfDead(p.gen)
	defer p.fs.parkIfDead(p.gen) // a call the death cut is not answered
	if p.isDir(name) {
		return fileInfo{name: filepath.Base(name), dir: true}, nil
	}
	p.fs.mu.Lock()
	defer p.fs.mu.Unlock()
	if p.fs.crashed {
		return nil, errCrashed
	}
	ino, ok := p.fs.files[filepath.Clean(name)]
	if !ok {
		return nil, &os.PathError{Op: "stat", Path: name, Err: os.ErrNotExist}
	}
	return fileInfo{name: filepath.Base(name), size: int64(len(ino.data))}, nil
}

func (p pebbleFS) isDir(name string) bool {
	p.fs.mu.Lock()
	defer p.fs.mu.Unlock()
	return p.fs.dirs[filepath.Clean(name)]
}

func (pebbleFS) PathBase(path string) string    { return filepath.Base(path) }
func (pebbleFS) PathJoin(elem ...string) string { return filepath.Join(elem...) }
func (pebbleFS) PathDir(path string) string     { return filepath.Dir(path) }
func (pebbleFS) Unwrap() pebblevfs.FS           { return nil }
func (pebbleFS) GetDiskUsage(string) (pebblevfs.DiskUsage, error) {
	return pebblevfs.DiskUsage{AvailBytes: 1 << 30, TotalBytes: 1 << 30}, nil
}

// pebbleFile is a simulated file as Pebble writes and reads it: every
// write and sync is a call a fault can hit.
type pebbleFile struct {
	f   *file
	gen int
}

func (p pebbleFile) Close() error { return p.f.Close() }
func (p pebbleFile) Read(b []byte) (int, error) {
	p.f.fs.parkIfDead(p.gen)
	defer p.f.fs.parkIfDead(p.gen) // a call the death cut is not answered
	return p.f.Read(b)
}

func (p pebbleFile) ReadAt(b []byte, off int64) (int, error) {
	p.f.fs.parkIfDead(p.gen)
	defer p.f.fs.parkIfDead(p.gen) // a call the death cut is not answered
	return p.f.ReadAt(b, off)
}

func (p pebbleFile) Write(b []byte) (int, error) {
	p.f.fs.parkIfDead(p.gen)
	defer p.f.fs.parkIfDead(p.gen) // a call the death cut is not answered
	return p.f.Write(b)
}

// WriteAt writes at off; Pebble calls it on files it opened to read and
// write, one write at a time.
func (p pebbleFile) WriteAt(b []byte, off int64) (int, error) {
	p.f.fs.parkIfDead(p.gen)
	defer p.f.fs.parkIfDead(p.gen) // a call the death cut is not answered
	if _, err := p.f.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return p.f.Write(b)
}

func (p pebbleFile) Preallocate(int64, int64) error { return nil }

func (p pebbleFile) Stat() (pebblevfs.FileInfo, error) {
	p.f.fs.parkIfDead(p.gen)
	defer p.f.fs.parkIfDead(p.gen) // a call the death cut is not answered
	n, err := p.f.Size()
	if err != nil {
		return nil, err
	}
	return fileInfo{name: filepath.Base(p.f.name), size: n}, nil
}

func (p pebbleFile) Sync() error { return p.SyncData() }

func (p pebbleFile) SyncData() error {
	p.f.fs.parkIfDead(p.gen)
	defer p.f.fs.parkIfDead(p.gen) // a call the death cut is not answered
	return p.f.Datasync()
}

// SyncTo syncs the whole file: a prefix is not what a simulated disk
// keeps apart.
func (p pebbleFile) SyncTo(int64) (bool, error) { return true, p.SyncData() }

func (p pebbleFile) Prefetch(int64, int64) error { return nil }
func (p pebbleFile) Fd() uintptr                 { return pebblevfs.InvalidFd }

// dirFile is an open directory: its Sync is the directory's.
type dirFile struct {
	fs   *FS
	gen  int
	name string
}

func (d dirFile) Close() error                      { return nil }
func (d dirFile) Read([]byte) (int, error)          { return 0, errIsDir(d.name) }
func (d dirFile) ReadAt([]byte, int64) (int, error) { return 0, errIsDir(d.name) }
func (d dirFile) Write([]byte) (int, error)         { return 0, errIsDir(d.name) }
func (d dirFile) WriteAt([]byte, int64) (int, error) {
	return 0, errIsDir(d.name)
}
func (d dirFile) Preallocate(int64, int64) error { return nil }
func (d dirFile) Stat() (pebblevfs.FileInfo, error) {
	return fileInfo{name: filepath.Base(d.name), dir: true}, nil
}
func (d dirFile) Sync() error { return d.SyncData() }

func (d dirFile) SyncData() error {
	d.fs.parkIfDead(d.gen)
	defer d.fs.parkIfDead(d.gen) // a call the death cut is not answered
	return processFS{fs: d.fs, gen: d.gen}.syncDir(d.name, syncDirPebble)
}

// syncDirPebble is the kind of a directory sync Pebble asks for: no fault
// hits it, since Pebble panics on a failed one (its marker's move, after a
// compaction, on a goroutine of its own), which would end the simulation's
// process, not the simulated one's. A kill or a power loss at that call
// still happens: the death it stands for is simulated.
const syncDirPebble = "syncdir (pebble)"

func (d dirFile) SyncTo(int64) (bool, error)  { return false, nil }
func (d dirFile) Prefetch(int64, int64) error { return nil }
func (d dirFile) Fd() uintptr                 { return pebblevfs.InvalidFd }

func errIsDir(name string) error {
	return &os.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
}

type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
func (i fileInfo) ModTime() time.Time           { return time.Time{} }
func (i fileInfo) IsDir() bool                  { return i.dir }
func (i fileInfo) Sys() any                     { return nil }
func (i fileInfo) DeviceID() pebblevfs.DeviceID { return pebblevfs.DeviceID{} }
