package repocheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// outsideDocs are names of design documents that once lived outside the
// repository. Their content is now docs/domain.md, docs/queueing.md and
// docs/architecture.md; nothing may cite them.
var outsideDocs = regexp.MustCompile(`ARCHITECTURE\.md|DOMAIN\.md|shared/design|\.\./shared/`)

// stillCiting are the files that cite them until their owners move the
// citations to docs/: remove an entry when its file no longer needs it.
var stillCiting = []string{}

// comingDocs are documents already cited by work in progress whose text is
// still being written: remove an entry once its file exists.
var comingDocs = []string{}

// docCite is a path under docs/ as the code and the docs write it (not the
// tail of a URL): docs/domain.md, docs/decisions/0203-bad-input-decides-unknown.md,
// or a decision by its number alone (docs/decisions/0200).
var docCite = regexp.MustCompile(`(?:^|[^\w/.-])(docs/(?:[\w.-]+/)*[\w.-]+\.md|docs/decisions/\d{4})`)

// repoTextFiles calls f with every text file of the repository that people
// read or the build uses, by its slash path from the root.
func repoTextFiles(t *testing.T, f func(rel string, text string)) {
	t.Helper()
	root := testenv.RepoRoot()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "percause-data", "fuzz", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".yaml", ".yml", ".json", ".txt":
		default:
			if d.Name() != "Makefile" && d.Name() != "Dockerfile" && rel != ".ci/run" {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f(rel, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoCitationOutsideTheRepository: a clone with nothing beside it has
// every document its code and docs cite.
func TestNoCitationOutsideTheRepository(t *testing.T) {
	repoTextFiles(t, func(rel, text string) {
		if rel == "internal/repocheck/cites_test.go" {
			return
		}
		if slices.ContainsFunc(stillCiting, func(p string) bool { return strings.HasPrefix(rel, p) }) {
			return
		}
		for i, line := range strings.Split(text, "\n") {
			if m := outsideDocs.FindString(line); m != "" {
				t.Errorf("%s:%d cites %s, which is not in the repository (see docs/domain.md, docs/queueing.md, docs/architecture.md)", rel, i+1, m)
			}
		}
	})
}

// TestCitedDocsExist: every docs/… path written in the code and the docs
// names a file (or, for docs/decisions/NNNN, a decision) that exists.
func TestCitedDocsExist(t *testing.T) {
	root := testenv.RepoRoot()
	decisions, err := filepath.Glob(filepath.Join(root, "docs", "decisions", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	numbers := map[string]bool{}
	for _, d := range decisions {
		numbers[filepath.Base(d)[:4]] = true
	}
	cites := 0
	repoTextFiles(t, func(rel, text string) {
		for i, line := range strings.Split(text, "\n") {
			for _, m := range docCite.FindAllStringSubmatch(line, -1) {
				cite := m[1]
				cites++
				if !strings.HasSuffix(cite, ".md") {
					if !numbers[strings.TrimPrefix(cite, "docs/decisions/")] {
						t.Errorf("%s:%d cites decision %s, which does not exist", rel, i+1, cite)
					}
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(cite))); err != nil && !slices.Contains(comingDocs, cite) {
					t.Errorf("%s:%d cites %s, which does not exist", rel, i+1, cite)
				}
			}
		}
	})
	if cites < 20 {
		t.Fatalf("found only %d citations of docs/: the search is broken", cites)
	}
}
