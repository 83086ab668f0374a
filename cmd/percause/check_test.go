package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/command/livecheck"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/verdicts"
)

// sampleTurn is docs/clients.md's complete sample turn as OTLP/JSON.
var sampleTurn = filepath.Join("testdata", "clients", "sample-turn.json")

const sampleEvidence = "unit 2: 2 underruns, 1.40 s silent; take t2 need 0.40 s ≤ cushion 1.50 s"

func postJSON(t *testing.T, url string, body []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d", url, resp.StatusCode)
	}
}

// TestSampleTurnThroughTheCollector sends docs/clients.md's sample turn to
// the real collector binary on its embedded default config, with the
// command docs/clients.md shows (its script moves the turn's times to now,
// with sed and curl), and reads its verdict back: the turn's verdict, and a
// turn that ended when it was sent, as the verdict page needs.
func TestSampleTurnThroughTheCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed (docs/clients.md's command needs it; .ci/run installs it)")
	}
	col := testenv.StartCollector(t)
	const shown = "sh cmd/percause/testdata/clients/send-sample.sh http://127.0.0.1:4318"
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "\n"+shown+" ") {
		t.Fatalf("docs/clients.md no longer shows %q", shown)
	}
	args := strings.Fields(strings.Replace(shown, "http://127.0.0.1:4318", col.OTLPURL, 1))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = testenv.RepoRoot()
	before := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", shown, err, out)
	}
	after := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const trace = "5b8efff798038103d269b633813fc60c"
	got, err := verdicts.NewReader(col.VerdictFile).Wait(ctx, []string{trace})
	if err != nil {
		t.Fatal(err)
	}
	v := got[trace]
	if v.Cause != "network" || strings.Join(v.Causes, ",") != "network" || v.Evidence != sampleEvidence || v.Forced != "" || v.Turn != 1 {
		t.Errorf("verdict %+v, want network: %s", v, sampleEvidence)
	}
	// The turn ended when it was sent (its times have whole seconds).
	ended := turnTime(t, col.VerdictFile, trace)
	if ended.Before(before.Truncate(time.Second).Add(-time.Second)) || ended.After(after) {
		t.Errorf("the turn ended at %s, want it sent between %s and %s", ended, before, after)
	}
}

// turnTime reads when a trace's turn ended from its verdict span in the
// verdict file (percause.turn.time).
func turnTime(t *testing.T, path, trace string) time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var u ptrace.JSONUnmarshaler
	for _, line := range bytes.Split(b, []byte("\n")) {
		td, err := u.UnmarshalTraces(line)
		if err != nil {
			continue
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					s := spans.At(k)
					if s.Name() != semconv.SpanVerdict || s.TraceID().String() != trace {
						continue
					}
					if v, ok := s.Attributes().Get(semconv.VerdictTurnTime); ok {
						return time.Unix(0, v.Int())
					}
				}
			}
		}
	}
	t.Fatalf("no verdict span of trace %s with %s in %s", trace, semconv.VerdictTurnTime, path)
	return time.Time{}
}

