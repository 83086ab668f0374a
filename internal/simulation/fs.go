package simulation

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/percause/percause/internal/leaf/vfs"
)

// FS is a file system in memory that keeps apart what a process wrote
// (the page cache: what a crash keeps) from what reached the disk (what a
// power loss keeps), and fails any call the schedule says. Directory
// entries are on the disk only once their directory is synced, file data
// once the file is.
type FS struct {
	mu sync.Mutex
	// files is the namespace as the process sees it; durable as the disk
	// has it (as of the last SyncDir).
	files   map[string]*inode
	durable map[string]*inode
	dirs    map[string]bool
	faults  *faults
	// ops counts the calls a fault can hit; written the bytes the writes
	// among them asked to write (a schedule that replays alike asks alike).
	ops, written int
	// crashed: the process is dead (a crash or a power loss at crashAt);
	// every call fails until the simulation restarts it on an image.
	crashed bool
	crashAt int
	// powerLoss: the death at crashAt is a power loss, not a kill.
	powerLoss bool
	// gen counts the processes started on these files; died is closed
	// when the current one dies.
	gen  int
	died chan struct{}
	// journal is what the file system did that a reader of a failing
	// schedule wants: faults, crashes, what a power loss left.
	journal *journal
}

type inode struct {
	data   []byte // what the process wrote
	synced []byte // what is on the disk
}

// errCrashed is what every call gets once the process is dead: nothing it
// does after reaches anything.
var errCrashed = errors.New("simulation: the process is dead")

func newFS(j *journal) *FS {
	return &FS{files: map[string]*inode{}, durable: map[string]*inode{}, dirs: map[string]bool{}, crashAt: -1, journal: j,
		died: make(chan struct{})}
}

func (fs *FS) event(format string, args ...any) { fs.journal.add(fmt.Sprintf(format, args...)) }

// journal is what happened in a schedule, in order, from every goroutine.
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (j *journal) add(line string) {
	j.mu.Lock()
	j.lines = append(j.lines, line)
	j.mu.Unlock()
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.lines)
}

// step counts one faultable call and says how it fails (nil: it does
// not). A write may be cut short: keep is then how much of it lands.
func (fs *FS) step(gen int, what, name string, n int) (keep int, err error) {
	if fs.goneLocked(gen) {
		return 0, errCrashed
	}
	op := fs.ops
	fs.ops++
	if what == "write" {
		fs.written += n
	}
	if op == fs.crashAt {
		fs.die()
		keep = 0
		if n > 0 {
			keep = fs.faults.rng.IntN(n + 1) // a crash in the middle of a write
		}
		fs.event("crash at fs op %d (%s %s, %d of %d bytes landed)", op, what, filepath.Base(name), keep, n)
		return keep, errCrashed
	}
	if fs.faults == nil {
		return n, nil
	}
	err = fs.faults.at(op, what)
	if err == nil {
		return n, nil
	}
	keep = 0
	if what == "write" && n > 1 && fs.faults.rng.IntN(2) == 0 {
		keep = fs.faults.rng.IntN(n-1) + 1 // a short write
	}
	fs.event("fs op %d: %s %s fails with %v (%d of %d bytes written)", op, what, filepath.Base(name), err, keep, n)
	return keep, err
}

// processFS is the files as one process sees them: once it died, every
// call of its (through any handle it opened) fails, even after the
// simulation started another process on the files. A call the death left
// running (the pebble engine's goroutines) touches nothing of the next.
type processFS struct {
	fs  *FS
	gen int
}

// process is the files as the process started now sees them.
func (fs *FS) process() processFS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return processFS{fs: fs, gen: fs.gen}
}

// goneLocked reports whether process gen is dead.
func (fs *FS) goneLocked(gen int) bool { return fs.crashed || gen != fs.gen }

// ReadFile is the file as the simulation finds it.
func (fs *FS) ReadFile(name string) ([]byte, error) { return fs.process().ReadFile(name) }

func (p processFS) OpenFile(name string, flag int, _ os.FileMode) (vfs.File, error) {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	name = filepath.Clean(name)
	ino, ok := fs.files[name]
	if !ok {
		if flag&os.O_CREATE == 0 {
			return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
		}
		if _, err := fs.step(p.gen, "create", name, 0); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		ino = &inode{}
		fs.files[name] = ino
	} else if flag&os.O_TRUNC != 0 {
		if _, err := fs.step(p.gen, "truncate", name, 0); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		ino.data = nil
	}
	return &file{fs: fs, gen: p.gen, name: name, ino: ino, flag: flag}, nil
}

