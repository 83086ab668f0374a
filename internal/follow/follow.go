// Package follow reads a file of lines as it grows (the verdict file, a
// pipeline's traces file): each call reads what was appended since the last
// one and keeps a line still being written for the next.
package follow

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// File follows one file. It is not safe for concurrent use.
type File struct {
	path    string
	offset  int64
	partial []byte
}

// New follows the file at path (it need not exist yet).
func New(path string) *File { return &File{path: path} }

// Lines calls fn with every whole line appended since the last call,
// trimmed, blank lines left out. A file that does not exist yet has none; a
// file shorter than what was read (rotated or truncated) is read again from
// its start. fn must not keep line.
func (f *File) Lines(fn func(line []byte)) error {
	file, err := os.Open(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}
	if st.Size() < f.offset {
		f.offset, f.partial = 0, nil
	}
	if _, err := file.Seek(f.offset, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return err
	}
	f.offset += int64(len(data))
	data = append(f.partial, data...)
	f.partial = nil
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			f.partial = append([]byte(nil), data...) // the rest is still being written
			break
		}
		line := bytes.TrimSpace(data[:i])
		data = data[i+1:]
		if len(line) > 0 {
			fn(line)
		}
	}
	return nil
}
