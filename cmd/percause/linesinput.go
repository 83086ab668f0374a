package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/percause/percause/exporters/textlines"
)

// What `percause lines` reads: the files in the order their lines were
// written, each opened as text (a rotated file compressed by logrotate
// too), and a tally of every line by what became of it.

// inputFile is one file named on the command line.
type inputFile struct {
	name  string // as given; "-" is standard input
	label string // as reports name it
	// base and rotation: phone.log.2.gz is rotation 2 of phone.log.
	base     string
	rotation int
	// first is the time of its first timestamped tagged line (zero: none
	// found near its start).
	first time.Time
	// skip says why the file is not read ("" : it is).
	skip string
}

// rotatedName matches the names logrotate and most loggers give rotated
// files: phone.log.1, phone.log.2.gz, phone.log-20261130(.gz),
// phone.log.2026-11-30.
var rotatedName = regexp.MustCompile(`^(.*?)(?:\.(\d+)|-(\d{8})|\.(\d{4}-\d{2}-\d{2}))?(?:\.gz)?$`)

// sniffBytes is how much of a file's start is read to tell text from
// binary; sniffLines bounds the lines read for its first timestamp.
const (
	sniffBytes = 8 << 10
	sniffLines = 1000
)

// inspect names the files, says which cannot be read as lines, and finds
// each one's first timestamp.
func inspect(names []string) ([]inputFile, error) {
	files := make([]inputFile, len(names))
	for i, n := range names {
		f := inputFile{name: n, label: n, base: n}
		if n == "-" {
			f.label, f.base = "(stdin)", "(stdin)"
			files[i] = f
			continue
		}
		if m := rotatedName.FindStringSubmatch(filepath.Base(n)); m != nil {
			f.base = filepath.Join(filepath.Dir(n), m[1])
			switch {
			case m[2] != "":
				f.rotation, _ = strconv.Atoi(m[2])
			case m[3] != "", m[4] != "":
				// dated: their time orders them (a newer date, a later file)
				f.rotation = -1
			}
		}
		r, closeFile, err := openText(n)
		if err != nil {
			return nil, err
		}
		f.skip, f.first, err = sniff(r)
		closeFile()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", n, err)
		}
		files[i] = f
	}
	return files, nil
}

// openText opens a file for reading its lines, through gzip when it is
// compressed.
func openText(name string) (io.Reader, func(), error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return zr, func() { zr.Close(); f.Close() }, nil
	}
	return br, func() { f.Close() }, nil
}

// sniff says whether the text is empty or binary, and finds the time of
// its first timestamped tagged line.
func sniff(r io.Reader) (skip string, first time.Time, err error) {
	br := bufio.NewReaderSize(r, sniffBytes)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", time.Time{}, err
	}
	switch {
	case len(head) == 0:
		return "empty", time.Time{}, nil
	case bytes.IndexByte(head, 0) >= 0:
		return "a binary file, not lines of text", time.Time{}, nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 0; n < sniffLines && sc.Scan(); n++ {
		if rec, err := textlines.Read(sc.Text()); err == nil && !rec.Time.IsZero() {
			return "", rec.Time, nil
		}
	}
	return "", time.Time{}, nil
}

// inTimeOrder orders the rotations of each log from the oldest: by their
// first timestamps when each has one, else as rotation numbers say
// (phone.log.2, then phone.log.1, then phone.log). Different logs (the
// phone's, the engine's) keep the order they were named in, each where its
// first file was named.
func inTimeOrder(files []inputFile) []inputFile {
	var bases []string
	groups := map[string][]inputFile{}
	for _, f := range files {
		if _, ok := groups[f.base]; !ok {
			bases = append(bases, f.base)
		}
		groups[f.base] = append(groups[f.base], f)
	}
	out := make([]inputFile, 0, len(files))
	for _, b := range bases {
		g := groups[b]
		timed := true
		for _, f := range g {
			if f.first.IsZero() && f.skip == "" {
				timed = false
			}
		}
		sort.SliceStable(g, func(i, j int) bool {
			a, b := g[i], g[j]
			if timed && !a.first.IsZero() && !b.first.IsZero() {
				return a.first.Before(b.first)
			}
			return rotationAge(a) > rotationAge(b)
		})
		out = append(out, g...)
	}
	return out
}

