package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
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
	Lines *lineTally `json:"lines"`
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
	if len(dirs) < 6 {
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
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log*"))
			var runs [][]string
			permute(logs, nil, &runs) // every order: rotations are read oldest first whatever the shell gives
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

// permute lists every order of files.
func permute(files, prefix []string, out *[][]string) {
	if len(files) == 0 {
		*out = append(*out, append([]string(nil), prefix...))
		return
	}
	for i := range files {
		rest := append(append([]string(nil), files[:i]...), files[i+1:]...)
		permute(rest, append(prefix, files[i]), out)
	}
}

// exitCode runs cmd and returns its exit code (-1 when it did not run).
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("%v: %v", cmd.Args, err)
	return -1
}

func checkLinesRun(t *testing.T, cmd *exec.Cmd, want goldenCase, stdinName string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A refused line makes the run exit 1, after its report.
	wantCode := 0
	if len(want.Malformed) > 0 {
		wantCode = 1
	}
	if code := exitCode(t, cmd); code != wantCode {
		t.Fatalf("%v: exit %d, want %d\n%s", cmd.Args, code, wantCode, errb.String())
	}
	var got []jsonTurn
	var summary, tally *jsonTurn
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var j jsonTurn
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		switch {
		case j.Summary != nil:
			summary = &j
		case j.Lines != nil:
			tally = &j
		default:
			got = append(got, j)
		}
	}
	if tally == nil || tally.Lines.refused() != len(want.Malformed) || tally.Lines.TurnLines < len(want.Verdicts) {
		t.Errorf("the lines read: %+v, want %d refused and at least %d turn lines", tally, len(want.Malformed), len(want.Verdicts))
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
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log*"))
		out := filepath.Join(t.TempDir(), "day.html")
		cmd := exec.Command(bin, append([]string{"lines", "--html", out}, logs...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if code := exitCode(t, cmd); code != 0 && (code != 1 || len(want.Malformed) == 0) {
			t.Fatalf("%s: exit %d\n%s", dir, code, errb.String())
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

// linesIn runs `percause lines` (the real binary) in dir on the files named,
// with stdin, and returns its exit code, standard output and standard error.
func linesIn(t *testing.T, dir string, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(testenv.PercauseBin(t), append([]string{"lines"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return exitCode(t, cmd), out.String(), errb.String()
}

func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	goodTurn = "2026-11-30T08:00:09.120Z pippa: [voice-turn] turn=1 link=wifi underruns=0,0 pool_reset=0 live=players:0 gaps=0.12a(0.40),0.12a(0.40)\n"
	goodTake = "2026-11-30T08:00:05.000Z tts[900]: [tts-take] take=t1 first_byte=0.30s total=1.00s rate=3.60 need=0.00s beside=0\n"
)

// TestLinesExitCodes: exit 0 when every tagged line was read and a turn was
// found; 1 when a tagged line was refused, or when no [voice-turn] line was
// found, saying why (an empty file, a binary one, lines but no turn).
func TestLinesExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	binary := []byte("\x7fELF\x02\x01\x01\x00\x00\x00[voice-turn] turn=1\n\x00\x00")
	for _, c := range []struct {
		name  string
		files map[string][]byte
		args  []string
		stdin []byte
		code  int
		say   string
	}{
		{"turns read", map[string][]byte{"phone.log": []byte(goodTurn), "engine.log": []byte(goodTake)},
			[]string{"phone.log", "engine.log"}, nil, 0, ""},
		{"a refused line", map[string][]byte{"phone.log": []byte(goodTurn + "[voice-turn] turn=x units=2 gaps=0.10\n")},
			[]string{"phone.log"}, nil, 1, "lines: 1 tagged line refused"},
		{"an empty file", map[string][]byte{"phone.log": nil},
			[]string{"phone.log"}, nil, 1, "lines: no [voice-turn] line in phone.log (empty)"},
		{"a binary file", map[string][]byte{"phone.bin": binary},
			[]string{"phone.bin"}, nil, 1, "lines: no [voice-turn] line in phone.bin (a binary file, not lines of text)"},
		{"takes and other lines, no turn", map[string][]byte{"engine.log": []byte(goodTake + "GET /health 200\n")},
			[]string{"engine.log"}, nil, 1, "lines: no [voice-turn] line in engine.log (2 lines)"},
		{"empty standard input", nil, []string{"-"}, []byte{}, 1, "lines: no [voice-turn] line in (stdin) (empty)"},
		{"a binary file beside the day's", map[string][]byte{"phone.log": []byte(goodTurn), "core": binary},
			[]string{"phone.log", "core"}, nil, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, c.files)
			code, out, errs := linesIn(t, dir, c.stdin, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			if c.say != "" && !strings.Contains(errs, c.say) {
				t.Errorf("stderr does not say %q:\n%s", c.say, errs)
			}
			if c.code == 0 && strings.Contains(errs, "lines: ") {
				t.Errorf("stderr:\n%s", errs)
			}
			if !strings.Contains(out, "lines: ") {
				t.Errorf("no account of the lines read:\n%s", out)
			}
		})
	}
}

// TestLinesSummary: the run ends with what it read: lines by file, turn and
// take lines, lines refused by reason, unknown fields by name and lines
// that were not ours, in text and in JSON; a refused line is reported with
// every fault it has, each with the form its field expects.
func TestLinesSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	phone := goodTurn +
		"2026-11-30T08:01:09.120Z pippa: [voice-turn] turn=2 link=wifi underruns=0 pool_reset=0 live=players:0 gaps=0.12a(0.40) mood=calm +shiny\n" +
		"2026-11-30T08:02:09.120Z pippa: [voice-turn] turn=two stutter=maybe underruns=0 gaps=0.12 gaps=0.10\n" +
		"2026-11-30T08:03:09.120Z pippa: app became active\n" +
		"\n" +
		"2026-11-30T08:04:09.120Z pippa: [voice-turn] turn=4 link=wifi underruns=0 pool_reset=0 live=players:0 gaps=0.12a(0.40) mood=tired\n"
	engine := goodTake + "2026-11-30T08:00:06.000Z tts[900]: [tts-take] take=t2 need=fast\n"
	dir := writeFiles(t, map[string][]byte{"phone.log": []byte(phone), "engine.log": []byte(engine)})

	code, out, errs := linesIn(t, dir, nil, "phone.log", "engine.log")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (two lines refused)\n%s", code, errs)
	}
	wantTail := "lines: 8 read (phone.log 6, engine.log 2): 4 turn lines, 2 take lines, 2 refused, 2 not ours\n" +
		"refused: bad_value 2 (each on standard error, with its file, line and faults)\n" +
		"unknown fields (ignored): mood 2, +shiny 1\n"
	if !strings.HasSuffix(out, wantTail) {
		t.Errorf("the run ends\n%s\nwant it to end\n%s", out, wantTail)
	}
	for _, want := range []string{
		`phone.log:3: malformed line (bad_value): turn="two": want an int; stutter="maybe": want yes or no; gaps: given twice`,
		`engine.log:2: malformed line (bad_value): need="fast": want seconds (0.40, 0.40s or 400ms)`,
	} {
		if !strings.Contains(errs, want+"\n") {
			t.Errorf("stderr does not report\n%s\nin\n%s", want, errs)
		}
	}

	code, out, _ = linesIn(t, dir, nil, "--json", "phone.log", "engine.log")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last jsonTurn
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Lines == nil || code != 1 {
		t.Fatalf("exit %d; the JSON does not end with the lines read: %q (%v)", code, lines[len(lines)-1], err)
	}
	got, _ := json.Marshal(last.Lines)
	want := `{"read":8,"turn_lines":4,"take_lines":2,"refused":{"bad_value":2},"unknown_fields":{"+shiny":1,"mood":2},"not_ours":2,` +
		`"files":[{"name":"phone.log","read":6,"turn_lines":4},{"name":"engine.log","read":2,"turn_lines":0}]}`
	if string(got) != want {
		t.Errorf("the lines read, in JSON:\n%s\nwant\n%s", got, want)
	}
}

// TestLinesReadsRotationsOldestFirst: the rotations of a log are read
// oldest first, whatever order they are named in: by their first
// timestamps, else by their rotation numbers (a compressed one too); other
// logs keep their place.
func TestLinesReadsRotationsOldestFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("[voice-turn] turn=1 link=wifi underruns=0 gaps=0.12\n"))
	_ = zw.Close()
	untimed := map[string][]byte{
		"phone.log.2.gz": gz.Bytes(),
		"phone.log.1":    []byte("[voice-turn] turn=2 link=wifi underruns=0 gaps=0.12\n"),
		"phone.log":      []byte("[voice-turn] turn=3 link=wifi underruns=0 gaps=0.12\n"),
		"engine.log":     []byte(goodTake),
	}
	at := func(day int) []byte {
		return fmt.Appendf(nil, "2026-11-%02dT08:00:00Z pippa: [voice-turn] turn=%d link=wifi underruns=0 gaps=0.12\n", day, day)
	}
	// Dated rotations, and a live file whose first line is the newest.
	timed := map[string][]byte{"app.log-20261129": at(29), "app.log-20261128": at(28), "app.log": at(30), "engine.log": []byte(goodTake)}
	for name, c := range map[string]struct {
		files map[string][]byte
		args  []string
		read  string
	}{
		"by rotation number": {untimed, []string{"phone.log", "engine.log", "phone.log.1", "phone.log.2.gz"},
			"phone.log.2.gz phone.log.1 phone.log engine.log"},
		"by their first timestamps": {timed, []string{"engine.log", "app.log", "app.log-20261129", "app.log-20261128"},
			"engine.log app.log-20261128 app.log-20261129 app.log"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, c.files)
			code, out, errs := linesIn(t, dir, nil, append([]string{"--json"}, c.args...)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var last jsonTurn
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Lines == nil || code != 0 {
				t.Fatalf("exit %d: %v\n%s\n%s", code, err, out, errs)
			}
			var read []string
			for _, f := range last.Lines.Files {
				read = append(read, f.Name)
			}
			if got := strings.Join(read, " "); got != c.read {
				t.Errorf("read %s, want %s", got, c.read)
			}
			if last.Lines.TurnLines != 3 {
				t.Errorf("%d turn lines, want 3", last.Lines.TurnLines)
			}
		})
	}
}

