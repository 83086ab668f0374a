package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// indexRow is a row of docs/decisions/README.md's index: a note linked by
// its file, or a note moved to docs/performance.md by its number.
var indexRow = regexp.MustCompile(`(?m)^\| (?:\[(\d{4})\]\((\d{4}-[\w.-]+\.md)\)|(\d{4})) \| ([^|]+) \|`)

// indexProblems lists what the index and the notes disagree on: a note
// without a row, a row whose file is not a note, a status that is none of
// the index's, and a moved note whose section docs/performance.md lacks.
func indexProblems(index string, notes []string, performance string) []string {
	var problems []string
	listed := map[string]bool{}
	for _, m := range indexRow.FindAllStringSubmatch(index, -1) {
		status := strings.TrimSpace(m[4])
		if m[3] != "" {
			listed[m[3]] = true
			if !strings.HasPrefix(status, "measurement") {
				problems = append(problems, "note "+m[3]+" has no file but is not a measurement")
			}
			if !strings.Contains(performance, "### §"+m[3]+":") {
				problems = append(problems, "note "+m[3]+" moved to docs/performance.md, which has no section §"+m[3])
			}
			continue
		}
		listed[m[2]] = true
		if !strings.HasPrefix(status, "accepted") && !strings.HasPrefix(status, "superseded") {
			problems = append(problems, "note "+m[1]+" has the status "+status)
		}
	}
	for _, n := range notes {
		if !listed[n] {
			problems = append(problems, "note "+n+" has no row in docs/decisions/README.md")
		}
		delete(listed, n)
	}
	var extra []string
	for n := range listed {
		if len(n) > 4 {
			extra = append(extra, "docs/decisions/README.md lists "+n+", which is not a note")
		}
	}
	slices.Sort(extra)
	problems = append(problems, extra...)
	return problems
}

// TestDecisionIndexListsEveryNote: docs/decisions/README.md has a row for
// every note, with its status, and names no note that is not there.
func TestDecisionIndexListsEveryNote(t *testing.T) {
	root := testenv.RepoRoot()
	index, err := os.ReadFile(filepath.Join(root, "docs", "decisions", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	perf, err := os.ReadFile(filepath.Join(root, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(root, "docs", "decisions", "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil || len(paths) < 20 {
		t.Fatalf("found %d notes (%v)", len(paths), err)
	}
	notes := make([]string, len(paths))
	for i, p := range paths {
		notes[i] = filepath.Base(p)
	}
	for _, p := range indexProblems(string(index), notes, string(perf)) {
		t.Error(p)
	}
}

// TestDecisionIndexCheckFindsAMissingRow: a note without a row, a row
// without a note, a moved note without its section and an unknown status
// are each reported.
func TestDecisionIndexCheckFindsAMissingRow(t *testing.T) {
	index := "| note | status | what |\n|---|---|---|\n" +
		"| [0001](0001-one.md) | accepted | one |\n" +
		"| [0002](0002-gone.md) | superseded by 0003 | two |\n" +
		"| [0004](0004-four.md) | maybe | four |\n" +
		"| 0005 | measurement: docs/performance.md §0005 | five |\n"
	got := indexProblems(index, []string{"0001-one.md", "0003-three.md", "0004-four.md"}, "### §0006: six\n")
	want := []string{
		"note 0004 has the status maybe",
		"note 0005 moved to docs/performance.md, which has no section §0005",
		"note 0003-three.md has no row in docs/decisions/README.md",
		"docs/decisions/README.md lists 0002-gone.md, which is not a note",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
