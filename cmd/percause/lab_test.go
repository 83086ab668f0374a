package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab"
	"github.com/percause/percause/lab/scenario"
)

func TestLabFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{nil, 2, "usage: percause lab run"},
		{[]string{"walk"}, 2, "usage"},
		{[]string{"run"}, 2, "--scenario is required"},
		{[]string{"run", "--scenario", "weather"}, 2, "no scenario \"weather\""},
		{[]string{"run", "--scenario", "healthy", "--otlp", "http://127.0.0.1:4318"}, 2, "--otlp and --verdicts go together"},
		{[]string{"run", "--scenario", "healthy", "extra"}, 2, "unexpected argument"},
		{[]string{"run", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"help"}, 0, "scenarios: healthy"},
		{[]string{"run", "--scenario", "healthy", "--scale", "0"}, 2, "--scale must be a positive finite number"},
		{[]string{"run", "--scenario", "healthy", "--scale", "-5"}, 2, "--scale must be a positive finite number"},
		{[]string{"run", "--scenario", "healthy", "--scale", "NaN"}, 2, "--scale must be a positive finite number"},
		{[]string{"run", "--scenario", "healthy", "--scale", "+Inf"}, 2, "--scale must be a positive finite number"},
	} {
		var out, errb bytes.Buffer
		if code := runLab(context.Background(), c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.say) {
			t.Errorf("lab %q: exit %d, want %d; stderr %q, want it to say %q", c.args, code, c.code, errb.String(), c.say)
		}
	}
}

// TestDemoFlags: every usage error exits 2 before the demo prints anything
// (no "a person-second lasts +Inf ms").
func TestDemoFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--verdicts", "x"}, "--otlp and --verdicts go together"},
		{[]string{"--scale", "0"}, "--scale must be a positive finite number"},
		{[]string{"--scale", "-1"}, "--scale must be a positive finite number"},
		{[]string{"--scale", "Inf"}, "--scale must be a positive finite number"},
		{[]string{"--scale", "NaN"}, "--scale must be a positive finite number"},
	} {
		var out, errb bytes.Buffer
		code := runDemo(context.Background(), c.args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.say) {
			t.Errorf("demo %q: exit %d, stderr %q; want 2 saying %q", c.args, code, errb.String(), c.say)
		}
		if out.Len() > 0 {
			t.Errorf("demo %q printed before refusing: %q", c.args, out.String())
		}
	}
}

// The command end to end: this binary starts its own collector, runs the
// healthy scenario and prints one JSON object per turn with the fields the
// architecture fixes.
func TestLabRunJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: starts the collector")
	}
	bin := testenv.PercauseBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "lab", "run", "--scenario", "healthy", "--json", "--scale", "2.5")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("percause lab run: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per turn (2):\n%s", len(lines), out)
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		for _, k := range []string{"scenario", "turn", "expected", "cause", "causes", "evidence"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d has no %q: %s", i+1, k, l)
			}
		}
		if m["scenario"] != "healthy" || m["turn"] != float64(i+1) || m["cause"] != "none" || m["ok"] != true {
			t.Errorf("line %d: %s", i+1, l)
		}
	}
}

// TestDemoExplainsTheLostLinkLines: a newcomer reading
// "expected link engine_restarting … verdict none" finds, in the demo's own
// output, why none is the right verdict there.
func TestDemoExplainsTheLostLinkLines(t *testing.T) {
	res := &lab.Result{Turns: []lab.TurnResult{
		{Scenario: "engine-restart", Turn: 1, Expected: "link engine_restarting, missed checks some", Cause: "none", OK: true},
	}}
	var out bytes.Buffer
	printDemo(&out, res, "", "", "", false, false)
	for _, want := range []string{
		"expected link engine_restarting", // the line itself
		"expected link STATUS",
		"engine_restarting",
		`"verdict none" is right`,
		"expected missed checks",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output does not say %q:\n%s", want, out.String())
		}
	}
}