// TestLinesKeepReading: the reader keeps reading past what a real log
// holds besides lines: a line longer than the reader takes (over 1 MiB) is
// refused, counted and named with its file and line number, and the lines
// after it are read; a run of NUL bytes (what a crash leaves where the log
// was not yet written) is skipped, counted and named, and the line after it
// is read, where it made the whole file "binary" before. Run in process
// (runLines), on real files.
func TestLinesKeepReading(t *testing.T) {
	long := "2026-11-30T08:00:30.000Z pippa: " + strings.Repeat("x", 2<<20) + "\n"
	turn := func(i int) string {
		return fmt.Sprintf("2026-11-30T08:%02d:09.120Z pippa: [voice-turn] turn=%d link=wifi underruns=0,0 pool_reset=0 live=players:0 gaps=0.12a(0.40),0.12a(0.40)\n", i, i)
	}
	for _, c := range []struct {
		name    string
		data    string
		turns   int
		code    int
		say     []string
		refused map[string]int
		nuls    int
	}{
		{"a line over 1 MiB", turn(1) + long + turn(2) + turn(3), 3, 1,
			[]string{"phone.log:2: refused (too_long): the line has 2097184 bytes, at most 1048576; the lines after it are read\n"},
			map[string]int{"too_long": 1}, 0},
		{"a run of NUL bytes at the start", strings.Repeat("\x00", 9000) + turn(1) + turn(2), 2, 0,
			[]string{"phone.log:1: skipped a run of 9000 NUL bytes\n"}, map[string]int{}, 1},
		{"a run of NUL bytes after a torn line", turn(1) + "2026-11-30T08:01:09.120Z pippa: [voice-tu" + strings.Repeat("\x00", 4096) + turn(2) + turn(3), 3, 0,
			[]string{"phone.log:2: skipped a run of 4096 NUL bytes\n"}, map[string]int{}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, map[string][]byte{"phone.log": []byte(c.data)})
			var out, errb bytes.Buffer
			code := runLines(context.Background(), []string{"--json", filepath.Join(dir, "phone.log")}, strings.NewReader(""), &out, &errb)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, c.code, errb.String())
			}
			errs := strings.ReplaceAll(errb.String(), dir+string(filepath.Separator), "")
			for _, s := range c.say {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr does not say %q:\n%s", s, errs)
				}
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			var last jsonTurn
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Lines == nil {
				t.Fatalf("the JSON does not end with the lines read: %q (%v)", lines[len(lines)-1], err)
			}
			if last.Lines.TurnLines != c.turns || len(lines)-1 != c.turns+1 {
				t.Errorf("%d turn lines read, %d JSON objects; want %d turns and the summary\n%s", last.Lines.TurnLines, len(lines)-1, c.turns, out.String())
			}
			if !maps.Equal(last.Lines.Refused, c.refused) {
				t.Errorf("refused %v, want %v", last.Lines.Refused, c.refused)
			}
			if last.Lines.NULRuns != c.nuls {
				t.Errorf("%d NUL runs counted, want %d", last.Lines.NULRuns, c.nuls)
			}
		})
	}
}

