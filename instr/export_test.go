package instr

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeClock is a clock the test moves by hand, so every duration the SDK
// measures (and every span offset) is exact.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

const testInstallation = "7d3f0c1e-4a51-4c9b-9a55-5d8a1b2c3d4e"

// engineHandler is a minimal engine: /api/tts/stream?take=ID makes a take,
// continuing the caller's trace. "slow" takes produce audio slower than real
// time, so they need a cushion.
func engineHandler(sdk *SDK, clk *fakeClock) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := Extract(r.Context(), r.Header)
		id := r.URL.Query().Get("take")
		_, take := sdk.StartTake(ctx, id)
		step := func(d time.Duration, audio float64) {
			clk.Advance(d)
			take.Progress(audio)
		}
		clk.Advance(400 * time.Millisecond)
		take.FirstByte()
		if r.URL.Query().Get("slow") != "" {
			step(time.Second, 0.5)
			step(time.Second, 1.0)
			clk.Advance(2 * time.Second)
			take.End(3.0)
		} else {
			step(time.Second, 2.5)
			step(time.Second, 4.0)
			clk.Advance(500 * time.Millisecond)
			take.End(6.0)
		}
	})
}

// recordTurns records the scenario of the golden file: a quiet first turn,
// then a turn on LTE with Bluetooth earbuds whose second unit underran on a
// slow take, one route change and grown live counts.
func recordTurns(t *testing.T, phone *SDK, clk *fakeClock, engineURL string) {
	t.Helper()
	ctx := context.Background()
	live := phone.Live()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	live.Add(semconv.LivePlayers, 1)
	_, t1 := phone.StartTurn(ctx)
	t1.SetLink(semconv.LinkWifi, "")
	t1.SetPoolResets(0)
	clk.Advance(2 * time.Second)
	t1.End()

	live.Add(semconv.LivePlayers, 1)
	live.Add(semconv.LiveMicEngines, 1)
	live.Add(semconv.LiveByteStreams, 2)
	clk.Advance(10 * time.Second)
	tctx, turn := phone.StartTurn(ctx)
	turn.SetLink(semconv.LinkCell, "lte")
	turn.SetRoute(Route{Inputs: []string{semconv.PortBluetoothHFP}, Outputs: []string{semconv.PortBluetoothA2DP},
		SampleRate: 16000, Category: "play_and_record", Mode: "voice_chat"})
	turn.SetHealth(Health{DeviceUptime: 86400, AppUptime: 3600, Activations: 4, Memory: 180 << 20})
	turn.SetListen(Listen{Grant: 0.2, Session: 0.31, Total: 0.62})
	turn.SetRPM(0.18, 0.25)
	turn.SetSpeechEndToPost(0.8)
	turn.SetNotSent(0)
	turn.SetPoolResets(1)
	for i, take := range []string{"t1", "t2", "t3"} {
		u := engineURL + "/api/tts/stream?take=" + take
		if take == "t2" {
			u += "&slow=1"
		}
		req, _ := http.NewRequestWithContext(tctx, http.MethodGet, u, nil)
		Inject(tctx, req.Header)
		resp, err := http.DefaultClient.Do(req)
		must(err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("engine: %s", resp.Status)
		}
		start := clk.Now()
		end := clk.Advance(5 * time.Second)
		unit := Unit{Index: i + 1, TakeID: take, Gap: 0.12, Lead: 0.4, Cushion: 1.5, Player: "queue", Start: start, End: end}
		if take == "t2" {
			unit.Gap, unit.Lead, unit.Underruns, unit.Silent, unit.Longest, unit.Cushion = 0.56, -0.3, 2, 1.4, 0.9, 0.5
			turn.RouteChange(3.2, semconv.RouteReasonOldDevice, []string{semconv.PortBuiltinSpeaker})
		}
		turn.Unit(unit)
	}
	turn.MarkStutter()
	turn.End()
}