// TestDemoSaysWhereThePageIs: the demo's "where to look" names the verdict
// page's address first, says which addresses stay up only with --hold, and
// whether the verdict file outlives the demo.
func TestDemoSaysWhereThePageIs(t *testing.T) {
	res := &lab.Result{}
	for _, c := range []struct {
		kept, held bool
		page, head string
		file       string
	}{
		{false, false, "--hold keeps it", "stay up only with --hold", "kept with --work-dir DIR"},
		{false, true, "up while the demo holds", "where to look:", "v.jsonl  (removed when the demo exits; --work-dir DIR keeps it)"},
		{true, false, "--hold keeps it", "stay up only with --hold", "verdict file         v.jsonl\n"},
	} {
		var out bytes.Buffer
		printDemo(&out, res, "127.0.0.1:9464", "127.0.0.1:9465", "v.jsonl", c.kept, c.held)
		s := out.String()
		page, prom := strings.Index(s, "verdict page         http://127.0.0.1:9465/"), strings.Index(s, "Prometheus endpoint")
		if page < 0 || prom < page || !strings.Contains(s[page:prom], c.page) {
			t.Errorf("kept %v held %v: the demo says\n%s\nwant the page's address first, %q", c.kept, c.held, s, c.page)
		}
		if !strings.Contains(s, c.head) || !strings.Contains(s, c.file) {
			t.Errorf("kept %v held %v: the demo says\n%s\nwant %q and %q", c.kept, c.held, s, c.head, c.file)
		}
	}
}

// TestDemoLegendExplainsEveryExpectation: every expectation the scenario
// table makes the demo print (each cause, none and unknown above all, each
// status line, the checks, the waits, a turn that judges no cause) is
// explained by the legend under the table.
func TestDemoLegendExplainsEveryExpectation(t *testing.T) {
	var out bytes.Buffer
	printDemo(&out, &lab.Result{}, "", "", "", false, false)
	legend := out.String()
	want := map[string]string{} // what the table prints -> what the legend must say
	for _, sc := range scenario.All {
		for i, tu := range sc.Turns {
			e, where := tu.Expect, fmt.Sprintf("%s turn %d (%q)", sc.Name, i+1, tu.Expect.String())
			switch e.Cause {
			case "":
				want[where+": no cause"] = "no CAUSE in the expectation"
			case semconv.CauseNone, semconv.CauseUnknown:
				want[where+": "+e.Cause] = "expected " + e.Cause + " "
			default:
				want[where+": "+e.Cause] = e.Cause
			}
			if e.Link != "" {
				want[where+": link"] = e.Link
			}
			if e.Missed != scenario.MissedAny {
				want[where+": checks"] = "expected missed checks none|some"
			}
			for _, w := range e.Waits {
				want[where+": "+w] = w
			}
		}
	}
	for what, say := range want {
		if !strings.Contains(legend, say) {
			t.Errorf("%s: the legend does not say %q:\n%s", what, say, legend)
		}
	}
	for _, say := range []string{`"post S s"`, "the done reading allows 3 s", "cell/lte", "shown where their fault is injected"} {
		if !strings.Contains(legend, say) {
			t.Errorf("the legend does not explain the detail: no %q", say)
		}
	}
}

// TestDemoHoldsThePageUp: `percause demo --hold` (the real binary: its own
// collector, every scenario) prints the verdict page's address and keeps
// it up: the page answers after the run, with as many turns as the demo
// printed, until the demo is interrupted.
func TestDemoHoldsThePageUp(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: the whole demo")
	}
	bin := testenv.PercauseBin(t)
	cmd := exec.Command(bin, "demo", "--hold", "--scale", "10")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	holding := regexp.MustCompile(`the verdict page is at (http://127\.0\.0\.1:\d+/)`)
	counted := regexp.MustCompile(`^(\d+) turns: `)
	var page string
	turns := -1
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := counted.FindStringSubmatch(sc.Text()); m != nil {
			turns, _ = strconv.Atoi(m[1])
		}
		if m := holding.FindStringSubmatch(sc.Text()); m != nil {
			page = m[1]
			break
		}
	}
	if page == "" || turns < 0 {
		t.Fatalf("the demo never said where its page is (turns %d); stderr:\n%s", turns, stderr.String())
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	// After the run, while it holds: the page answers with every turn.
	resp, err := http.Get(page + "?range=all")
	if err != nil {
		t.Fatalf("the page at %s: %v", page, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// A scenario the host disturbed runs again, so the collector may have
	// decided more turns than the demo lists, never fewer.
	m := regexp.MustCompile(`<strong data-n="(\d+)">`).FindSubmatch(body)
	shown := -1
	if m != nil {
		shown, _ = strconv.Atoi(string(m[1]))
	}
	if resp.StatusCode != http.StatusOK || turns == 0 || shown < turns {
		t.Fatalf("the held page (HTTP %d) counts %d turns; the demo ran %d", resp.StatusCode, shown, turns)
	}
	select {
	case err := <-exited:
		t.Fatalf("the demo exited while holding: %v", err)
	default:
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not stop on an interrupt")
	}
	if _, err := http.Get(page); err == nil {
		t.Error("the page still answers after the demo stopped")
	}
}
