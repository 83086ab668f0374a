package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testenv"
)

func TestLinesFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{nil, 2, "name at least one file"},
		{[]string{"--json"}, 2, "name at least one file"},
		{[]string{"--bogus", "a.log"}, 2, "flag provided but not defined"},
		{[]string{"-", "-"}, 2, "can be named once"},
		{[]string{"a.log", "--post-budget", "0s"}, 2, "must be positive"},
		{[]string{"-h"}, 0, "usage: percause lines"},
		{[]string{filepath.Join(t.TempDir(), "missing.log")}, 1, "no such file"},
	} {
		var out, errb bytes.Buffer
		if code := runLines(context.Background(), c.args, strings.NewReader(""), &out, &errb); code != c.code || !strings.Contains(errb.String(), c.say) {
			t.Errorf("lines %q: exit %d, want %d; stderr %q, want it to say %q", c.args, code, c.code, errb.String(), c.say)
		}
	}
}

// goldenDir is the lines connector's golden cases: the same files must get
// the same exact verdicts through the real binary's `percause lines`.
var goldenDir = filepath.Join("..", "..", "components", "linesconnector", "testdata", "golden")

type goldenCase struct {
	Verdicts []struct {
		Turn     int64    `json:"turn"`
		Trace    string   `json:"trace"`
		Cause    string   `json:"cause"`
		Causes   []string `json:"causes"`
		Evidence string   `json:"evidence"`
		Forced   string   `json:"forced"`
	} `json:"verdicts"`
	Malformed []struct {
		File   string `json:"file"`
		Line   int64  `json:"line"`
		Reason string `json:"reason"`
	} `json:"malformed"`
}

type jsonTurn struct {
	Trace    string   `json:"trace"`
	Turn     int64    `json:"turn"`
	Cause    string   `json:"cause"`
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	Forced   string   `json:"forced"`
	Summary  *struct {
		Turns   int            `json:"turns"`
		ByCause map[string]int `json:"by_cause"`
	} `json:"summary"`
}

// TestLinesGolden runs `percause lines --json` (the real binary, its
// in-process collector on loopback) on every golden case, the files in
// every order and once through standard input, and checks every verdict
// and every malformed line's report against expected.json.
func TestLinesGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	bin := testenv.PercauseBin(t)
	dirs, _ := filepath.Glob(filepath.Join(goldenDir, "*"))
	if len(dirs) < 4 {
		t.Fatalf("golden cases: %v", dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var want goldenCase
			b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			runs := [][]string{logs}
			if len(logs) == 2 {
				runs = append(runs, []string{logs[1], logs[0]})
			}
			for _, files := range runs {
				var names []string
				for _, f := range files {
					names = append(names, filepath.Base(f))
				}
				t.Run(strings.Join(names, "+"), func(t *testing.T) {
					cmd := exec.Command(bin, append([]string{"lines", "--json"}, names...)...)
					cmd.Dir = dir
					checkLinesRun(t, cmd, want, "")
				})
			}
			if len(logs) == 1 {
				t.Run("stdin", func(t *testing.T) {
					f, err := os.Open(logs[0])
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					cmd := exec.Command(bin, "lines", "--json", "-")
					cmd.Dir, cmd.Stdin = dir, f
					checkLinesRun(t, cmd, want, "(stdin)")
				})
			}
		})
	}
}

func checkLinesRun(t *testing.T, cmd *exec.Cmd, want goldenCase, stdinName string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, errb.String())
	}
	var got []jsonTurn
	var summary *jsonTurn
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var j jsonTurn
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if j.Summary != nil {
			summary = &j
			continue
		}
		got = append(got, j)
	}
	sort.Slice(got, func(i, j int) bool {
		if got[i].Turn != got[j].Turn {
			return got[i].Turn < got[j].Turn
		}
		return got[i].Trace < got[j].Trace
	})
	if len(got) != len(want.Verdicts) {
		t.Fatalf("%d turns, want %d:\n%s", len(got), len(want.Verdicts), out.String())
	}
	for i, w := range want.Verdicts {
		g := got[i]
		if g.Trace != w.Trace || g.Turn != w.Turn || g.Cause != w.Cause || strings.Join(g.Causes, ",") != strings.Join(w.Causes, ",") ||
			g.Evidence != w.Evidence || g.Forced != w.Forced {
			t.Errorf("turn %d:\n got %+v\nwant %+v", w.Turn, g, w)
		}
	}
	if summary == nil || summary.Summary.Turns != len(want.Verdicts) {
		t.Errorf("summary %+v", summary)
	}
	// Each malformed line on standard error, with its file and line.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if strings.Contains(l, "malformed line") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(want.Malformed) {
		t.Fatalf("stderr reports %d malformed lines, want %d:\n%s", len(lines), len(want.Malformed), errb.String())
	}
	for i, m := range want.Malformed {
		file := m.File
		if stdinName != "" {
			file = stdinName
		}
		prefix := file + ":" + itoa(m.Line) + ": malformed line (" + m.Reason + "): "
		if !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("stderr line %q, want it to start %q", lines[i], prefix)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestLinesTable: the per-turn table and the day's summary, exactly, for the
// SDK's lines (testdata/lines_sdk.golden; -update rewrites it).
func TestLinesTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	cmd := exec.Command(testenv.PercauseBin(t), "lines", filepath.Join(goldenDir, "sdk", "lines.log"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	path := filepath.Join("testdata", "lines_sdk.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("percause lines prints\n%s\nwant (%s)\n%s", out, path, want)
	}
}

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestLinesHTML: `percause lines --html FILE` writes the day as the
// verdict page: every turn listed with its verdict and evidence, the
// day's count, as one self-contained file (no script, nothing fetched).
func TestLinesHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	bin := testenv.PercauseBin(t)
	dirs, _ := filepath.Glob(filepath.Join(goldenDir, "*"))
	checked := 0
	for _, dir := range dirs {
		var want goldenCase
		b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if len(want.Verdicts) == 0 {
			continue
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		out := filepath.Join(t.TempDir(), "day.html")
		cmd := exec.Command(bin, append([]string{"lines", "--html", out}, logs...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", dir, err, b)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		s := string(page)
		if !strings.Contains(s, `<strong data-n="`+strconv.Itoa(len(want.Verdicts))+`">`) {
			t.Errorf("%s: the page does not count %d turns", dir, len(want.Verdicts))
		}
		for _, v := range want.Verdicts {
			i := strings.Index(s, `data-trace="`+v.Trace+`" data-cause="`+v.Cause+`"`)
			if i < 0 {
				t.Errorf("%s: turn %s is not listed with verdict %s", dir, v.Trace, v.Cause)
				continue
			}
			if !strings.Contains(html.UnescapeString(s[i:]), v.Evidence) {
				t.Errorf("%s: turn %s's evidence %q is not shown", dir, v.Trace, v.Evidence)
			}
		}
		for _, bad := range []string{"<script", "http-equiv=\"refresh\"", "<form", "https://", "http://"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s: the static page contains %s", dir, bad)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no golden case with verdicts")
	}
}
