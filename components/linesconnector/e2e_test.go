package linesconnector_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/verdicts"
)

// rounds makes n copies of the SDK's lines (testdata/golden/sdk), each with
// trace IDs of its own, every take line before the turn line naming it, so
// that the file reads like a day: turn after turn. It returns each round's
// lines and trace IDs.
func rounds(t testing.TB, n int) ([][]string, [][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", "sdk", "lines.log"))
	if err != nil {
		t.Fatal(err)
	}
	var turns, takes []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, "[voice-turn]") {
			turns = append(turns, l)
		} else {
			takes = append(takes, l)
		}
	}
	traceOf := func(l string) string {
		i := strings.Index(l, " trace=")
		return l[i+7 : i+39]
	}
	var lines, ids [][]string
	for r := 0; r < n; r++ {
		var rl, ri []string
		for _, turn := range turns {
			old := traceOf(turn)
			id := fmt.Sprintf("%02x%s", r+1, old[2:])
			for _, tk := range takes {
				if traceOf(tk) == old {
					rl = append(rl, strings.Replace(tk, old, id, 1))
				}
			}
			rl = append(rl, strings.Replace(turn, old, id, 1))
			ri = append(ri, id)
		}
		lines, ids = append(lines, rl), append(ids, ri)
	}
	return lines, ids
}

func appendLines(t *testing.T, path string, lines []string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// countVerdicts counts the verdict spans per trace in the verdict file.
func countVerdicts(t *testing.T, path string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, v := range verdictsIn(t, path) {
		n[v.TraceID]++
	}
	return n
}

// verdictsIn reads every verdict in the verdict file, in its order (a
// line still being written is passed over).
func verdictsIn(t *testing.T, path string) []verdicts.Verdict {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []verdicts.Verdict
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if vs, err := verdicts.Parse(l); err == nil {
			out = append(out, vs...)
		}
	}
	return out
}

// TestFilelogTailsGrowsAndRotates: the real collector binary on
// collector-config/lines.yaml tails a log that grows while it runs, is
// rotated (renamed, a new file created in its place) and goes on, across a
// restart of the collector on the same data folder (the filelog receiver's
// offsets in file_storage): every turn is decided exactly once, with the
// verdict its lines give.
func TestFilelogTailsGrowsAndRotates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	lines, ids := rounds(t, 4)
	logs := t.TempDir()
	data := t.TempDir()
	app := filepath.Join(logs, "app.log")
	verdictFile := filepath.Join(data, "verdicts.jsonl")
	cfg := filepath.Join(testenv.RepoRoot(), "collector-config", "lines.yaml")
	start := func() *testenv.Collector {
		return testenv.StartCollector(t, testenv.WithCollectorConfig(cfg),
			testenv.WithCollectorEnv("PERCAUSE_LINES_INCLUDE", fmt.Sprintf("[%s*]", app)),
			testenv.WithCollectorEnv(testenv.EnvDataDir, data),
			testenv.WithCollectorEnv(testenv.EnvVerdictFile, verdictFile),
			testenv.WithCollectorEnv("PERCAUSE_LINES_WAIT", "1s"),
			testenv.WithCollectorEnv(testenv.EnvVerdictWait, "1s"))
	}
	decided := func(rs ...int) {
		t.Helper()
		var want []string
		for _, r := range rs {
			want = append(want, ids[r]...)
		}
		testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("verdicts of rounds %v", rs), func() bool {
			n := countVerdicts(t, verdictFile)
			for _, id := range want {
				if n[id] == 0 {
					return false
				}
			}
			return true
		})
	}

	col := start()
	appendLines(t, app, lines[0])                    // the day begins
	decided(0)                                       //
	appendLines(t, app, lines[1][:10])               // it grows,
	if err := os.Rename(app, app+".1"); err != nil { // is rotated mid-round,
		t.Fatal(err)
	}
	appendLines(t, app+".1", lines[1][10:12]) // the old file still gets a line or two,
	appendLines(t, app, lines[1][12:])        // the new one the rest
	decided(0, 1)
	col.Stop()                    // a restart:
	appendLines(t, app, lines[2]) // lines written while it is down
	col = start()                 // are read from the stored offset,
	appendLines(t, app, lines[3]) // and the day goes on
	decided(0, 1, 2, 3)
	// The connector's own telemetry, as the collector serves it.
	resp, err := http.Get(col.TelemetryURL)
	if err != nil {
		t.Fatal(err)
	}
	tel, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`otelcol_connector_lines_lines_total{outcome="turn"`, `otelcol_connector_lines_lines_total{outcome="take"`,
		"otelcol_connector_lines_turns_total", "otelcol_connector_lines_takes_total"} {
		if !bytes.Contains(tel, []byte(m)) {
			t.Errorf("the collector's telemetry has no %s", m)
		}
	}
	col.Stop()

	n := countVerdicts(t, verdictFile)
	b, err := os.ReadFile(filepath.Join("testdata", "golden", "sdk", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	want := map[int64]goldenVerdict{}
	for _, v := range g.Verdicts {
		want[v.Turn] = v
	}
	// A turn forced for its missing take: by a wait here, by the end of
	// the input there; the rest of the evidence is the same.
	forced := regexp.MustCompile(`^forced (after waiting [^:;]+|at shutdown): missing take (\S+);`)
	ended := regexp.MustCompile(`^the input ended before take (\S+) came;`)
	sameCause := func(evidence string) string {
		evidence = forced.ReplaceAllString(evidence, "missing take $2;")
		return ended.ReplaceAllString(evidence, "missing take $1;")
	}
	all := 0
	for r := range ids {
		for _, id := range ids[r] {
			all++
			if n[id] != 1 {
				t.Errorf("round %d trace %s: %d verdicts, want exactly 1", r+1, id, n[id])
			}
		}
	}
	if len(n) != all {
		t.Errorf("%d traces decided, want %d", len(n), all)
	}
	// Each round's verdicts are the SDK case's.
	vs := verdicts.NewReader(verdictFile)
	if err := vs.Refresh(); err != nil {
		t.Fatal(err)
	}
	for r := range ids {
		for _, id := range ids[r] {
			v, _ := vs.Get(id)
			w := want[v.Turn]
			if v.Cause != w.Cause || sameCause(v.Evidence) != sameCause(w.Evidence) {
				t.Errorf("round %d turn %d: %s %q, the SDK case's %s %q", r+1, v.Turn, v.Cause, v.Evidence, w.Cause, w.Evidence)
			}
		}
	}
}
