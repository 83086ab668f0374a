package linesconnector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/linestest"
)

var (
	update = flag.Bool("update", false, "rewrite the golden verdicts (testdata/golden/*/expected.json; check what it writes: the pool and state verdicts of launches and oslog are the rules', whatever the processor gives)")
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
// line with its file, line number and reason, the connector's counts, and
// the launches the connector gave the turns (each launch's traces).
type golden struct {
	Verdicts  []goldenVerdict  `json:"verdicts"`
	Malformed []malformedLine  `json:"malformed"`
	Counts    map[string]int64 `json:"counts"`
	Launches  [][]string       `json:"launches"`
}

func goldenOf(r run) golden {
	g := golden{Malformed: r.malformed, Counts: r.counts, Launches: launchGroups(r.traces)}
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
//     cause (internal/testsupport/linestest), phone and engine in one file;
//   - split: the same lines, phone and engine in files of their own;
//   - app: the same turns in the app's spellings (docs/lines.md), with
//     os_log and syslog prefixes and no trace IDs on the phone's lines;
//   - messy: the SDK's lines with timestamps and syslog prefixes, CRLF
//     endings, fields this version does not know, and malformed lines and
//     other log lines between them;
//   - launches: a day of the app's lines without history (no .before on any
//     line): three launches of one phone (the turn index restarts and
//     app_uptime drops at each), the phone's log rotated in the middle of
//     the second (phone.log.1, phone.log), the engine's lines shuffled;
//   - oslog: two launches told apart only by the process ID of their os_log
//     prefix (the turn index goes on, no uptime is printed), the engine's
//     lines shuffled and without timestamps.
//
// The pool and state verdicts of launches and oslog are what the rules say
// of a launch's turns: they read movement across the launch, so they hold
// once the verdict processor keeps each launch's recent turns.
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
			names, err := filepath.Glob(filepath.Join(dir, "*.log*"))
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
					if bytes.Equal(b, want) {
						return
					}
					// Say which part differs: the connector's (launches,
					// malformed lines, counts) or the verdicts.
					var w golden
					if err := json.Unmarshal(want, &w); err != nil {
						t.Fatal(err)
					}
					part := func(g golden) string {
						b, _ := json.Marshal([]any{g.Launches, g.Malformed, g.Counts})
						return string(b)
					}
					if part(got) != part(w) {
						t.Errorf("the connector's launches, malformed lines or counts differ from %s", path)
					}
					for _, v := range diffVerdicts(got.Verdicts, w.Verdicts) {
						t.Errorf("verdict of %s", v)
					}
					t.Errorf("%s differs from what the pipeline gives:\n%s", path, b)
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

// launchGroups lists the traces of each launch the turns were given (its
// service.instance.id), each launch's traces sorted, the launches by their
// first trace: the grouping, whatever IDs the launches got.
func launchGroups(traces []ptrace.Traces) [][]string {
	byLaunch := map[string][]string{}
	for _, s := range spansOf(traces) {
		if s.span.Name() != semconv.SpanVoiceTurn {
			continue
		}
		id, _ := s.res.Attributes().Get(semconv.ServiceInstanceID)
		byLaunch[id.AsString()] = append(byLaunch[id.AsString()], s.span.TraceID().String())
	}
	out := [][]string{}
	for _, ts := range byLaunch {
		sort.Strings(ts)
		out = append(out, slices.Compact(ts))
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// diffVerdicts names each turn whose verdict is not the one wanted.
func diffVerdicts(got, want []goldenVerdict) []string {
	byTrace := map[string]goldenVerdict{}
	for _, v := range got {
		byTrace[v.Trace] = v
	}
	var out []string
	for _, w := range want {
		g, ok := byTrace[w.Trace]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("turn %d (trace %s): none, want %s", w.Turn, w.Trace, w.Cause))
		case g.Cause != w.Cause || !slices.Equal(g.Causes, w.Causes) || g.Evidence != w.Evidence || g.Forced != w.Forced:
			out = append(out, fmt.Sprintf("turn %d (trace %.8s): %s %v %q, want %s %v %q", w.Turn, w.Trace, g.Cause, g.Causes, g.Evidence, w.Cause, w.Causes, w.Evidence))
		}
	}
	return out
}
