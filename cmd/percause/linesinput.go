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
	"github.com/percause/percause/internal/leaf/plural"
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
	if why := notText(head); why != "" {
		return why, time.Time{}, nil
	}
	lr := newLineReader(br)
	for n := 0; n < sniffLines; n++ {
		l, err := lr.next()
		if err != nil {
			break
		}
		for _, text := range l.parts {
			if rec, err := textlines.Read(text); err == nil && !rec.Time.IsZero() {
				return "", rec.Time, nil
			}
		}
	}
	return "", time.Time{}, nil
}

// notText says why a file's head is not lines of text ("" when it is):
// empty, or binary. NUL bytes are not counted: a crash leaves runs of
// them in a log, which the reader skips; a binary file has other control
// bytes too (an ELF header, a core dump, a database). A stray control byte
// in a log (fewer than 1 in 100) leaves it text.
func notText(head []byte) string {
	if len(head) == 0 {
		return "empty"
	}
	control, text := 0, 0
	for _, b := range head {
		switch {
		case b == 0:
		case b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f' && b != '\v' && b != 0x1b, b == 0x7f:
			control++
		default:
			text++
		}
	}
	if control > 0 && control*100 >= control+text {
		return "a binary file, not lines of text"
	}
	return ""
}

// maxLineBytes bounds a line the reader takes (NUL runs not counted): a
// longer one is refused, counted and named, and the reader goes on with
// the line after it. The line format's own bound is smaller
// (textlines.MaxLineBytes); past this one, the reader does not hold it.
const maxLineBytes = 1 << 20

// lineReader reads a log's lines as they are: any length (a line over
// maxLineBytes is read past, not held), NUL runs cut out and counted.
type lineReader struct {
	br     *bufio.Reader
	number int64 // the number of the last line read, from 1
	part   []byte
}

// readLine is one line of a log: its text, split where NUL runs were (a
// crash leaves them where a line was torn, and the writer starts a line
// after them), or its length when refused as too long.
type readLine struct {
	number  int64
	parts   []string
	nulRuns []int // the length of each NUL run cut out
	tooLong int   // the line's length in bytes (without its end), when over maxLineBytes
}

func newLineReader(r io.Reader) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &lineReader{br: br}
}

// next reads the next line; io.EOF when there is none.
func (lr *lineReader) next() (readLine, error) {
	l := readLine{number: lr.number + 1}
	lr.part = lr.part[:0]
	kept, run, read := 0, 0, 0 // kept: the line's bytes other than NUL
	var last [2]byte           // its last two bytes kept, for its end
	for {
		chunk, err := lr.br.ReadSlice('\n')
		read += len(chunk)
		for len(chunk) > 0 {
			if chunk[0] == 0 {
				n := 1
				for n < len(chunk) && chunk[n] == 0 {
					n++
				}
				run += n
				chunk = chunk[n:]
				continue
			}
			if run > 0 {
				// A NUL run ends the text before it: a torn line, and a
				// line the writer began after it.
				l.nulRuns = append(l.nulRuns, run)
				run = 0
				l.parts = lr.endPart(l.parts)
			}
			n := bytes.IndexByte(chunk, 0)
			if n < 0 {
				n = len(chunk)
			}
			kept += n
			if kept <= maxLineBytes+2 { // +2: the line's end (\r\n) is not counted
				lr.part = append(lr.part, chunk[:n]...)
			}
			if n >= 2 {
				last = [2]byte{chunk[n-2], chunk[n-1]}
			} else {
				last = [2]byte{last[1], chunk[0]}
			}
			chunk = chunk[n:]
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return readLine{}, err
		}
		if err != nil && read == 0 {
			return readLine{}, io.EOF
		}
		break
	}
	lr.number++
	if run > 0 {
		l.nulRuns = append(l.nulRuns, run)
	}
	if length := kept - lineEndLen(last); length > maxLineBytes {
		l.tooLong, l.parts = length, nil
		return l, nil
	}
	if text := strings.TrimRight(string(lr.part), "\r\n"); text != "" || len(l.parts) == 0 && len(l.nulRuns) == 0 {
		l.parts = append(l.parts, text)
	}
	return l, nil
}

// endPart ends the text read so far (at a NUL run), keeping it unless it is
// empty.
func (lr *lineReader) endPart(parts []string) []string {
	if text := strings.TrimRight(string(lr.part), "\r\n"); text != "" {
		parts = append(parts, text)
	}
	lr.part = lr.part[:0]
	return parts
}

// lineEndLen is the length of the line's end its last two bytes hold.
func lineEndLen(last [2]byte) int {
	switch {
	case last == [2]byte{'\r', '\n'}:
		return 2
	case last[1] == '\n':
		return 1
	}
	return 0
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
	NULRuns   int            `json:"nul_runs,omitempty"` // runs of NUL bytes skipped
	Files     []fileTally    `json:"files"`
	// notes are what the reader said of lines (refused, NUL runs
	// skipped), each with its file and line number, for standard error.
	notes []malformedLine
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

// refuse counts a line the reader refused before the line format read it.
func (t *lineTally) refuse(f *fileTally, reason string) {
	t.Read++
	f.Read++
	t.Refused[reason]++
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
	fmt.Fprintf(b, "lines: %d read (%s): %s, %s, %d refused, %d not ours\n",
		t.Read, strings.Join(files, ", "), plural.N(t.TurnLines, "turn line"), plural.N(t.TakeLines, "take line"), t.refused(), t.NotOurs)
	if n := t.refused(); n > 0 {
		var parts []string
		for _, r := range textlines.Reasons {
			if c := t.Refused[r]; c > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", r, c))
			}
		}
		fmt.Fprintf(b, "refused: %s (each on standard error, with its file, line and faults)\n", strings.Join(parts, ", "))
	}
	if t.NULRuns > 0 {
		fmt.Fprintf(b, "skipped: %s of NUL bytes (each on standard error, with its file and line)\n", plural.N(t.NULRuns, "run"))
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