// rotationAge ranks a file by how old its rotation number says it is: the
// live file 0, phone.log.1 1, phone.log.2 2.
func rotationAge(f inputFile) int { return max(f.rotation, 0) }

// lineTally counts every line read, by what became of it.
type lineTally struct {
	Read      int            `json:"read"`
	TurnLines int            `json:"turn_lines"`
	TakeLines int            `json:"take_lines"`
	Refused   map[string]int `json:"refused"`
	Unknown   map[string]int `json:"unknown_fields"`
	NotOurs   int            `json:"not_ours"`
	Files     []fileTally    `json:"files"`
}

// fileTally is one file's part, and why it was not read when it was not.
type fileTally struct {
	Name    string `json:"name"`
	Read    int    `json:"read"`
	Turns   int    `json:"turn_lines"`
	Skipped string `json:"skipped,omitempty"`
}

func newTally() *lineTally {
	return &lineTally{Refused: map[string]int{}, Unknown: map[string]int{}}
}

// moreUnknown names the unknown fields of a line past the ones it names.
const moreUnknown = "(more on the same lines)"

// count reads one line with the reader the lines connector reads it with
// and counts what it is.
func (t *lineTally) count(f *fileTally, line string) {
	t.Read++
	f.Read++
	rec, err := textlines.Read(line)
	var le *textlines.LineError
	switch {
	case errors.Is(err, textlines.ErrNotALine):
		t.NotOurs++
		return
	case errors.As(err, &le):
		t.Refused[le.Reason]++
		if le.Kind == textlines.KindTurn {
			t.TurnLines++
			f.Turns++
		} else {
			t.TakeLines++
		}
		return
	case err != nil:
		t.Refused[textlines.ReasonSyntax]++
		return
	}
	if rec.Kind == textlines.KindTurn {
		t.TurnLines++
		f.Turns++
	} else {
		t.TakeLines++
	}
	for _, k := range rec.UnknownKeys {
		t.Unknown[k]++
	}
	if more := rec.Unknown - len(rec.UnknownKeys); more > 0 {
		t.Unknown[moreUnknown] += more
	}
}

func (t *lineTally) refused() int {
	n := 0
	for _, c := range t.Refused {
		n += c
	}
	return n
}

// write prints the tally for a person: what was read, and what was not.
func (t *lineTally) write(w io.Writer) error {
	var files []string
	for _, f := range t.Files {
		s := fmt.Sprintf("%s %d", f.Name, f.Read)
		if f.Skipped != "" {
			s = fmt.Sprintf("%s not read: %s", f.Name, f.Skipped)
		}
		files = append(files, s)
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "lines: %d read (%s): %d turn lines, %d take lines, %d refused, %d not ours\n",
		t.Read, strings.Join(files, ", "), t.TurnLines, t.TakeLines, t.refused(), t.NotOurs)
	if n := t.refused(); n > 0 {
		var parts []string
		for _, r := range textlines.Reasons {
			if c := t.Refused[r]; c > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", r, c))
			}
		}
		fmt.Fprintf(b, "refused: %s (each on standard error, with its file, line and faults)\n", strings.Join(parts, ", "))
	}
	if len(t.Unknown) > 0 {
		names := make([]string, 0, len(t.Unknown))
		for k := range t.Unknown {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool {
			if a, b := t.Unknown[names[i]], t.Unknown[names[j]]; a != b {
				return a > b
			}
			return names[i] < names[j]
		})
		var parts []string
		for _, k := range names {
			parts = append(parts, fmt.Sprintf("%s %d", k, t.Unknown[k]))
		}
		fmt.Fprintf(b, "unknown fields (ignored): %s\n", strings.Join(parts, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
