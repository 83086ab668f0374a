// Package follow reads a file of lines as it grows (the verdict file, a
// pipeline's traces file): each call reads what was appended since the last
// one and keeps a line still being written for the next.
//
// A file is known by its first bytes, as the collector's file consumer
// knows one: when the file at the path no longer starts with the bytes
// read from it (it was rotated, or truncated and written anew, even to a
// size past what was read), it is read again from its start. Reads are
// bounded: at most ChunkSize a call (the rest waits for the next), and a
// line longer than MaxLine is skipped, counted by Skipped.
package follow

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
)

const (
	// FingerprintSize is how many of a file's first bytes identify it.
	FingerprintSize = 1024
	// ChunkSize bounds what one call reads.
	ChunkSize = 4 << 20
	// MaxLine bounds a line: a longer one is skipped.
	MaxLine = 64 << 20
)

// File follows one file. It is not safe for concurrent use.
type File struct {
	path    string
	offset  int64
	partial []byte
	// print holds the file's first bytes as read so far (up to
	// FingerprintSize): the identity of the file being followed.
	print []byte
	// skipping: the line being read is past MaxLine; its rest is dropped.
	skipping bool
	skipped  int
}

// New follows the file at path (it need not exist yet).
func New(path string) *File { return &File{path: path} }

// Skipped is how many lines longer than MaxLine were skipped so far.
func (f *File) Skipped() int { return f.skipped }

// Lines calls fn with every whole line appended since the last call,
// trimmed, blank lines left out. A file that does not exist yet has none; a
// file that is no longer the one read (its first bytes differ, or it is
// shorter than what was read) is read again from its start. fn must not
// keep line.
func (f *File) Lines(fn func(line []byte)) error {
	file, err := os.Open(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	if same, err := f.sameFile(file); err != nil {
		return err
	} else if !same {
		f.offset, f.partial, f.print, f.skipping = 0, nil, nil, false
	}
	st, err := file.Stat()
	if err != nil {
		return err
	}
	if st.Size() <= f.offset {
		return nil
	}
	data := make([]byte, min(st.Size()-f.offset, ChunkSize))
	n, err := file.ReadAt(data, f.offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	data = data[:n]
	f.remember(data)
	f.offset += int64(n)
	f.split(data, fn)
	return nil
}

// sameFile reports whether the file starts with the bytes read from it.
func (f *File) sameFile(file *os.File) (bool, error) {
	st, err := file.Stat()
	if err != nil {
		return false, err
	}
	if st.Size() < f.offset {
		return false, nil
	}
	if len(f.print) == 0 {
		return true, nil
	}
	head := make([]byte, len(f.print))
	if _, err := file.ReadAt(head, 0); err != nil {
		return false, nil
	}
	return bytes.Equal(head, f.print), nil
}

// remember keeps the file's first bytes, when data reaches into them.
func (f *File) remember(data []byte) {
	if have := int64(len(f.print)); have < FingerprintSize && f.offset == have {
		f.print = append(f.print, data[:min(len(data), FingerprintSize-len(f.print))]...)
	}
}

// split hands fn the whole lines of what came, keeping the partial one.
func (f *File) split(data []byte, fn func(line []byte)) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if f.skipping || len(f.partial)+len(data) > MaxLine {
				f.partial, f.skipping = nil, true // the rest of an over-long line
				return
			}
			f.partial = append(f.partial, data...) // still being written
			return
		}
		chunk := data[:i]
		data = data[i+1:]
		if f.skipping || len(f.partial)+len(chunk) > MaxLine {
			f.partial, f.skipping = nil, false
			f.skipped++
			continue
		}
		line := chunk
		if len(f.partial) > 0 {
			line = append(f.partial, chunk...)
			f.partial = nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			fn(line)
		}
	}
}

// LastLines is the last n lines of the file at path ("" when it cannot be
// read): the end of a child process's log, for an error that says why the
// child did not come up.
func LastLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