// TestLineReader: the reader's lines, each with its number, its text split
// at NUL runs, the runs cut out, and a line over maxLineBytes refused with
// its length (its end not counted) while the next line is read.
func TestLineReader(t *testing.T) {
	big := strings.Repeat("y", maxLineBytes+1)
	for _, c := range []struct {
		name string
		in   string
		want []readLine
	}{
		{"lines, CRLF, no end", "a\r\nb\n\nc", []readLine{{number: 1, parts: []string{"a"}}, {number: 2, parts: []string{"b"}}, {number: 3, parts: []string{""}}, {number: 4, parts: []string{"c"}}}},
		{"a NUL run alone", "\x00\x00\x00\nb\n", []readLine{{number: 1, nulRuns: []int{3}}, {number: 2, parts: []string{"b"}}}},
		{"a torn line, then one after the run", "tor\x00\x00n\n", []readLine{{number: 1, parts: []string{"tor", "n"}, nulRuns: []int{2}}}},
		{"a run at the end", "a\x00\x00", []readLine{{number: 1, parts: []string{"a"}, nulRuns: []int{2}}}},
		{"just over the bound", big + "\r\nnext\n", []readLine{{number: 1, tooLong: maxLineBytes + 1}, {number: 2, parts: []string{"next"}}}},
		{"at the bound", big[1:] + "\r\nnext", []readLine{{number: 1, parts: []string{big[1:]}}, {number: 2, parts: []string{"next"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lr := newLineReader(strings.NewReader(c.in))
			var got []readLine
			for {
				l, err := lr.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, l)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d lines, want %d: %+v", len(got), len(c.want), got)
			}
			for i := range got {
				g, w := got[i], c.want[i]
				if g.number != w.number || !slices.Equal(g.parts, w.parts) || !slices.Equal(g.nulRuns, w.nulRuns) || g.tooLong != w.tooLong {
					t.Errorf("line %d: number %d, %d parts, runs %v, too long %d; want number %d, %d parts, runs %v, too long %d",
						i+1, g.number, len(g.parts), g.nulRuns, g.tooLong, w.number, len(w.parts), w.nulRuns, w.tooLong)
				}
			}
		})
	}
}

// FuzzLineReader: any bytes read as lines never panic the reader; it
// numbers every line, no text it gives holds a NUL or a line's end, and
// the text and the NUL runs it gives never outgrow what it read.
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"a\r\nb\n", "\x00\x00\x00[voice-turn] turn=1\n", "torn[voice-tu\x00\x00\x00\x00[voice-turn] turn=2\r\n", "\n\n\x00", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lr := newLineReader(bytes.NewReader(in))
		total := 0
		for n := int64(1); ; n++ {
			l, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.number != n {
				t.Fatalf("line %d numbered %d", n, l.number)
			}
			for _, p := range l.parts {
				if strings.ContainsAny(p, "\x00\n") {
					t.Fatalf("line %d gives %q", n, p)
				}
				total += len(p)
			}
			for _, r := range l.nulRuns {
				total += r
			}
			if total > len(in) {
				t.Fatalf("gave %d bytes of %d read", total, len(in))
			}
		}
	})
}

