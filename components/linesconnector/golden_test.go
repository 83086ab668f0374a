package linesconnector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/percause/percause/internal/linestest"
)

var (
	update = flag.Bool("update", false, "rewrite the golden verdicts (testdata/golden/*/expected.json)")
	record = flag.Bool("record", false, "record the SDK's lines again (testdata/golden/{sdk,split}/*.log)")
)

// goldenVerdict is one turn's verdict as the golden files give it.
type goldenVerdict struct {
	Turn     int64    `json:"turn"`
	Trace    string   `json:"trace"`
	Cause    string   `json:"cause"`
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	Forced   string   `json:"forced,omitempty"`
}

// golden is what a case must give: every verdict exactly, every malformed
// line with its file, line number and reason, and the connector's counts.
type golden struct {
	Verdicts  []goldenVerdict  `json:"verdicts"`
	Malformed []malformedLine  `json:"malformed"`
	Counts    map[string]int64 `json:"counts"`
}

func goldenOf(r run) golden {
	g := golden{Malformed: r.malformed, Counts: r.counts}
	if g.Malformed == nil {
		g.Malformed = []malformedLine{}
	}
	delete(g.Counts, "pending") // an up-down counter: 0 after shutdown, absent when nothing was held
	for _, v := range r.verdicts {
		g.Verdicts = append(g.Verdicts, goldenVerdict{Turn: v.Turn, Trace: v.TraceID, Cause: v.Cause, Causes: v.Causes,
			Evidence: v.Evidence, Forced: v.Forced})
	}
	sort.Slice(g.Verdicts, func(i, j int) bool {
		a, b := g.Verdicts[i], g.Verdicts[j]
		if a.Turn != b.Turn {
			return a.Turn < b.Turn
		}
		return a.Trace < b.Trace
	})
	return g
}

// TestGolden runs each case under testdata/golden through the connector and
// the verdict processor: the files of a case in every order (phone and
// engine lines in separate files arrive either way), each order giving
// exactly expected.json.
//
//   - sdk: the canonical lines the SDK's own text log wrote for one turn per
//     cause (internal/linestest), phone and engine in one file;
//   - split: the same lines, phone and engine in files of their own;
//   - app: the same turns in the app's spellings (docs/lines.md), with
//     os_log and syslog prefixes and no trace IDs on the phone's lines;
//   - messy: the SDK's lines with timestamps and syslog prefixes, CRLF
//     endings, fields this version does not know, and malformed lines and
//     other log lines between them.
func TestGolden(t *testing.T) {
	if *record {
		recordSDKLines(t)
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			names, err := filepath.Glob(filepath.Join(dir, "*.log"))
			if err != nil || len(names) == 0 {
				t.Fatalf("no .log files in %s", dir)
			}
			var files []file
			for _, n := range names {
				b, err := os.ReadFile(n)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, file{filepath.Base(n), b})
			}
			path := filepath.Join(dir, "expected.json")
			for _, order := range orders(files) {
				var labels []string
				for _, f := range order {
					labels = append(labels, f.name)
				}
				t.Run(strings.Join(labels, "+"), func(t *testing.T) {
					got := goldenOf(decideLines(t, order...))
					b, err := json.MarshalIndent(got, "", "  ")
					if err != nil {
						t.Fatal(err)
					}
					b = append(b, '\n')
					if *update {
						if err := os.WriteFile(path, b, 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(path)
					if err != nil {
						t.Fatalf("%v (run with -update to write it)", err)
					}
					if !bytes.Equal(b, want) {
						t.Errorf("%s differs from what the pipeline gives:\n%s", path, b)
					}
				})
			}
		})
	}
}

// orders lists files in their order and, for two or three files, every
// other order too.
func orders(files []file) [][]file {
	if len(files) < 2 || len(files) > 3 {
		return [][]file{files}
	}
	var out [][]file
	var perm func(prefix, rest []file)
	perm = func(prefix, rest []file) {
		if len(rest) == 0 {
			out = append(out, append([]file(nil), prefix...))
			return
		}
		for i := range rest {
			next := append(append([]file(nil), rest[:i]...), rest[i+1:]...)
			perm(append(prefix, rest[i]), next)
		}
	}
	perm(nil, files)
	return out
}

// recordSDKLines writes the SDK's lines for the set of turns: one file
// (sdk/) and a file per side (split/).
func recordSDKLines(t *testing.T) {
	rec, err := linestest.Record(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join("testdata", "golden")
	for path, data := range map[string][]byte{
		filepath.Join(base, "sdk", "lines.log"):    append(append([]byte(nil), rec.Phone...), rec.Engine...),
		filepath.Join(base, "split", "phone.log"):  rec.Phone,
		filepath.Join(base, "split", "engine.log"): rec.Engine,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