func (p processFS) ReadFile(name string) ([]byte, error) {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.goneLocked(p.gen) {
		return nil, errCrashed
	}
	ino, ok := fs.files[filepath.Clean(name)]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return slices.Clone(ino.data), nil
}

func (p processFS) List(dir string) ([]string, error) {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.goneLocked(p.gen) {
		return nil, errCrashed
	}
	dir = filepath.Clean(dir)
	var names []string
	for p := range fs.files {
		if filepath.Dir(p) == dir {
			names = append(names, filepath.Base(p))
		}
	}
	sort.Strings(names)
	return names, nil
}

func (p processFS) Exists(name string) (bool, error) {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.goneLocked(p.gen) {
		return false, errCrashed
	}
	_, ok := fs.files[filepath.Clean(name)]
	return ok, nil
}

func (p processFS) Rename(oldName, newName string) error {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	oldName, newName = filepath.Clean(oldName), filepath.Clean(newName)
	ino, ok := fs.files[oldName]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldName, New: newName, Err: os.ErrNotExist}
	}
	if _, err := fs.step(p.gen, "rename", newName, 0); err != nil {
		return &os.LinkError{Op: "rename", Old: oldName, New: newName, Err: err}
	}
	delete(fs.files, oldName)
	fs.files[newName] = ino
	return nil
}

func (p processFS) Remove(name string) error {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	name = filepath.Clean(name)
	if _, ok := fs.files[name]; !ok {
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	}
	if _, err := fs.step(p.gen, "remove", name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	delete(fs.files, name)
	return nil
}

func (p processFS) Truncate(name string, size int64) error {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ino, ok := fs.files[filepath.Clean(name)]
	if !ok {
		return &os.PathError{Op: "truncate", Path: name, Err: os.ErrNotExist}
	}
	if _, err := fs.step(p.gen, "truncate", name, 0); err != nil {
		return &os.PathError{Op: "truncate", Path: name, Err: err}
	}
	ino.truncate(size)
	return nil
}

func (p processFS) MkdirAll(dir string, _ os.FileMode) error {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.goneLocked(p.gen) {
		return errCrashed
	}
	for d := filepath.Clean(dir); !fs.dirs[d]; d = filepath.Dir(d) {
		fs.dirs[d] = true
	}
	return nil
}

// SyncDir puts the directory's entries on the disk: the files in it as
// the process sees them.
func (p processFS) SyncDir(dir string) error { return p.syncDir(dir, "syncdir") }

// syncDir syncs dir as a call of the kind what.
func (p processFS) syncDir(dir, what string) error {
	fs := p.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir = filepath.Clean(dir)
	if _, err := fs.step(p.gen, what, dir, 0); err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	for p := range fs.durable {
		if filepath.Dir(p) == dir {
			delete(fs.durable, p)
		}
	}
	for p, ino := range fs.files {
		if filepath.Dir(p) == dir {
			fs.durable[p] = ino
		}
	}
	return nil
}

func (ino *inode) truncate(size int64) {
	if int(size) <= len(ino.data) {
		ino.data = ino.data[:size:size]
		return
	}
	ino.data = append(ino.data, make([]byte, int(size)-len(ino.data))...)
}

// Inline: what a component does on the side (a compaction's snapshot) it
// does on the caller's goroutine, so the calls come in the seed's order.
func (p processFS) Inline() bool { return true }

// dead reports whether the process died.
func (fs *FS) dead() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.crashed
}

// die ends the process: every call after fails (or, from the pebble
// engine, never returns), and died tells whoever waits on it.
func (fs *FS) die() {
	fs.crashed = true
	close(fs.died)
}

// dying is closed when the current process dies.
func (fs *FS) dying() <-chan struct{} {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.died
}

// reborn is a new process on the files.
func (fs *FS) reborn() {
	fs.crashed, fs.crashAt, fs.powerLoss = false, -1, false
	fs.gen++
	fs.died = make(chan struct{})
}

// parkIfDead stops a call of the pebble engine's from a process that
// died: a dead process does nothing more, and Pebble's goroutines, whose
// calls would fail, would retry them in a loop that never ends.
func (fs *FS) parkIfDead(gen int) {
	fs.mu.Lock()
	dead := fs.goneLocked(gen)
	fs.mu.Unlock()
	if dead {
		select {}
	}
}

