package phone

import (
	"context"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/engine"
	"github.com/percause/percause/lab/faults"
)

// scale is slow enough for a busy test machine: a person-second is 250 ms.
const scale = 4

type rig struct {
	engine *engine.Engine
	proxy  *faults.Proxy
	phone  *Phone
	spans  *tracetest.InMemoryExporter
	sdk    *instr.SDK
}

// newRig is a phone talking to a lab engine through the fault proxy, its
// telemetry kept in memory (the collector round trip is package lab's test).
func newRig(t *testing.T, cfg engine.Config, hooks Hooks) *rig {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	sdk, err := instr.Setup(context.Background(), instr.WithServiceName(semconv.ServicePhone),
		instr.WithSpanExporter(spans), instr.WithMetricReader(sdkmetric.NewManualReader()), instr.WithTimeScale(scale),
		instr.WithErrorHandler(func(err error) { t.Errorf("the phone's reading was refused: %v", err) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	e, err := engine.New(engine.WithConfig(cfg), engine.WithTimeScale(scale))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	p, err := faults.Listen(e.Addr(), faults.WithTimeScale(scale))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	lc, err := lanes.New(lanes.WithTimeScale(scale), lanes.WithTracerProvider(sdk.TracerProvider()),
		lanes.WithMeterProvider(sdk.MeterProvider()), lanes.WithPropagator(instr.Propagator()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	pc := DefaultConfig(p.URL())
	pc.Scale = scale
	ph, err := New(pc, sdk, lc, hooks)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{engine: e, proxy: p, phone: ph, spans: spans, sdk: sdk}
}

func (r *rig) turn(t *testing.T, plan Plan) *Report {
	t.Helper()
	rep, err := r.phone.Turn(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.sdk.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestHealthyTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.DefaultConfig(), Hooks{})
	rep := r.turn(t, Plan{Upload: 64 << 10})
	if len(rep.Units) != 3 || rep.Underruns() != 0 || rep.ChecksFailed() != 0 || len(rep.Errors) != 0 {
		t.Fatalf("healthy turn: %d units, %d underruns, %d checks failed, errors %v",
			len(rep.Units), rep.Underruns(), rep.ChecksFailed(), rep.Errors)
	}
	for i, u := range rep.Units {
		if i > 0 && u.Lead <= 0 {
			t.Errorf("unit %d queued after the previous ended (lead %.2f)", u.Index, u.Lead)
		}
		if u.Result.Audio <= 0 || u.Take == "" {
			t.Errorf("unit %d: %+v", u.Index, u)
		}
	}
	names := map[string]int{}
	for _, s := range r.spans.GetSpans() {
		names[s.Name]++
		if s.Name == semconv.SpanVoiceTurn && s.SpanContext.TraceID().String() != rep.TraceID {
			t.Errorf("turn span in trace %s, report says %s", s.SpanContext.TraceID(), rep.TraceID)
		}
	}
	if names[semconv.SpanVoiceTurn] != 1 || names[semconv.SpanVoiceUnit] != 3 {
		t.Errorf("spans %v", names)
	}
	if live := rep.Live; live[semconv.LivePlayers] != 0 || live[semconv.LiveByteStreams] != 0 || live[semconv.LiveTakes] != 0 {
		t.Errorf("objects left live after a healthy turn: %v", live)
	}
}

// The player model hears a link slower than the audio: underruns.
func TestSlowLinkUnderruns(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.DefaultConfig(), Hooks{})
	if err := r.proxy.SetShape(faults.Shape{Bandwidth: 0.5 * engine.DefaultConfig().BytesPerSecond}); err != nil {
		t.Fatal(err)
	}
	rep := r.turn(t, Plan{})
	if rep.Underruns() == 0 {
		t.Errorf("no underrun at half the audio's byte rate: %+v", rep.Units)
	}
}

func TestLeakAndBluetooth(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.DefaultConfig(), Hooks{})
	for i := 1; i <= 2; i++ {
		rep := r.turn(t, Plan{Leak: semconv.LivePlayers, Bluetooth: i == 2})
		if got := rep.Live[semconv.LivePlayers]; got != i {
			t.Errorf("turn %d: %d players live, want %d", i, got, i)
		}
		if i == 2 && (rep.RouteChanges != 2 || !rep.Stutter || rep.Underruns() != 0) {
			t.Errorf("flap turn: %d route changes, stutter %v, %d underruns", rep.RouteChanges, rep.Stutter, rep.Underruns())
		}
	}
}

func TestOfflineStatusLine(t *testing.T) {
	t.Parallel()
	var r *rig
	r = newRig(t, longReply(), Hooks{TakesArrived: func(int) {
		r.phone.SetOnline(false)
		r.proxy.SetOffline(true)
		time.AfterFunc(time.Duration(10.0/scale*float64(time.Second)), func() {
			r.proxy.SetOffline(false)
			r.phone.SetOnline(true)
		})
	}})
	rep := r.turn(t, Plan{})
	if !slices.Contains(rep.Lines, semconv.LinkStatusDeviceOffline) {
		t.Errorf("status lines %v, want %s among them", rep.Lines, semconv.LinkStatusDeviceOffline)
	}
	if slices.Contains(rep.Lines, semconv.LinkStatusUnreachable) {
		t.Errorf("an offline device told the engine cannot be reached: %v", rep.Lines)
	}
}

func longReply() engine.Config {
	c := engine.DefaultConfig()
	c.Reply = append(c.Reply, c.Reply...)
	return c
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.BaseURL = "" },
		func(c *Config) { c.Scale = 0 },
		func(c *Config) { c.Speech = -1 },
		func(c *Config) { c.Player.Cushion = -1 },
	}
	for i, f := range bad {
		c := DefaultConfig("http://127.0.0.1:1")
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	if _, err := New(DefaultConfig("http://127.0.0.1:1"), nil, nil, Hooks{}); err == nil {
		t.Error("a phone without SDK and lanes")
	}
}
