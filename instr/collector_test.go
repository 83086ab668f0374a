package instr

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestRealCollectorDecidesTheTurns exports a phone and an engine through the
// real `percause collector` (embedded default config) and reads back what the
// collector made of them: a verdict per turn in its verdict file, and the SDK's
// metrics with the verdict counters on its Prometheus endpoint.
func TestRealCollectorDecidesTheTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the percause collector")
	}
	col := testenv.StartCollector(t, testenv.WithCollectorEnv(testenv.EnvVerdictWait, "500ms"), testenv.WithCollectorEnv(testenv.EnvDecisionWait, "200ms"))
	dir := t.TempDir()
	const scale = 20 // a lab run: 50 ms of wall time reads as a person-second
	opts := []Option{WithEndpoint(col.OTLPURL), WithFlushInterval(50 * time.Millisecond), WithTimeScale(scale), failOnRefusal(t)}
	phone, err := Setup(context.Background(), append(opts, WithServiceName(semconv.ServicePhone),
		WithInstallationID(testInstallation), WithSpoolDir(filepath.Join(dir, "phone")))...)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := Setup(context.Background(), append(opts, WithServiceName(semconv.ServiceEngine),
		WithSpoolDir(filepath.Join(dir, "engine")))...)
	if err != nil {
		t.Fatal(err)
	}

	// Turn 1: the take was made slower than real time (need well above the
	// unit's 0.5 s cushion): synthesis. Turn 2: the take was ready at once
	// (need 0) and the unit still underran: network.
	want := map[string]string{}
	for _, tc := range []struct {
		slow  bool
		cause string
	}{{true, semconv.CauseSynthesis}, {false, semconv.CauseNetwork}} {
		ctx, turn := phone.StartTurn(context.Background())
		turn.SetLink(semconv.LinkWifi, "")
		turn.SetPoolResets(0)
		_, take := engine.StartTake(Extract(context.Background(), headerOf(ctx)), "t1")
		take.FirstByte()
		if tc.slow {
			time.Sleep(100 * time.Millisecond) // 2 person-seconds with 0.5 s of audio made
			take.Progress(0.5)
		}
		take.End(6)
		turn.Unit(Unit{Index: 1, TakeID: "t1", Underruns: 2, Silent: 1.4, Longest: 0.9, Cushion: 0.5})
		turn.End()
		want[turn.TraceID()] = tc.cause
	}
	// The history each turn carries is what the cross-turn rules read: a
	// live count that rose on each of the last 3 turns (state), a pool-reset
	// tally that moved since the previous turn (pool).
	for _, tc := range []struct {
		players, resets int
		cause           string
	}{
		{1, 0, semconv.CauseNone},  // players 0,0 → 1
		{2, 0, semconv.CauseNone},  // 0,0,1 → 2
		{3, 0, semconv.CauseState}, // 0,1,2 → 3: rose on each of the last 3 turns
		{3, 1, semconv.CausePool},  // the tally moved from 0 to 1
		{3, 1, semconv.CauseNone},  // 1 → 1: a tally that stays is not movement
	} {
		phone.Live().Add(semconv.LivePlayers, tc.players-phone.Live().Get(semconv.LivePlayers))
		_, turn := phone.StartTurn(context.Background())
		turn.SetLink(semconv.LinkWifi, "")
		turn.SetPoolResets(tc.resets)
		turn.End()
		want[turn.TraceID()] = tc.cause
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, s := range []*SDK{engine, phone} {
		if err := s.ForceFlush(ctx); err != nil {
			t.Fatalf("flush to the collector: %v", err)
		}
	}

	got := map[string]string{}
	testenv.WaitFor(t, 90*time.Second, "a verdict for every turn", func() bool {
		for id, cause := range readVerdicts(t, col.VerdictFile) {
			got[id] = cause
		}
		for id := range want {
			if got[id] == "" {
				return false
			}
		}
		return true
	})
	for id, cause := range want {
		if got[id] != cause {
			t.Errorf("turn %s: verdict %q, want %q", id, got[id], cause)
		}
	}

	// The phone's metrics and the verdict counters on the Prometheus endpoint.
	// The counts reach the endpoint a moment after the verdict file: wait
	// for every line (under load one cause once came a scrape late).
	var page string
	wantLines := []string{semconv.PromTurnsTotal, "pippa_voice_underruns_total", `percause_cause="synthesis"`, `percause_cause="network"`,
		`app_installation_id="` + testInstallation + `"`, "pippa_live_objects", "pippa_tts_take_need_seconds_bucket"}
	hasAll := func() bool {
		for _, l := range wantLines {
			if !strings.Contains(page, l) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(90 * time.Second)
	for page = scrape(col.PromURL); !hasAll() && time.Now().Before(deadline); page = scrape(col.PromURL) {
		time.Sleep(100 * time.Millisecond)
	}
	for _, wantLine := range wantLines {
		if !strings.Contains(page, wantLine) {
			t.Errorf("Prometheus endpoint lacks %s", wantLine)
		}
	}
	// docs/semconv.md's Prometheus column is what the collector really serves.
	recorded := map[string]bool{semconv.MetricUnderruns: true, semconv.MetricSilence: true, semconv.MetricUnitLead: true,
		semconv.MetricCushion: true, semconv.MetricTurns: true, semconv.MetricNotSent: true, semconv.MetricTakeFirstByte: true,
		semconv.MetricTakeNeed: true, semconv.MetricTakeRate: true, semconv.MetricTakeBeside: true, semconv.MetricLiveObjects: true,
		semconv.MetricExporterQueued: true, semconv.MetricExporterQueuedBytes: true, semconv.MetricExporterSent: true}
	for _, n := range semconv.Registry {
		if n.Kind != semconv.KindMetric || !recorded[n.Name] {
			continue
		}
		name := semconv.PromName(n)
		if n.Type == "histogram" {
			name += "_bucket"
		}
		if !strings.Contains(page, "\n"+name+"{") {
			t.Errorf("%s: documented as %s, not on the Prometheus endpoint", n.Name, name)
		}
	}
	if t.Failed() {
		for _, l := range strings.Split(page, "\n") {
			if strings.HasPrefix(l, "# TYPE") {
				t.Log(l)
			}
		}
	}
	for _, s := range []*SDK{engine, phone} {
		_ = s.Shutdown(ctx)
	}
}

func headerOf(ctx context.Context) http.Header {
	h := http.Header{}
	Inject(ctx, h)
	return h
}

// readVerdicts returns trace ID -> percause.cause from the collector's
// verdict file (OTLP JSON, one request per line).
func readVerdicts(t *testing.T, path string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			continue // a line still being written
		}
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					s := spans.At(k)
					if s.Name() != semconv.SpanVerdict {
						continue
					}
					if v, ok := s.Attributes().Get(semconv.VerdictCause); ok {
						out[s.TraceID().String()] = v.Str()
					}
				}
			}
		}
	}
	return out
}

func scrape(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
