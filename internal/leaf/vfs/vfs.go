// Package vfs is the file system the components that keep state write
// through: the operating system's in a collector, a simulated one in the
// fault simulation (internal/simulation), which fails, cuts short, crashes
// and loses power at any of these calls. It holds only what those
// components call, so every call is one the simulation can fault.
package vfs

import (
	"io"
	"os"
	"path/filepath"
	"sort"
)

// FS is a file system.
type FS interface {
	// OpenFile opens name as os.OpenFile does (O_CREATE, O_TRUNC,
	// O_APPEND, O_RDWR, O_WRONLY are the flags used).
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	ReadFile(name string) ([]byte, error)
	// List names the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Exists reports whether name exists (an error other than its
	// absence is returned).
	Exists(name string) (bool, error)
	Rename(oldName, newName string) error
	Remove(name string) error
	Truncate(name string, size int64) error
	MkdirAll(dir string, perm os.FileMode) error
	// SyncDir makes the directory's entries (files made, renamed,
	// removed) survive a power loss.
	SyncDir(dir string) error
}

// File is an open file.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Seeker
	io.Closer
	Truncate(size int64) error
	// Size is the file's length.
	Size() (int64, error)
	// Sync flushes the file's data and metadata to the disk.
	Sync() error
	// Datasync flushes its data and what is needed to read it back (its
	// size): an append needs no more.
	Datasync() error
}

// Inline reports whether work a component would do on the side on fs
// (a compaction's snapshot) is to be done on the caller's goroutine: a
// simulated file system's calls must come in an order its seed decides.
func Inline(fs FS) bool {
	i, ok := fs.(interface{ Inline() bool })
	return ok && i.Inline()
}

// OS is the operating system's file system.
var OS FS = osFS{}

// Or returns fs, or OS when fs is nil: a component's configuration leaves
// it nil.
func Or(fs FS) FS {
	if fs == nil {
		return OS
	}
	return fs
}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) Exists(name string) (bool, error) {
	_, err := os.Stat(name)
	if err == nil {
		return true, nil
	}
	if os.IsNotExist(err) {
		return false, nil
	}
	return false, err
}

func (osFS) Rename(oldName, newName string) error        { return os.Rename(oldName, newName) }
func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) Truncate(name string, size int64) error      { return os.Truncate(name, size) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (f osFile) Datasync() error { return datasync(f.File) }
