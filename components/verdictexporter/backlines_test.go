package verdictexporter

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/percause/percause/internal/leaf/vfs"
)

// FuzzBackLines: whatever the file holds and however small the chunks,
// the lines come back last first, each as it is (a last line without its
// newline too), one of maxLine bytes or more as errLineTooLong; every
// byte is read once.
func FuzzBackLines(f *testing.F) {
	for _, s := range []string{"", "\n", "\n\n", "a", "a\n", "a\nb", "a\nb\n", "\nab\n\ncd", "longer than the chunk\nx\n", strings.Repeat("y", 40) + "\nz\n"} {
		f.Add([]byte(s), uint8(3), uint8(8))
		f.Add([]byte(s), uint8(1), uint8(255))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk, limit uint8) {
		c, m := int(chunk)%17+1, int(limit)%48+1
		var want [][]byte
		if len(data) > 0 {
			want = bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		}
		b := newBackLines(bytes.NewReader(data), int64(len(data)), c, m)
		for i := len(want) - 1; ; i-- {
			line, err := b.prev()
			if errors.Is(err, io.EOF) {
				if i != -1 {
					t.Fatalf("%q (chunk %d): EOF with %d lines still to come", data, c, i+1)
				}
				break
			}
			if i < 0 {
				t.Fatalf("%q (chunk %d): a line %q past the first", data, c, line)
			}
			switch {
			case len(want[i]) >= m:
				if !errors.Is(err, errLineTooLong) {
					t.Fatalf("%q (chunk %d, max %d): line %d (%d bytes) read as %q, %v; want errLineTooLong", data, c, m, i, len(want[i]), line, err)
				}
			case err != nil || !bytes.Equal(line, want[i]):
				t.Fatalf("%q (chunk %d, max %d): line %d read as %q, %v; want %q", data, c, m, i, line, err, want[i])
			}
		}
		if b.read != int64(len(data)) {
			t.Fatalf("%q (chunk %d): %d bytes read, want each of %d once", data, c, b.read, len(data))
		}
	})
}

// TestCutTornTail: a last line without its newline is cut off, however
// long (longer than a chunk too); a file of whole lines is left alone.
func TestCutTornTail(t *testing.T) {
	long := strings.Repeat("x", 3*backChunk+7)
	for _, tc := range []struct{ file, want string }{
		{"", ""}, {"a\n", "a\n"}, {"a\nb", "a\n"}, {"torn", ""}, {"a\nb\n" + long, "a\nb\n"}, {long, ""}, {long + "\n", long + "\n"},
	} {
		path := filepath.Join(t.TempDir(), "v.jsonl")
		if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := vfs.OS.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		size, cut, err := cutTornTail(f)
		f.Close()
		got, _ := os.ReadFile(path)
		if err != nil || string(got) != tc.want || size != int64(len(tc.want)) || cut != int64(len(tc.file)-len(tc.want)) {
			t.Errorf("a file of %d bytes: %d bytes left (%d cut, size %d), %v; want %d", len(tc.file), len(got), cut, size, err, len(tc.want))
		}
	}
}