// wrongClient is the sample turn as a client under development sends it,
// with one fault of each kind.
func wrongClient(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(sampleTurn)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	rs := doc["resourceSpans"].([]any)
	phone, engine := rs[0].(map[string]any), rs[1].(map[string]any)
	spans := func(r map[string]any) []any {
		return r["scopeSpans"].([]any)[0].(map[string]any)["spans"].([]any)
	}
	attrs := func(s any) []any { return s.(map[string]any)["attributes"].([]any) }
	set := func(s any, key string, value map[string]any) {
		m := s.(map[string]any)
		as := attrs(s)
		for i, a := range as {
			if a.(map[string]any)["key"] == key {
				if value == nil {
					m["attributes"] = append(as[:i:i], as[i+1:]...)
				} else {
					a.(map[string]any)["value"] = value
				}
				return
			}
		}
		if value != nil {
			m["attributes"] = append(as, map[string]any{"key": key, "value": value})
		}
	}
	const trace = "7d2c1b0a99887766554433221100ffee"
	for _, r := range rs {
		for _, s := range spans(r.(map[string]any)) {
			s.(map[string]any)["traceId"] = trace
		}
	}
	ps, es := spans(phone), spans(engine)
	turn, unit2, unit3 := ps[0], ps[2], ps[3]
	set(turn, "pippa.turn.units", map[string]any{"stringValue": "3"})             // mistyped
	set(turn, "pippa.turn.stutter", nil)                                          //
	set(turn, "pippa.turn.stuter", map[string]any{"boolValue": false})            // unknown, a typo
	set(turn, "pippa.listen.total", map[string]any{"doubleValue": -0.5})          // out of range
	set(turn, "network.connection.type", map[string]any{"stringValue": "lte"})    // not one of the values
	set(unit2, "pippa.unit.cushion", nil)                                         // missing: it underran
	unit3.(map[string]any)["parentSpanId"] = "2000000000000001"                   // structure: not the turn's child
	set(es[2], "pippa.take.need", nil)                                            // missing
	set(engine["resource"], "service.name", map[string]any{"stringValue": "tts"}) // the wrong service
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckNamesEachFault runs `percause check` (the real binary) and sends
// it the sample turn, then the same turn from a deliberately wrong client:
// the sample is clean with its verdict, and the report of the wrong one
// names each of its faults.
func TestCheckNamesEachFault(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	port := testenv.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.PercauseBin(t), "check", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--json", "--turns", "2")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port)
	testenv.WaitFor(t, 30*time.Second, "percause check to listen", func() bool {
		return strings.Contains(errb.String(), "listening for OTLP/HTTP")
	})
	sample, err := os.ReadFile(sampleTurn)
	if err != nil {
		t.Fatal(err)
	}
	postJSON(t, url, sample)
	postJSON(t, url, wrongClient(t))
	err = cmd.Wait()
	var exit *exec.ExitError
	if err == nil || !errorsAs(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("check ended with %v, want exit 1 (a faulty turn)\n%s", err, errb.String())
	}
	reports := map[string]livecheck.Report{}
	var summary *livecheck.Summary
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r struct {
			livecheck.Report
			Summary *livecheck.Summary `json:"summary"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not a report: %q", sc.Text())
		}
		if r.Summary != nil {
			summary = r.Summary
			continue
		}
		reports[r.Trace] = r.Report
	}
	if want := (livecheck.Summary{Turns: 2, Clean: 1, Faulty: 1}); summary == nil || *summary != want {
		t.Errorf("the check ends with the summary %+v, want %+v", summary, want)
	}
	clean := reports["5b8efff798038103d269b633813fc60c"]
	if !clean.Clean || clean.Verdict == nil || clean.Verdict.Cause != "network" || clean.Verdict.Evidence != sampleEvidence {
		t.Errorf("the sample turn: %+v", clean)
	}
	for _, p := range clean.Problems {
		t.Errorf("the sample turn has a problem: %s", p)
	}
	wrong := reports["7d2c1b0a99887766554433221100ffee"]
	if wrong.Clean || wrong.Verdict == nil {
		t.Fatalf("the wrong client: %+v", wrong)
	}
	var text []string
	for _, p := range wrong.Problems {
		text = append(text, p.String())
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{
		"mistyped  voice.turn: pippa.turn.units is a str, want an integer",
		"unknown   voice.turn: pippa.turn.stuter is not in the registry (did you mean pippa.turn.stutter?)",
		"range     voice.turn: pippa.listen.total is a negative duration (-0.50 s)",
		"range     voice.turn: network.connection.type is \"lte\", not one of wifi, cell, wired, unavailable, unknown",
		"missing   voice.unit 2: pippa.unit.cushion (required: when the unit underran)",
		"structure voice.unit 3 is not a child of the turn's voice.turn span",
		"missing   tts.take t3: pippa.take.need (required: a take without it cannot be read against its unit)",
		"range     resource of tts.take t1: service.name is \"tts\", want \"pippa-engine\"",
		"advice    voice.turn: pippa.turn.stutter absent (recommended: the Bluetooth rule)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the report does not say %q; it says:\n%s", want, all)
		}
	}
	if c := wrong.Verdict.Cause; c != "unknown" || !strings.Contains(wrong.Verdict.Evidence, "bad input") {
		t.Errorf("the wrong client's verdict %+v, want unknown for bad input", wrong.Verdict)
	}
}

func errorsAs(err error, target *(*exec.ExitError)) bool { return errors.As(err, target) }

// lockedBuffer is an output read while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCheckReportsTakesWithoutTheirTurnAndSummarizes runs `percause check`
// (the real binary), sends it the sample turn and, in a trace of their own,
// only the sample's engine takes: once the decision window is over the
// takes are reported as a trace with no turn; interrupted, the check ends
// with its summary, and exits 1 for the takes without their turn.
func TestCheckReportsTakesWithoutTheirTurnAndSummarizes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	port := testenv.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.PercauseBin(t), "check", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--json", "--verdict-wait", "1s")
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port)
	testenv.WaitFor(t, 30*time.Second, "percause check to listen", func() bool {
		return strings.Contains(errb.String(), "listening for OTLP/HTTP")
	})
	sample, err := os.ReadFile(sampleTurn)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(sample, &doc); err != nil {
		t.Fatal(err)
	}
	engine := doc["resourceSpans"].([]any)[1].(map[string]any)
	const takesOnly = "00000000000000000000000000a1b2c3"
	for _, s := range engine["scopeSpans"].([]any)[0].(map[string]any)["spans"].([]any) {
		s.(map[string]any)["traceId"] = takesOnly
	}
	takes, err := json.Marshal(map[string]any{"resourceSpans": []any{engine}})
	if err != nil {
		t.Fatal(err)
	}
	postJSON(t, url, takes)
	postJSON(t, url, sample)
	testenv.WaitFor(t, 30*time.Second, "both reports", func() bool {
		o := out.String()
		return strings.Contains(o, `"takes_only":true`) && strings.Contains(o, `"trace":"5b8efff798038103d269b633813fc60c"`)
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errorsAs(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("check ended with %v, want exit 1 (takes without their turn)\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last struct {
		Summary *livecheck.Summary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Summary == nil {
		t.Fatalf("the check does not end with its summary: %q (%v)", lines[len(lines)-1], err)
	}
	if want := (livecheck.Summary{Turns: 1, Clean: 1, TakesOnly: 1}); *last.Summary != want {
		t.Errorf("summary %+v, want %+v", *last.Summary, want)
	}
	for _, l := range lines {
		var r livecheck.Report
		if json.Unmarshal([]byte(l), &r) == nil && r.Trace == takesOnly {
			if !r.TakesOnly || r.Clean || len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Detail, "has only tts.take spans (t1, t2, t3)") {
				t.Errorf("the takes' report: %+v", r)
			}
		}
	}
}
