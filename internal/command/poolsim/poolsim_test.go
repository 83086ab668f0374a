package poolsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// referenceRows reads the reference table from the repository's own
// description of the model, docs/queueing.md: the indented rows under "The
// reference table". The model and the document cannot drift apart, and the
// test never skips: the document is part of the repository.
func referenceRows(t *testing.T) string {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(), "docs", "queueing.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the model's document: %v", err)
	}
	rows, err := tableRows(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// tableRows returns the indented block under the "## The reference table"
// heading, unindented, one row a line.
func tableRows(doc string) (string, error) {
	_, section, ok := strings.Cut(doc, "\n## The reference table\n")
	if !ok {
		return "", errors.New(`no "## The reference table" section`)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if row, ok := strings.CutPrefix(line, "    "); ok {
			rows = append(rows, row)
		} else if len(rows) > 0 {
			break // the first indented block is the table
		}
	}
	if len(rows) != 3 {
		return "", fmt.Errorf("found %d reference rows, want 3", len(rows))
	}
	return strings.Join(rows, "\n") + "\n", nil
}

func TestTableMatchesGolden(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "reference.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Table(); got != string(want) {
		t.Fatalf("reference table differs from testdata/reference.golden\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableMatchesDomain(t *testing.T) {
	want := referenceRows(t)
	if got := Table(); got != want {
		t.Fatalf("reference table differs from docs/queueing.md\n got:\n%q\nwant:\n%q", got, want)
	}
}

// TestTableRowsFindsTheTable: the reader of the document fails loudly when
// the table is missing, short, or moved out of its section.
func TestTableRowsFindsTheTable(t *testing.T) {
	row := "one pool, a healthy engine   checks 12, missed  1 | one miss: 27.4 s  verdict: never"
	three := "    " + row + "\n    " + row + "\n    " + row + "\n"
	for _, c := range []struct {
		name, doc string
		ok        bool
	}{
		{"the table", "# m\n\n## The reference table\n\ntext:\n\n" + three + "\nafter\n", true},
		{"no section", "# m\n\n" + three, false},
		{"two rows", "## x\n\n## The reference table\n\n    " + row + "\n    " + row + "\n", false},
		{"table in the next section", "## x\n\n## The reference table\n\nnone here\n\n## Other\n\n" + three, false},
	} {
		got, err := tableRows(c.doc)
		if (err == nil) != c.ok {
			t.Errorf("%s: rows %q, err %v; want ok %v", c.name, got, err, c.ok)
		}
	}
}

func TestCases(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	tests := []struct {
		name string
		c    Case
		want string
	}{
		{"one pool, engine gone: misses regardless of the pool",
			Case{EngineGone: true, WordsUntil: -1},
			"one pool, the engine gone    checks  6, missed  6 | one miss:  5.0 s  verdict: 21.0 s"},
		{"one pool, short takes: the burst clears before the check",
			Case{Takes: []time.Duration{sec(1), sec(1), sec(1), sec(1)}, WordsUntil: -1},
			"one pool, a healthy engine   checks 15, missed  0 | one miss: never   verdict: never"},
		{"one pool, her words end at 10 s: the stream's connection frees, the check finds it",
			Case{WordsUntil: sec(10)},
			"one pool, a healthy engine   checks 15, missed  0 | one miss: never   verdict: never"},
		{"one pool, a fifth long take: two checks miss in a row, yet her words keep the verdict away",
			Case{Takes: []time.Duration{sec(14), sec(19), sec(24), sec(30), sec(30)}, WordsUntil: -1},
			"one pool, a healthy engine   checks 11, missed  2 | one miss: 27.4 s  verdict: never"},
		{"two pools, engine gone mid-reply: her words keep the verdict away",
			Case{TwoPools: true, EngineGone: true, WordsUntil: sec(40.4)},
			"two pools, the engine gone   checks  6, missed  6 | one miss:  5.0 s  verdict: never"},
		{"two pools, engine gone with words until 20 s: quiet from 20 s, verdict at 37 s",
			Case{TwoPools: true, EngineGone: true, WordsUntil: sec(20)},
			"two pools, the engine gone   checks  6, missed  6 | one miss:  5.0 s  verdict: 37.0 s"},
		{"two pools, long takes: bulk never touches control",
			Case{TwoPools: true, Takes: []time.Duration{sec(60), sec(60), sec(60), sec(60), sec(60), sec(60)}, WordsUntil: -1},
			"two pools, a healthy engine  checks 15, missed  0 | one miss: never   verdict: never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Row(); got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestOnePoolMissIsTheQueuedCheck(t *testing.T) {
	r, err := Run(Case{WordsUntil: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Calls {
		if p.Missed {
			if p.Arrival != 22400*time.Millisecond {
				t.Errorf("missed check asked at %s, want 22.4s (queued behind the burst)", p.Arrival)
			}
			return
		}
	}
	t.Fatal("no missed check in the one-pool case")
}

func TestValidate(t *testing.T) {
	if _, err := Run(Case{Takes: []time.Duration{0}}); err == nil || !strings.Contains(err.Error(), "take 1 length") {
		t.Fatalf("want a take-length error, got %v", err)
	}
}
