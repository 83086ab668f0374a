package follow

import (
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
