package dashboards

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/semconv"
)

// The feeder drives the real SDK (instr) and the real client networking
// (instr/lanes) into a running collector, for what the lab's scenarios do
// not produce: a relaunch after a reboot, a take that never arrives, and a
// Reconnecting verdict.

// Export intervals short enough that a verdict reaches Prometheus in seconds.
const (
	feedFlush  = 100 * time.Millisecond
	feedMetric = 300 * time.Millisecond
)

type feeder struct {
	otlp   string
	dir    string
	engine *instr.SDK
	clock  *manualClock
}

// manualClock is the engine's clock: a take's first byte, progress and end
// are placed exactly, so its need and rate are known.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func (c *manualClock) advance(seconds float64) {
	c.mu.Lock()
	c.t = c.t.Add(time.Duration(seconds * float64(time.Second)))
	c.mu.Unlock()
}

func newFeeder(t *testing.T, otlp string) *feeder {
	t.Helper()
	f := &feeder{otlp: otlp, dir: t.TempDir(), clock: &manualClock{t: time.Now()}}
	engine, err := instr.Setup(context.Background(),
		instr.WithServiceName(semconv.ServiceEngine),
		instr.WithEndpoint(otlp),
		instr.WithSpoolDir(filepath.Join(f.dir, "engine")),
		instr.WithFlushInterval(feedFlush),
		instr.WithMetricInterval(feedMetric),
		instr.WithClock(f.clock.Now),
		instr.WithErrorHandler(func(err error) { t.Errorf("the feed's take was refused: %v", err) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	f.engine = engine
	t.Cleanup(func() { _ = engine.Shutdown(context.Background()) })
	return f
}

// launch starts one launch of the phone app on an installation.
func (f *feeder) launch(t *testing.T, installation string) *instr.SDK {
	t.Helper()
	sdk, err := instr.Setup(context.Background(),
		instr.WithServiceName(semconv.ServicePhone),
		instr.WithInstallationID(installation),
		instr.WithEndpoint(f.otlp),
		instr.WithSpoolDir(filepath.Join(f.dir, installation+"-"+time.Now().Format("150405.000000000"))),
		instr.WithFlushInterval(feedFlush),
		instr.WithMetricInterval(feedMetric),
		instr.WithErrorHandler(func(err error) { t.Errorf("the feed's reading was refused: %v", err) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	return sdk
}

// take makes take id on the engine inside the turn's trace. need > 0 holds
// production need seconds behind playback once; need == 0 keeps it exactly
// at real time. Either way the take is made slightly slower than real time
// (rate < 1), since a first byte precedes the audio.
func (f *feeder) take(t *testing.T, turnCtx context.Context, id string, need, audio float64) {
	t.Helper()
	f.clock.set(time.Now())
	_, tk := f.engine.StartTake(turnCtx, id)
	f.clock.advance(0.2)
	tk.FirstByte()
	if need > 0 {
		f.clock.advance(need + 0.5)
		tk.Progress(0.5)
		f.clock.advance(audio - 0.5)
	} else {
		f.clock.advance(audio)
	}
	tk.End(audio)
}

// unit is one unit of a turn and the take it played.
type unit struct {
	underruns int
	silent    float64
	cushion   float64
	need      float64
	lead      float64
	noTake    bool // the engine never reports the take (a forced verdict: unknown)
}

// turn is one voice turn's readings.
type turn struct {
	link         string
	outputs      []string
	stutter      bool
	routeChange  bool
	units        []unit
	poolResets   int
	deviceUptime float64
	appUptime    float64
	listenTotal  float64
}

func (f *feeder) turn(t *testing.T, phone *instr.SDK, spec turn) {
	t.Helper()
	ctx, tr := phone.StartTurn(context.Background())
	if spec.link == "" {
		spec.link = semconv.LinkWifi
	}
	if spec.outputs == nil {
		spec.outputs = []string{semconv.PortBuiltinSpeaker}
	}
	if spec.deviceUptime == 0 {
		spec.deviceUptime = 86400
	}
	if spec.appUptime == 0 {
		spec.appUptime = 600
	}
	if spec.listenTotal == 0 {
		spec.listenTotal = 0.6
	}
	tr.SetLink(spec.link, "")
	tr.SetRoute(instr.Route{Inputs: []string{semconv.PortBuiltinMic}, Outputs: spec.outputs, SampleRate: 16000, Category: "playAndRecord", Mode: "voiceChat"})
	tr.SetHealth(instr.Health{DeviceUptime: spec.deviceUptime, AppUptime: spec.appUptime, Activations: 3, Memory: 180 << 20})
	tr.SetListen(instr.Listen{Grant: spec.listenTotal / 2, Session: spec.listenTotal / 3, Total: spec.listenTotal})
	tr.SetSpeechEndToPost(0.8)
	tr.SetNotSent(0)
	tr.SetPoolResets(spec.poolResets)
	if spec.stutter {
		tr.MarkStutter()
	}
	if spec.routeChange {
		tr.RouteChange(3.0, semconv.RouteReasonOldDevice, []string{semconv.PortBuiltinSpeaker})
	}
	for i, u := range spec.units {
		id := tr.TraceID()[:8] + "-" + string(rune('a'+i))
		if !u.noTake {
			f.take(t, ctx, id, u.need, 4)
		}
		cushion := u.cushion
		if cushion == 0 {
			cushion = 1.5
		}
		longest := u.silent
		tr.Unit(instr.Unit{Index: i + 1, TakeID: id, Gap: 0.3, Lead: u.lead, Underruns: u.underruns,
			Silent: u.silent, Longest: longest, Cushion: cushion, Player: "queue"})
	}
	tr.End()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// recordLinkStatus counts a change of the status line, as instr/linkstatus
// records it: pippa.link.status_changes{pippa.link.status}.
func recordLinkStatus(t *testing.T, phone *instr.SDK, status string) {
	t.Helper()
	c, err := phone.MeterProvider().Meter("github.com/percause/percause/instr/linkstatus").Int64Counter(
		semconv.MetricLinkStatus, metric.WithUnit(semconv.UnitChanges))
	must(t, err)
	c.Add(context.Background(), 1, metric.WithAttributes(attribute.String(semconv.LinkStatus, status)))
}