// stopFaults ends the faults (the recovery at a schedule's end): no call
// fails, and a death armed does not come. The process's own goroutines
// call in meanwhile, hence the lock.
func (fs *FS) stopFaults() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.faults != nil {
		fs.faults.off = true
	}
	fs.crashAt, fs.powerLoss = -1, false
}

// killAt kills the process at the nth file system call from now.
func (fs *FS) killAt(n int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.crashAt = fs.ops + n
}

// restartAfterCrash is the image a process death leaves: everything
// written stays (the kernel has it), on the disk or not.
func (fs *FS) restartAfterCrash() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.reborn()
}

// restartAfterPowerLoss is the image a power loss leaves: the entries of
// the last directory sync, each file's synced data, and past it, in a file
// whose unsynced data was appended, what the disk may hold of it: none of
// it, a part, zeros or garbage of its length.
func (fs *FS) restartAfterPowerLoss(rng *rand.Rand) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.reborn()
	files := map[string]*inode{}
	names := make([]string, 0, len(fs.durable))
	for p := range fs.durable {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		ino := fs.durable[p]
		data := slices.Clone(ino.synced)
		if unsynced := len(ino.data) - len(ino.synced); unsynced > 0 && bytes.HasPrefix(ino.data, ino.synced) {
			n := rng.IntN(unsynced + 1)
			kind := []string{"none", "data", "zeros", "garbage"}[rng.IntN(4)]
			switch kind {
			case "none":
				n = 0
			case "data":
				data = append(data, ino.data[len(ino.synced):len(ino.synced)+n]...)
			case "zeros":
				data = append(data, make([]byte, n)...)
			case "garbage":
				junk := make([]byte, n)
				for i := range junk {
					junk[i] = byte(rng.Uint32())
				}
				data = append(data, junk...)
			}
			if n > 0 {
				fs.event("power loss: %s keeps its %d synced bytes and %d bytes of %s past them (%d were unsynced)",
					filepath.Base(p), len(ino.synced), n, kind, unsynced)
			}
		}
		files[p] = &inode{data: data, synced: slices.Clone(data)}
	}
	fs.files = files
	fs.durable = maps(files)
}

func maps(m map[string]*inode) map[string]*inode {
	out := make(map[string]*inode, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// names lists the files as the process sees them, for a failure's report.
func (fs *FS) names() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []string
	for p, ino := range fs.files {
		out = append(out, fmt.Sprintf("%s (%d bytes, %d synced)", filepath.Base(p), len(ino.data), len(ino.synced)))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// file is an open file: a handle on an inode, as on Linux, so a file
// renamed or removed while open is still written through its handle.
type file struct {
	fs   *FS
	gen  int // the process that opened it
	name string
	ino  *inode
	flag int
	off  int64
}

func (f *file) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.goneLocked(f.gen) {
		return 0, errCrashed
	}
	if f.off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[f.off:])
	f.off += int64(n)
	return n, nil
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.goneLocked(f.gen) {
		return 0, errCrashed
	}
	if off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *file) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
	}
	keep, err := f.fs.step(f.gen, "write", f.name, len(p))
	if f.flag&os.O_APPEND != 0 {
		f.off = int64(len(f.ino.data))
	}
	end := f.off + int64(keep)
	if end > int64(len(f.ino.data)) {
		f.ino.truncate(end)
	}
	copy(f.ino.data[f.off:end], p[:keep])
	f.off = end
	if err != nil {
		return keep, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return keep, nil
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	switch whence {
	case io.SeekStart:
		f.off = offset
	case io.SeekCurrent:
		f.off += offset
	case io.SeekEnd:
		f.off = int64(len(f.ino.data)) + offset
	}
	return f.off, nil
}

func (f *file) Close() error { return nil }

func (f *file) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if _, err := f.fs.step(f.gen, "truncate", f.name, 0); err != nil {
		return &os.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	f.ino.truncate(size)
	return nil
}

func (f *file) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.goneLocked(f.gen) {
		return 0, errCrashed
	}
	return int64(len(f.ino.data)), nil
}

func (f *file) Sync() error { return f.Datasync() }

func (f *file) Datasync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if _, err := f.fs.step(f.gen, "sync", f.name, 0); err != nil {
		return &os.PathError{Op: "sync", Path: f.name, Err: err}
	}
	f.ino.synced = slices.Clone(f.ino.data)
	return nil
}
