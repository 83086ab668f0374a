package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/verdicts"
)

// TestTurnFromTheFileAndThePage: the real collector decides the sample
// turn; `percause turn` prints its verdict, evidence and readings from the
// verdict file (named, and found from PERCAUSE_DATA_DIR) and from the
// running collector's page, which adds nothing the file contradicts. A
// trace it does not hold exits 1.
func TestTurnFromTheFileAndThePage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	body, err := os.ReadFile(sampleTurn)
	if err != nil {
		t.Fatal(err)
	}
	// The sample happened on a fixed day; moved to now, so the page keeps
	// it (keep.age).
	body = shiftTimes(t, body, time.Now().Add(-time.Minute))
	col := testenv.StartCollector(t)
	postJSON(t, col.OTLPURL+"/v1/traces", body)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const trace = "5b8efff798038103d269b633813fc60c"
	if _, err := verdicts.NewReader(col.VerdictFile).Wait(ctx, []string{trace}); err != nil {
		t.Fatal(err)
	}
	fromFile, errOut, code := runBin(t, "turn", "--file", col.VerdictFile, strings.ToUpper(trace))
	if code != exitOK {
		t.Fatalf("turn --file: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"turn 1 · ", "trace " + trace, "  verdict              network", "  evidence             " + sampleEvidence,
		"unit 2, take t2: 2 underruns, 1.40 s silent; need 0.40 s ≤ cushion 1.50 s: read as network"} {
		if !strings.Contains(fromFile, want) {
			t.Errorf("turn --file does not say %q:\n%s", want, fromFile)
		}
	}
	cmd := exec.Command(testenv.PercauseBin(t), "turn", trace)
	cmd.Env = append(os.Environ(), "PERCAUSE_DATA_DIR="+col.DataDir, "PERCAUSE_VERDICT_FILE=")
	if out, err := cmd.Output(); err != nil || string(out) != fromFile {
		t.Errorf("turn from PERCAUSE_DATA_DIR: %v\n%s\nwant\n%s", err, out, fromFile)
	}
	var fromPage string
	testenv.WaitFor(t, 10*time.Second, "the page to keep the turn", func() bool {
		out, _, code := runBin(t, "turn", "--page", col.PageURL, trace)
		fromPage = out
		return code == exitOK
	})
	// Read from the same verdict and link changes, both say the same.
	if fromPage != fromFile {
		t.Errorf("the page's turn differs from the file's:\n%s\nfile:\n%s", fromPage, fromFile)
	}
	other := "0a00000000000000000000000000001f"
	if _, errOut, code := runBin(t, "turn", "--file", col.VerdictFile, other); code != exitFailed || !strings.Contains(errOut, "no verdict for trace") {
		t.Errorf("a trace the file does not hold: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runBin(t, "turn", "--page", col.PageURL, other); code != exitFailed || !strings.Contains(errOut, "404 Not Found") {
		t.Errorf("a trace the page does not keep: exit %d, %q", code, errOut)
	}
}

// shiftTimes moves every time of an OTLP/JSON document so that its first
// is at.
func shiftTimes(t *testing.T, body []byte, at time.Time) []byte {
	t.Helper()
	re := regexp.MustCompile(`("[a-zA-Z]*UnixNano": *")(\d+)"`)
	var first int64
	for _, m := range re.FindAllSubmatch(body, -1) {
		v, _ := strconv.ParseInt(string(m[2]), 10, 64)
		if first == 0 || v < first {
			first = v
		}
	}
	if first == 0 {
		t.Fatal("no times in the sample")
	}
	shift := at.UnixNano() - first
	return re.ReplaceAllFunc(body, func(b []byte) []byte {
		m := re.FindSubmatch(b)
		v, _ := strconv.ParseInt(string(m[2]), 10, 64)
		return []byte(string(m[1]) + strconv.FormatInt(v+shift, 10) + `"`)
	})
}

// TestTurnFromRotatedFiles: a verdict rotated out of the file is found in
// FILE.1, FILE.2, …, with the link status changes of its trace in the files
// read; a trace in none of them is not found.
func TestTurnFromRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "verdicts.jsonl")
	line := func(tr byte, cause string) []byte {
		td := ptrace.NewTraces()
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName(semconv.SpanVerdict)
		s.SetTraceID(pcommon.TraceID{0x0a, 15: tr})
		s.Attributes().PutStr(semconv.VerdictCause, cause)
		s.Attributes().PutInt(semconv.TurnIndex, int64(tr))
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	link := func(tr byte, at time.Time, status string) []byte {
		td := ptrace.NewTraces()
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName(semconv.SpanLinkStatus)
		s.SetTraceID(pcommon.TraceID{0x0a, 15: tr})
		s.SetSpanID(pcommon.SpanID{0x0c, 7: byte(at.Second())})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
		s.Attributes().PutStr(semconv.LinkStatus, status)
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for name, content := range map[string][]byte{
		path:        append(line(3, "pool"), link(2, at.Add(2*time.Second), semconv.LinkStatusOK)...),
		path + ".1": append(link(2, at.Add(time.Second), semconv.LinkStatusConnectionLost), line(2, "wait")...),
		path + ".2": append(line(1, "state"), "not json\n"...),
	} {
		if err := os.WriteFile(name, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for tr, cause := range map[byte]string{3: "pool", 2: "wait", 1: "state"} {
		got, links, found, err := turnFromFile(path, pcommon.TraceID{0x0a, 15: tr}.String())
		if err != nil || !found || got.Cause != cause || got.Turn != int64(tr) {
			t.Errorf("trace %d: %+v, %v, %v; want %s", tr, got, found, err, cause)
		}
		var statuses []string
		for _, l := range links {
			statuses = append(statuses, l.Status)
		}
		if want := map[byte]string{2: "connection_lost,ok"}[tr]; strings.Join(statuses, ",") != want {
			t.Errorf("trace %d: link changes %v, want %q", tr, statuses, want)
		}
	}
	if _, _, found, err := turnFromFile(path, pcommon.TraceID{0x0b}.String()); found || err != nil {
		t.Errorf("a trace in no file: found %v, %v", found, err)
	}
	if _, _, _, err := turnFromFile(filepath.Join(dir, "none.jsonl"), pcommon.TraceID{0x0b}.String()); err == nil {
		t.Error("a verdict file that does not exist is no error")
	}
	var out, errb bytes.Buffer
	env := func(k string) string { return map[string]string{"PERCAUSE_DATA_DIR": dir}[k] }
	if code := runTurn(context.Background(), []string{pcommon.TraceID{0x0a, 15: 2}.String()}, env, &out, &errb); code != exitOK ||
		!strings.Contains(out.String(), "verdict              wait") || !strings.Contains(out.String(), "link status during the turn:\n  ") ||
		!strings.Contains(out.String(), " connection_lost\n") {
		t.Errorf("runTurn from PERCAUSE_DATA_DIR: exit %d, %s%s", code, out.String(), errb.String())
	}
}
