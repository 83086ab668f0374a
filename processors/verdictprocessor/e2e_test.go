package verdictprocessor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// TestEndToEnd runs the real collector binary on the embedded default
// configuration, exports one turn per cause to it over OTLP/HTTP (protobuf),
// and reads the verdicts back where users read them: the counters on the
// Prometheus endpoint and the verdict file, turn for turn.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the collector binary")
	}
	col := testenv.StartCollector(t, testenv.WithCollectorEnv(testenv.EnvVerdictWait, "500ms"), testenv.WithCollectorEnv(testenv.EnvDecisionWait, "200ms"))

	bt := map[string]any{semconv.RouteOutputs: []any{"bluetooth_a2dp"}, semconv.RouteBluetooth: true}
	type turnCase struct {
		cause   string
		link    string
		batches []ptrace.Traces // exported in this order
	}
	// Trace n's phone spans and engine spans travel separately, as they do
	// from two processes; for some turns the engine's come first.
	split := func(n byte, engineFirst bool, spans ...sp) []ptrace.Traces {
		var phone, engine []sp
		for _, s := range spans {
			if s.engine {
				engine = append(engine, s)
			} else {
				phone = append(phone, s)
			}
		}
		var out []ptrace.Traces
		if engineFirst && len(engine) > 0 {
			out = append(out, build(n, engine...))
		}
		out = append(out, build(n, withUnitCount(phone)...))
		if !engineFirst && len(engine) > 0 {
			out = append(out, build(n, engine...))
		}
		return out
	}
	cell := map[string]any{semconv.NetworkConnectionType: semconv.LinkCell}
	cases := []turnCase{
		{semconv.CauseNetwork, semconv.LinkWifi, split(1, true, take("t1", 0.4, nil), underrun(1, 2, 1.4, nil), turn(nil))},
		{semconv.CauseSynthesis, semconv.LinkCell, split(2, false, take("t1", 2.1, nil), underrun(1, 2, 1.4, nil), turn(cell))},
		{semconv.CauseBluetooth, semconv.LinkWifi, split(3, true, unit(1, nil), turn(merge(bt, map[string]any{semconv.TurnStutter: true})))},
		{semconv.CauseWait, semconv.LinkWifi, split(4, true, unit(1, map[string]any{semconv.UnitLead: -0.4}), turn(nil))},
		{semconv.CausePool, semconv.LinkCell, split(5, true, unit(1, nil), turn(merge(cell, map[string]any{semconv.PoolResets: int64(3), semconv.PoolResetsBefore: int64(2)})))},
		{semconv.CauseState, semconv.LinkWifi, split(6, true, unit(1, nil), turn(map[string]any{
			semconv.LiveAttr(semconv.LivePlayers): int64(5), semconv.LiveBeforeAttr(semconv.LivePlayers): []any{int64(2), int64(3), int64(4)},
		}))},
		{semconv.CauseNone, semconv.LinkWifi, split(7, true, take("t1", 0.4, nil), unit(1, nil), turn(nil))},
		{semconv.CauseSynthesis, semconv.LinkWifi, split(8, false, take("t1", 3.0, nil), underrun(1, 1, 0.7, nil), turn(nil))},
		// The take never comes: decided after the wait.
		{semconv.CauseUnknown, semconv.LinkWifi, split(9, true, underrun(1, 1, 0.7, nil), turn(nil))},
		// More turns on series already counted: the counters add up.
		{semconv.CauseNetwork, semconv.LinkWifi, split(10, false, take("t1", 0.2, nil), underrun(1, 1, 0.3, nil), turn(nil))},
		{semconv.CauseNetwork, semconv.LinkWifi, split(11, true, take("t1", 0.2, nil), underrun(1, 1, 0.3, nil), turn(nil))},
		{semconv.CauseNone, semconv.LinkWifi, split(12, true, unit(1, nil), turn(nil))},
	}
	want := map[string]int{}
	wantImplicated := map[string]int{}
	for _, c := range cases {
		for _, td := range c.batches {
			postTraces(t, col.OTLPURL, td)
		}
		want[c.cause+"/"+c.link]++
		wantImplicated[c.cause]++
	}
	// A duplicate delivery of a decided turn yields no second verdict.
	for _, td := range cases[1].batches {
		postTraces(t, col.OTLPURL, td)
	}

	deadline := time.Now().Add(20 * time.Second)
	var got map[string]int
	for {
		got = scrapeCounter(t, col.PromURL, semconv.PromTurnsTotal)
		if total(got) >= len(cases) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// One more scrape a moment later: a duplicate verdict would show here.
	time.Sleep(700 * time.Millisecond)
	got = scrapeCounter(t, col.PromURL, semconv.PromTurnsTotal)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s by cause/link = %v, want %v", semconv.PromTurnsTotal, got, want)
	}
	implicated := map[string]int{}
	for k, n := range scrapeCounter(t, col.PromURL, semconv.PromImplicatedTotal) {
		implicated[strings.SplitN(k, "/", 2)[0]] += n
	}
	if fmt.Sprint(implicated) != fmt.Sprint(wantImplicated) {
		t.Fatalf("%s by cause = %v, want %v", semconv.PromImplicatedTotal, implicated, wantImplicated)
	}
	body := testenv.GetBody(t, col.PromURL)
	if !strings.Contains(body, `app_installation_id="install-1"`) {
		t.Errorf("verdict counters lack the installation label:\n%s", grepLines(body, semconv.PromTurnsTotal))
	}

	// Turn for turn, from the verdict file.
	var fromFile map[string]string
	testenv.WaitFor(t, 10*time.Second, "every verdict in the verdict file", func() bool {
		fromFile = readVerdictFile(t, col.VerdictFile)
		return len(fromFile) >= len(cases)
	})
	for i, c := range cases {
		id := traceID(byte(i + 1)).String()
		if fromFile[id] != c.cause {
			t.Errorf("trace %s: verdict %q in the file, want %q", id, fromFile[id], c.cause)
		}
	}

	// The processor's own telemetry counted the verdicts and the duplicate.
	// The names are the ones the pipeline dashboard reads
	// (dashboards/pipeline.go), as the collector's Prometheus reader writes
	// them.
	tel := testenv.GetBody(t, col.TelemetryURL)
	for _, w := range []struct {
		series string // name, or name{label="value"
		want   float64
	}{
		{`otelcol_processor_verdict_verdicts_total{percause_cause="network"`, 3},
		{`otelcol_processor_verdict_verdicts_total{percause_cause="unknown"`, 1},
		{`otelcol_processor_verdict_forced_total{reason="wait"`, 1},
		// The duplicate of turn 2: its take, unit and turn.
		{`otelcol_processor_verdict_dropped_total{reason="decided"`, 3},
		{`otelcol_processor_verdict_pending_turns`, 0},
	} {
		if got, ok := sample(tel, w.series); !ok || got != w.want {
			t.Errorf("self-telemetry %s…} = %v (found: %v), want %v:\n%s", w.series, got, ok, w.want, grepLines(tel, "otelcol_processor_verdict"))
		}
	}
}