func TestTurnAndTakeArriveWhole(t *testing.T) {
	recv := newReceiver(t)
	clk := newFakeClock()
	dir := t.TempDir()
	var phoneLines, engineLines bytes.Buffer
	common := []Option{WithEndpoint(recv.URL()), WithClock(clk.Now), WithFlushInterval(20 * time.Millisecond),
		WithMetricInterval(time.Hour), failOnRefusal(t)}
	phone, err := Setup(context.Background(), append(common, WithServiceName(semconv.ServicePhone),
		WithInstallationID(testInstallation), WithSpoolDir(filepath.Join(dir, "phone")), WithTextLog(&phoneLines))...)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := Setup(context.Background(), append(common, WithServiceName(semconv.ServiceEngine),
		WithSpoolDir(filepath.Join(dir, "engine")), WithTextLog(&engineLines))...)
	if err != nil {
		t.Fatal(err)
	}
	eng := httptest.NewServer(engineHandler(engine, clk))
	defer eng.Close()

	recordTurns(t, phone, clk, eng.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, s := range []*SDK{engine, phone} {
		if err := s.ForceFlush(ctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
	}
	if len(recv.bad) > 0 {
		t.Fatalf("receiver refused requests: %v", recv.bad)
	}
	spans := recv.spans()
	got := normalise(t, spans)
	got.Lines = normaliseLines(phoneLines.String()+engineLines.String(), got.traceLabels)
	checkGolden(t, "testdata/turn_and_take.golden.json", got)

	// The engine's takes continue the phone's turn: one trace.
	turnTrace := ""
	for _, s := range spans {
		if s.span.Name == semconv.SpanVoiceTurn && len(s.span.Attributes) > 0 && attrMap(s.span.Attributes)[semconv.TurnIndex] == int64(2) {
			turnTrace = hex.EncodeToString(s.span.TraceId)
		}
	}
	for _, s := range spans {
		if s.span.Name == semconv.SpanTTSTake && hex.EncodeToString(s.span.TraceId) != turnTrace {
			t.Errorf("take %v in trace %x, want the turn's %s", attrMap(s.span.Attributes)[semconv.TakeID], s.span.TraceId, turnTrace)
		}
	}

	// Metrics come from the same recordings, with bounded attributes only.
	for _, s := range []*SDK{engine, phone} {
		if err := s.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	}
	ms := recv.metrics()
	for _, name := range []string{semconv.MetricUnderruns, semconv.MetricSilence, semconv.MetricUnitLead,
		semconv.MetricTakeFirstByte, semconv.MetricTakeNeed, semconv.MetricTakeRate, semconv.MetricLiveObjects,
		semconv.MetricRouteChanges, semconv.MetricListenOpen, semconv.MetricTurns, semconv.MetricExporterSent,
		semconv.MetricExporterQueued, semconv.MetricExporterDropped} {
		if len(ms[name]) == 0 {
			t.Errorf("metric %s not received", name)
		}
	}
	if on, off := intBy(ms[semconv.MetricTurns], semconv.RouteBluetooth, true), intBy(ms[semconv.MetricTurns], semconv.RouteBluetooth, false); on != 1 || off != 1 {
		t.Errorf("%s by %s: true %d, false %d; want 1 and 1 (one turn played on Bluetooth)", semconv.MetricTurns, semconv.RouteBluetooth, on, off)
	}
	if got := sumInt(ms[semconv.MetricUnderruns]); got != 2 {
		t.Errorf("%s = %d, want 2", semconv.MetricUnderruns, got)
	}
	if v := gaugeBy(ms[semconv.MetricLiveObjects], semconv.LiveKind, semconv.LivePlayers); v != 2 {
		t.Errorf("%s{players} = %d, want 2", semconv.MetricLiveObjects, v)
	}
	bounded := map[string]bool{semconv.NetworkConnectionType: true, semconv.LiveKind: true, semconv.RouteChangeReason: true,
		semconv.ListenStage: true, semconv.ExporterReason: true, semconv.SDKCall: true, semconv.RouteBluetooth: true}
	for name, list := range ms {
		for _, m := range list {
			for _, kvs := range pointAttrs(m) {
				for k := range kvs {
					if !bounded[k] {
						t.Errorf("metric %s carries attribute %s, not one of the bounded sets", name, k)
					}
				}
			}
		}
	}
}

type goldenSpan struct {
	Service    string         `json:"service"`
	Name       string         `json:"name"`
	Trace      string         `json:"trace"`
	Parent     string         `json:"parent"`
	Start      float64        `json:"start"`
	Duration   float64        `json:"duration"`
	Attributes map[string]any `json:"attributes"`
	Events     []goldenEvent  `json:"events,omitempty"`
}

type goldenEvent struct {
	Name       string         `json:"name"`
	Attributes map[string]any `json:"attributes"`
}

type golden struct {
	Resources   map[string]map[string]any `json:"resources"`
	Spans       []goldenSpan              `json:"spans"`
	Lines       []string                  `json:"lines"`
	traceLabels map[string]string
}

// normalise turns received spans into a stable form: trace IDs become T1,
// T2… in order of first start, parents are named, times are seconds from the
// trace's first span, and the launch UUID becomes <launch>.
func normalise(t *testing.T, spans []span) golden {
	t.Helper()
	// Order by start, then roots first, then service, name and the unit's or
	// take's identity: receipt order across two processes is not stable.
	key := func(s span) string {
		a := attrMap(s.span.Attributes)
		root := "1"
		if len(s.span.ParentSpanId) == 0 {
			root = "0"
		}
		return fmt.Sprintf("%020d|%s|%v|%s|%08v|%v", s.span.StartTimeUnixNano, root, s.res[semconv.ServiceName], s.span.Name,
			a[semconv.UnitIndex], a[semconv.TakeID])
	}
	sort.SliceStable(spans, func(i, j int) bool { return key(spans[i]) < key(spans[j]) })
	g := golden{Resources: map[string]map[string]any{}, traceLabels: map[string]string{}}
	names := map[string]string{}
	traceStart := map[string]uint64{}
	for _, s := range spans {
		names[hex.EncodeToString(s.span.SpanId)] = s.span.Name
		tid := hex.EncodeToString(s.span.TraceId)
		if _, ok := g.traceLabels[tid]; !ok {
			g.traceLabels[tid] = fmt.Sprintf("T%d", len(g.traceLabels)+1)
			traceStart[tid] = s.span.StartTimeUnixNano
		}
	}
	for _, s := range spans {
		res := map[string]any{}
		for k, v := range s.res {
			if k == semconv.ServiceInstanceID {
				if _, err := uuid.Parse(fmt.Sprint(v)); err != nil {
					t.Errorf("%s = %v, want a UUID", k, v)
				}
				v = "<launch>"
			}
			res[k] = v
		}
		svc := fmt.Sprint(s.res[semconv.ServiceName])
		g.Resources[svc] = res
		tid := hex.EncodeToString(s.span.TraceId)
		parent := ""
		if len(s.span.ParentSpanId) > 0 {
			parent = names[hex.EncodeToString(s.span.ParentSpanId)]
			if parent == "" {
				parent = "<unknown>"
			}
		}
		gs := goldenSpan{
			Service: svc, Name: s.span.Name, Trace: g.traceLabels[tid], Parent: parent,
			Start:      seconds(s.span.StartTimeUnixNano - traceStart[tid]),
			Duration:   seconds(s.span.EndTimeUnixNano - s.span.StartTimeUnixNano),
			Attributes: attrMap(s.span.Attributes),
		}
		for _, e := range s.span.Events {
			gs.Events = append(gs.Events, goldenEvent{Name: e.Name, Attributes: attrMap(e.Attributes)})
		}
		g.Spans = append(g.Spans, gs)
	}
	return g
}

func seconds(ns uint64) float64 { return math.Round(float64(ns)/1e6) / 1e3 }

var hexTrace = regexp.MustCompile(`trace=([0-9a-f]{32})`)

func normaliseLines(s string, labels map[string]string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, hexTrace.ReplaceAllStringFunc(l, func(m string) string {
			if lab, ok := labels[m[len("trace="):]]; ok {
				return "trace=" + lab
			}
			return "trace=<unknown>"
		}))
	}
	return out
}

