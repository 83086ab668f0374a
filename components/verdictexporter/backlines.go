package verdictexporter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// backChunk is how much of the file one read takes, going backwards.
const backChunk = 256 << 10

// errLineTooLong is a line of the reader's maxLine bytes or more: it is
// skipped whole, and never held once it is known to be that long.
var errLineTooLong = errors.New("line too long")

// backLines reads a file's lines last first, a chunk at a time: it holds
// the chunk and the part of a line that began before it, never the file.
type backLines struct {
	r       io.ReaderAt
	chunk   int
	maxLine int

	// off is where the bytes not read yet end: the file's [0, off).
	off int64
	// buf[:n] is the file's [off, off+n), read but not yet returned; its
	// end is a line's end (after its newline, or the file's end).
	buf []byte
	n   int
	// read counts the bytes read from r.
	read int64
}

// newBackLines reads the first size bytes of r backwards, chunk bytes at a
// time; a line of maxLine bytes or more is reported as errLineTooLong.
func newBackLines(r io.ReaderAt, size int64, chunk, maxLine int) *backLines {
	return &backLines{r: r, chunk: max(chunk, 1), maxLine: max(maxLine, 1), off: size}
}

// prev returns the line before the one it returned last (the last line
// first), without its newline; io.EOF once the file's first line was
// returned. The line is valid until the next call. A last line without a
// newline is a line too.
func (b *backLines) prev() ([]byte, error) {
	for {
		end := b.n
		if end > 0 && b.buf[end-1] == '\n' {
			end--
		}
		if i := bytes.LastIndexByte(b.buf[:end], '\n'); i >= 0 {
			b.n = i + 1
			return b.line(b.buf[i+1 : end])
		}
		if b.off == 0 {
			if b.n == 0 {
				return nil, io.EOF
			}
			b.n = 0
			return b.line(b.buf[:end])
		}
		if end >= b.maxLine {
			return nil, b.skipLong()
		}
		if err := b.readMore(); err != nil {
			return nil, err
		}
	}
}

// line is what prev returns for a whole line held.
func (b *backLines) line(l []byte) ([]byte, error) {
	if len(l) >= b.maxLine {
		return nil, errLineTooLong
	}
	return l, nil
}

// readMore puts the chunk before off in front of what is held.
func (b *backLines) readMore() error {
	c := int(min(int64(b.chunk), b.off))
	need := c + b.n
	if cap(b.buf) < need {
		nb := make([]byte, need, max(need, 2*cap(b.buf)))
		copy(nb[c:], b.buf[:b.n])
		b.buf = nb
	} else {
		b.buf = b.buf[:need]
		copy(b.buf[c:], b.buf[:b.n])
	}
	if err := b.readAt(b.buf[:c], b.off-int64(c)); err != nil {
		return err
	}
	b.off -= int64(c)
	b.n = need
	return nil
}

// skipLong drops the line held (longer than maxLine) and reads back to
// the newline before it, a chunk at a time, holding none of it.
func (b *backLines) skipLong() error {
	b.n = 0
	for b.off > 0 {
		c := int(min(int64(b.chunk), b.off))
		if cap(b.buf) < c {
			b.buf = make([]byte, c)
		}
		b.buf = b.buf[:c]
		if err := b.readAt(b.buf, b.off-int64(c)); err != nil {
			return err
		}
		b.off -= int64(c)
		if i := bytes.LastIndexByte(b.buf, '\n'); i >= 0 {
			b.n = i + 1
			break
		}
	}
	return errLineTooLong
}

func (b *backLines) readAt(p []byte, at int64) error {
	n, err := b.r.ReadAt(p, at)
	b.read += int64(n)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading at %d: %w", at, err)
}
