package follow

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLinesAsTheFileGrows: each call gives the whole lines appended since
// the last, a partial line waits for its end, blank lines are left out, and
// a truncated file is read from its start.
func TestLinesAsTheFileGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	f := New(path)
	read := func() []string {
		t.Helper()
		var got []string
		if err := f.Lines(func(l []byte) { got = append(got, string(l)) }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(); got != nil {
		t.Fatalf("a missing file gave %q", got)
	}
	appendTo := func(s string) {
		t.Helper()
		w, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		write string
		want  []string
	}{
		{"a\n\n  b \r\nc", []string{"a", "b"}},
		{"d\n", []string{"cd"}},
		{"", nil},
		{"e\n", []string{"e"}},
	}
	for i, s := range steps {
		appendTo(s.write)
		if got := read(); !slices.Equal(got, s.want) {
			t.Errorf("step %d: %q, want %q", i+1, got, s.want)
		}
	}
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("after truncation: %q, want [x]", got)
	}
}

// TestRotatedFileLongerThanWhatWasRead: the path now names another file
// that has already grown past what was read of the first (a rotation the
// reader did not see happen): it is read from its start, because its
// first bytes are not the first file's.
func TestRotatedFileLongerThanWhatWasRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.jsonl")
	if err := os.WriteFile(path, []byte("first file, line 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := New(path)
	var got []string
	read := func() {
		t.Helper()
		if err := f.Lines(func(l []byte) { got = append(got, string(l)) }); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("second file, line 1\nsecond file, line 2\nsecond file, line 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read()
	want := []string{"first file, line 1", "second file, line 1", "second file, line 2", "second file, line 3"}
	if !slices.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
}

// TestReadsAreBounded: a file larger than a chunk is read over several
// calls, no line lost or split, and a line longer than MaxLine is skipped
// and counted.
func TestReadsAreBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	line := bytes.Repeat([]byte("x"), 1000)
	var b bytes.Buffer
	n := ChunkSize/len(line) + 100
	for range n {
		b.Write(line)
		b.WriteByte('\n')
	}
	b.Write(bytes.Repeat([]byte("y"), MaxLine+1))
	b.WriteString("\nlast\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := New(path)
	lines, calls := 0, 0
	var last string
	for ; calls < 100; calls++ {
		before := lines
		if err := f.Lines(func(l []byte) {
			lines++
			last = string(l)
			if len(l) != len(line) && string(l) != "last" {
				t.Fatalf("a line of %d bytes", len(l))
			}
		}); err != nil {
			t.Fatal(err)
		}
		if lines == before && last == "last" {
			break
		}
	}
	if lines != n+1 || last != "last" || f.Skipped() != 1 {
		t.Fatalf("%d lines (want %d), last %q, %d skipped (want 1)", lines, n+1, last, f.Skipped())
	}
	if calls < 2 {
		t.Fatalf("read in %d calls; a file past ChunkSize takes more than one", calls)
	}
}

// TestLastLines: the last n lines, a shorter file whole, a missing one "".
func TestLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{2, "two\nthree"}, {3, "one\ntwo\nthree"}, {9, "one\ntwo\nthree"}} {
		if got := LastLines(path, tc.n); got != tc.want {
			t.Errorf("LastLines(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := LastLines(filepath.Join(t.TempDir(), "none"), 2); got != "" {
		t.Errorf("a missing file: %q, want \"\"", got)
	}
}