// sample reads the value of the first exposition line of the metric named in
// series (name, or name{label="value") that carries the label given.
func sample(exposition, prefix string) (float64, bool) {
	name, labels, _ := strings.Cut(prefix, "{")
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		if labels != "" && !strings.Contains(line, labels) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		return v, err == nil
	}
	return 0, false
}

func postTraces(t *testing.T, base string, td ptrace.Traces) {
	t.Helper()
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/v1/traces", "application/x-protobuf", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /v1/traces: %s %s", resp.Status, msg)
	}
}

var labelRE = regexp.MustCompile(`(\w+)="([^"]*)"`)

// scrapeCounter sums a counter by "cause/link".
func scrapeCounter(t *testing.T, url, name string) map[string]int {
	t.Helper()
	out := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(testenv.GetBody(t, url)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		labels := map[string]string{}
		for _, m := range labelRE.FindAllStringSubmatch(line, -1) {
			labels[m[1]] = m[2]
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out[labels["percause_cause"]+"/"+labels["network_connection_type"]] += int(v)
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func grepLines(body, substr string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// readVerdictFile returns the cause of every verdict span in the file, by
// trace ID.
func readVerdictFile(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	u := ptrace.JSONUnmarshaler{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		td, err := u.UnmarshalTraces(line)
		if err != nil {
			continue // a line still being written
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					s := ss.At(j).Spans().At(k)
					if s.Name() == semconv.SpanVerdict {
						c, _ := s.Attributes().Get(semconv.VerdictCause)
						out[s.TraceID().String()] = c.Str()
					}
				}
			}
		}
	}
	return out
}

// TestFreshness measures, on the real binary with the embedded default, how
// long a complete turn takes from its export to its count on the Prometheus
// endpoint. It reports the figure (the architecture's target is p95 ≤ 5 s;
// percentiles by nearest rank, the smallest latency at least that share of
// turns took) and asserts only that every turn arrives.
func TestFreshness(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the collector binary")
	}
	col := testenv.StartCollector(t)
	const turns = 20
	var lat []time.Duration
	for i := 0; i < turns; i++ {
		td := build(byte(i+1), take("t1", 2.0, nil), underrun(1, 1, 0.5, nil), turn(nil))
		start := time.Now()
		postTraces(t, col.OTLPURL, td)
		testenv.WaitFor(t, 10*time.Second, "the turn's count", func() bool {
			return total(scrapeCounter(t, col.PromURL, semconv.PromTurnsTotal)) == i+1
		})
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	// Nearest rank: the ⌈pct·n/100⌉-th smallest (of 20, p50 is the 10th
	// and p95 the 19th).
	rank := func(pct int) time.Duration { return lat[(pct*len(lat)+99)/100-1] }
	t.Logf("export → count on the Prometheus endpoint over %d turns: p50 %s, p95 %s (target ≤ 5 s), max %s",
		turns, rank(50).Round(time.Millisecond), rank(95).Round(time.Millisecond), lat[turns-1].Round(time.Millisecond))
}
