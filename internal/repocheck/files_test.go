package repocheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// citedExt are the endings of the files the code and the docs cite by path.
const citedExt = `go|md|ya?ml|json|jsonl|js|txt|golden|sh|proto|html|css|svg|png|tmpl|mod|sum`

// bareGoCite is a Go file named alone, without a folder (the verdict
// processor's comments name its cycle's file so): in a
// Go comment or a package's README it names a file beside it. A name
// written as a pattern (*_names.go, _test.go) is not a file and does not
// match.
var bareGoCite = regexp.MustCompile(`(?:^|[^\w/.*-])([a-z][\w-]*\.go)\b`)

// pathCite returns the pattern of a repository path as the code and the
// docs write it, from the top folder on (processors/verdictprocessor/cycle.go,
// docs/architecture.md), for the given top folders. The tail of a URL or of
// an import path (…/percause/internal/x.go) is preceded by a slash and does
// not match.
func pathCite(tops []string) *regexp.Regexp {
	quoted := make([]string, len(tops))
	for i, t := range tops {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return regexp.MustCompile(`(?:^|[^\w/.-])((?:` + strings.Join(quoted, "|") + `)/(?:[\w.-]+/)*[\w-][\w.-]*\.(?:` + citedExt + `))\b`)
}

// topFolders are the repository's top folders that hold its code and docs.
func topFolders(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var tops []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "bin" && e.Name() != "percause-data" {
			tops = append(tops, e.Name())
		}
	}
	return tops
}

// citedText is the part of a file that may cite other files, by line: a Go
// file's comments (its strings are test data and messages, not citations),
// every other file whole.
func citedText(rel, text string) (map[int]string, error) {
	lines := map[int]string{}
	if !strings.HasSuffix(rel, ".go") {
		for i, line := range strings.Split(text, "\n") {
			lines[i+1] = line
		}
		return lines, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, group := range f.Comments {
		for _, c := range group.List {
			first := fset.Position(c.Slash).Line
			for i, line := range strings.Split(c.Text, "\n") {
				lines[first+i] += " " + line
			}
		}
	}
	return lines, nil
}

// missingCitations lists the files that rel's text cites and that do not
// exist, as "rel:line cites path, which does not exist". exists answers for
// a slash path from the repository's root. A Go file's comments and a
// package's README cite by path from the root, or name a Go file beside
// them alone; the docs/ Markdown cited by path is TestCitedDocsExist's.
func missingCitations(rel, text string, cite *regexp.Regexp, exists func(string) bool) ([]string, error) {
	lines, err := citedText(rel, text)
	if err != nil {
		return nil, err
	}
	numbers := make([]int, 0, len(lines))
	for n := range lines {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	besideOK := strings.HasSuffix(rel, ".go") || (path.Base(rel) == "README.md" && !strings.HasPrefix(rel, "docs/") && strings.Contains(rel, "/"))
	var missing []string
	for _, n := range numbers {
		line := lines[n]
		for _, m := range cite.FindAllStringSubmatch(line, -1) {
			if strings.HasPrefix(m[1], "docs/") && strings.HasSuffix(m[1], ".md") {
				continue
			}
			if !exists(m[1]) {
				missing = append(missing, fmt.Sprintf("%s:%d cites %s, which does not exist", rel, n, m[1]))
			}
		}
		if !besideOK {
			continue
		}
		for _, m := range bareGoCite.FindAllStringSubmatch(line, -1) {
			if beside := path.Join(path.Dir(rel), m[1]); !exists(beside) {
				missing = append(missing, fmt.Sprintf("%s:%d cites %s, which is not beside it (%s does not exist)", rel, n, m[1], beside))
			}
		}
	}
	return missing, nil
}

// TestCitedFilesExist: every file of the repository that the code's
// comments and the docs name by its path (a .go file as much as a
// document), and every Go file a comment or a package's README names
// alone, exists.
func TestCitedFilesExist(t *testing.T) {
	root := testenv.RepoRoot()
	cite := pathCite(topFolders(t, root))
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	files := 0
	repoTextFiles(t, func(rel, text string) {
		files++
		missing, err := missingCitations(rel, text, cite, exists)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		for _, m := range missing {
			t.Error(m)
		}
	})
	if files < 100 {
		t.Fatalf("read only %d files: the walk is broken", files)
	}
}

// TestFileCheckFindsAMissingFile: a planted citation of a file that does
// not exist is reported, by path and alone, in a Go comment and in a
// README, while a Go string, a pattern, a URL's tail and a file that
// exists are not.
func TestFileCheckFindsAMissingFile(t *testing.T) {
	have := map[string]bool{
		"processors/verdictprocessor/cycle.go":                   true,
		"processors/verdictprocessor/internal/persist/codec2.go": true,
		"docs/architecture.md":                                   true,
	}
	exists := func(rel string) bool { return have[rel] }
	cite := pathCite([]string{"processors", "docs", "lab"})
	goFile := `package persist

// The encoding of codec.go; the cycle is processors/verdictprocessor/cycle.go,
// the old one processors/verdictprocessor/gone.go (see docs/architecture.md,
// docs/gone.yaml). Not https://example.test/processors/x.go, not *_names.go.
/* And lab/phone/turn.go. */
var s = "processors/verdictprocessor/string.go codec3.go"

var t = 1 // codec2.go is here
`
	got, err := missingCitations("processors/verdictprocessor/internal/persist/trace_codec.go", goFile, cite, exists)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"processors/verdictprocessor/internal/persist/trace_codec.go:3 cites codec.go, which is not beside it (processors/verdictprocessor/internal/persist/codec.go does not exist)",
		"processors/verdictprocessor/internal/persist/trace_codec.go:4 cites processors/verdictprocessor/gone.go, which does not exist",
		"processors/verdictprocessor/internal/persist/trace_codec.go:5 cites docs/gone.yaml, which does not exist",
		"processors/verdictprocessor/internal/persist/trace_codec.go:6 cites lab/phone/turn.go, which does not exist",
	}
	if !slices.Equal(got, want) {
		t.Errorf("in a Go file, got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	readme := "# verdictprocessor\n\nThe cycle (`cycle.go`) and the sweep (`sweep.go`); the codec in processors/verdictprocessor/codec.go.\n"
	got, err = missingCitations("processors/verdictprocessor/README.md", readme, cite, exists)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"processors/verdictprocessor/README.md:3 cites processors/verdictprocessor/codec.go, which does not exist",
		"processors/verdictprocessor/README.md:3 cites sweep.go, which is not beside it (processors/verdictprocessor/sweep.go does not exist)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("in a README, got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// In docs/, a Go file named alone belongs to the package the text is
	// about, which the check cannot know.
	got, err = missingCitations("docs/simulation.md", "The checker (`check.go`).\n", cite, exists)
	if err != nil || len(got) != 0 {
		t.Errorf("a bare name in docs/: got %v, %v; want nothing", got, err)
	}
}