// TestLinesTableShowsTimeAndLaunch: the per-turn table gives each turn its
// time and its launch (a short ID), and a line where a launch begins, so a
// relaunch's turn 1 does not sit under the last launch's turns with
// nothing between them. Run in process on real files.
func TestLinesTableShowsTimeAndLaunch(t *testing.T) {
	turn := func(min, pid, i int, uptime float64) string {
		return fmt.Sprintf("2026-11-30 08:%02d:09.120000+0000 Pippa[%d:7001] <Notice> [voice-turn] turn=%d link=wifi underruns=0,0 pool_reset=0 live=players:0 health:app_uptime=%.2f gaps=0.12a(0.40),0.12a(0.40)\n", min, pid, i, uptime)
	}
	dir := writeFiles(t, map[string][]byte{"phone.log": []byte(turn(0, 311, 1, 30) + turn(1, 311, 2, 90) + turn(5, 312, 1, 20) + turn(6, 312, 2, 80))})
	var out, errb bytes.Buffer
	if code := runLines(context.Background(), []string{filepath.Join(dir, "phone.log")}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	table := strings.SplitN(out.String(), "\n\n", 2)[0]
	rows := strings.Split(table, "\n")
	if len(rows) != 7 {
		t.Fatalf("the table has %d rows, want a header, 2 launch lines and 4 turns:\n%s", len(rows), table)
	}
	if !strings.HasPrefix(rows[0], "time      launch    turn  trace") {
		t.Errorf("header %q", rows[0])
	}
	var launches []string
	for i, r := range rows[1:] {
		if id, ok := strings.CutPrefix(r, "── launch "); ok {
			launches = append(launches, strings.Fields(id)[0])
			if i != 0 && i != 3 {
				t.Errorf("a launch begins at row %d: %q", i+1, r)
			}
			continue
		}
		f := strings.Fields(r)
		if len(f) < 3 || len(launches) == 0 || f[1] != launches[len(launches)-1] {
			t.Errorf("row %q does not name the launch begun above it (%v)", r, launches)
		}
	}
	if want := []string{"08:00:09", "08:01:09", "08:05:09", "08:06:09"}; !strings.Contains(table, want[0]) || !strings.Contains(table, want[3]) {
		t.Errorf("the table does not give the turns' times %v:\n%s", want, table)
	}
	if len(launches) != 2 || launches[0] == launches[1] || len(launches[0]) != 8 {
		t.Errorf("launches %v, want two short IDs:\n%s", launches, table)
	}
}