func checkGolden(t *testing.T, path string, got golden) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, b) {
		t.Errorf("%s differs from what was received (run with -update after checking):\n%s", path, diffLines(string(want), string(b)))
	}
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var sb strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			fmt.Fprintf(&sb, "line %d:\n  want %s\n  got  %s\n", i+1, a, b)
			if sb.Len() > 4000 {
				break
			}
		}
	}
	return sb.String()
}

func pointAttrs(m *metricpb.Metric) []map[string]any {
	var out []map[string]any
	switch d := m.Data.(type) {
	case *metricpb.Metric_Sum:
		for _, p := range d.Sum.DataPoints {
			out = append(out, attrMap(p.Attributes))
		}
	case *metricpb.Metric_Gauge:
		for _, p := range d.Gauge.DataPoints {
			out = append(out, attrMap(p.Attributes))
		}
	case *metricpb.Metric_Histogram:
		for _, p := range d.Histogram.DataPoints {
			out = append(out, attrMap(p.Attributes))
		}
	}
	return out
}

// sumInt is the last collection's total of an int counter.
func sumInt(list []*metricpb.Metric) int64 {
	if len(list) == 0 {
		return -1
	}
	var n int64
	for _, p := range list[len(list)-1].GetSum().GetDataPoints() {
		n += p.GetAsInt()
	}
	return n
}

// intBy sums the last export's data points of a sum whose attribute key has value.
func intBy(list []*metricpb.Metric, key string, value any) int64 {
	if len(list) == 0 {
		return -1
	}
	var n int64
	for _, p := range list[len(list)-1].GetSum().GetDataPoints() {
		if attrMap(p.Attributes)[key] == value {
			n += p.GetAsInt()
		}
	}
	return n
}

func gaugeBy(list []*metricpb.Metric, key, value string) int64 {
	if len(list) == 0 {
		return -1
	}
	for _, p := range list[len(list)-1].GetGauge().GetDataPoints() {
		if fmt.Sprint(attrMap(p.Attributes)[key]) == value {
			return p.GetAsInt()
		}
	}
	return -1
}

// TestBusyVoiceLaneDefersExport: while the voice lane reports busy, finished
// turns wait in the spool; they go once it is quiet.
func TestBusyVoiceLaneDefersExport(t *testing.T) {
	recv := newReceiver(t)
	var busy atomic.Bool
	busy.Store(true)
	sdk, err := Setup(context.Background(), WithServiceName(semconv.ServicePhone), WithEndpoint(recv.URL()),
		WithSpoolDir(t.TempDir()), WithFlushInterval(10*time.Millisecond), WithMetricInterval(time.Hour), WithBusy(busy.Load))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	_, turn := sdk.StartTurn(context.Background())
	turn.End()
	testenv.WaitFor(t, 10*time.Second, "the turn spooled and held back", func() bool {
		st := sdk.ExportStats()
		return st.Spooled > 0 && st.Deferred > 0
	})
	if n := len(recv.spans()); n != 0 {
		t.Fatalf("%d spans sent while the voice lane was busy", n)
	}
	busy.Store(false)
	testenv.WaitFor(t, 10*time.Second, "the turn delivered once the lane is quiet", func() bool { return len(recv.spans()) == 1 })
}
