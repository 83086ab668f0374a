package instr

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// memSDK is an SDK whose spans land in memory, with a clock the test drives.
// Every refusal fails the test unless opts hand refusals elsewhere
// (WithErrorHandler, e.g. a refusals' handle).
func memSDK(t testing.TB, opts ...Option) (*SDK, *tracetest.InMemoryExporter, *fakeClock) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	clk := newFakeClock()
	sdk, err := Setup(context.Background(), append([]Option{WithServiceName(semconv.ServicePhone),
		WithSpanExporter(exp), WithMetricReader(sdkmetric.NewManualReader()), WithClock(clk.Now), failOnRefusal(t)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	return sdk, exp, clk
}

// failOnRefusal fails the test on any refused recording.
func failOnRefusal(t testing.TB) Option {
	return WithErrorHandler(func(err error) { t.Errorf("recording refused: %v", err) })
}

// refusals keeps what the SDK refused, in order.
type refusals struct {
	mu   sync.Mutex
	errs []error
}

func (r *refusals) handle(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// during returns what f's calls had refused.
func (r *refusals) during(f func()) []error {
	r.mu.Lock()
	n := len(r.errs)
	r.mu.Unlock()
	f()
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs[n:]...)
}

// one returns the single refusal of f's calls (nil, and a test error, when
// there was not exactly one).
func (r *refusals) one(t *testing.T, f func()) error {
	t.Helper()
	errs := r.during(f)
	if len(errs) != 1 {
		t.Errorf("%d refusals %v, want 1", len(errs), errs)
		return nil
	}
	return errs[0]
}

func ended(t *testing.T, sdk *SDK, exp *tracetest.InMemoryExporter, name string) []map[string]attribute.Value {
	t.Helper()
	if err := sdk.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out []map[string]attribute.Value
	for _, s := range exp.GetSpans() {
		if s.Name != name {
			continue
		}
		m := map[string]attribute.Value{}
		for _, kv := range s.Attributes {
			m[string(kv.Key)] = kv.Value
		}
		out = append(out, m)
	}
	return out
}

// TestBadInputGetsClearErrors: every bad reading is refused with an error
// that names the call, the field and why, handed to the error handler;
// nothing panics and the call returns as if nothing happened.
func TestBadInputGetsClearErrors(t *testing.T) {
	var r refusals
	sdk, _, clk := memSDK(t, WithErrorHandler(r.handle))
	_, turn := sdk.StartTurn(context.Background())
	before := clk.Now().Add(-time.Second)
	nan := math.NaN()
	for name, tc := range map[string]struct {
		call func()
		want string
	}{
		"negative gap":         {func() { turn.Unit(Unit{Gap: -1}) }, "Turn.Unit: Gap = -1: negative duration"},
		"NaN silent":           {func() { turn.Unit(Unit{Silent: nan}) }, "Silent = NaN: not a number"},
		"infinite lead":        {func() { turn.Unit(Unit{Lead: math.Inf(-1)}) }, "Lead = -Inf: infinite"},
		"negative underruns":   {func() { turn.Unit(Unit{Underruns: -2}) }, "Underruns = -2: negative count"},
		"longest over silent":  {func() { turn.Unit(Unit{Silent: 1, Longest: 2}) }, "longer than the unit's silent seconds"},
		"unit before the turn": {func() { turn.Unit(Unit{Start: before, End: clk.Now()}) }, "before the turn started"},
		"end before start":     {func() { turn.Unit(Unit{Start: clk.Now().Add(time.Second), End: clk.Now()}) }, "before the unit's start"},
		"negative index":       {func() { turn.Unit(Unit{Index: -1}) }, "negative index"},
		"NaN route change":     {func() { turn.RouteChange(nan, "override", nil) }, "RouteChange: at = NaN"},
		"negative listen":      {func() { turn.SetListen(Listen{Grant: -0.1}) }, "Grant = -0.1: negative duration"},
		"NaN rpm":              {func() { turn.SetRPM(nan, 0) }, "loaded = NaN"},
		"negative post":        {func() { turn.SetSpeechEndToPost(-3) }, "negative duration"},
		"negative not sent":    {func() { turn.SetNotSent(-1) }, "negative duration"},
		"negative resets":      {func() { turn.SetPoolResets(-1) }, "negative count"},
		"negative memory":      {func() { turn.SetHealth(Health{Memory: -5}) }, "negative byte count"},
		"NaN uptime":           {func() { turn.SetHealth(Health{DeviceUptime: nan}) }, "DeviceUptime = NaN"},
		"NaN sample rate":      {func() { turn.SetRoute(Route{SampleRate: nan}) }, "SampleRate = NaN"},
		"empty link":           {func() { turn.SetLink("", "lte") }, "empty"},
		"unknown live kind":    {func() { sdk.Live().Add("sockets", 1) }, "not one of semconv.LiveKinds"},
	} {
		t.Run(name, func(t *testing.T) {
			err := r.one(t, tc.call)
			if err == nil {
				t.Fatalf("nothing refused, want %q", tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
	if errs := r.during(turn.End); len(errs) != 0 {
		t.Fatalf("End refused: %v", errs)
	}
	if err := r.one(t, turn.End); !errors.Is(err, ErrEnded) {
		t.Errorf("second End: %v, want ErrEnded", err)
	}
	if err := r.one(t, func() { turn.Unit(Unit{}) }); !errors.Is(err, ErrEnded) {
		t.Errorf("Unit after End: %v, want ErrEnded", err)
	}

	_, take := sdk.StartTake(context.Background(), "t1")
	if err := r.one(t, func() { take.Progress(-1) }); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative progress: %v", err)
	}
	if errs := r.during(func() { take.Progress(2) }); len(errs) != 0 {
		t.Fatal(errs)
	}
	if err := r.one(t, func() { take.Progress(1) }); err == nil || !strings.Contains(err.Error(), "cumulative") {
		t.Errorf("progress going backwards: %v", err)
	}
	if err := r.one(t, take.FirstByte); err == nil || !strings.Contains(err.Error(), "already marked") {
		t.Errorf("first byte after audio: %v", err)
	}
	if err := r.one(t, func() { take.End(nan) }); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN audio at End: %v", err)
	}
	if err := r.one(t, func() { take.End(3) }); !errors.Is(err, ErrEnded) {
		t.Errorf("take ended twice: %v, want ErrEnded", err)
	}
	errs := r.during(func() {
		_, empty := sdk.StartTake(context.Background(), "")
		empty.End(1)
	})
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "empty take id") || !strings.Contains(errs[1].Error(), "empty take id") {
		t.Errorf("empty take id: %v, want StartTake and End refused for it", errs)
	}
}

// TestRefusalsAreLoggedByDefault: without an error handler a refusal goes
// to the SDK's logger, naming the call.
func TestRefusalsAreLoggedByDefault(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	sdk, err := Setup(context.Background(), WithServiceName(semconv.ServicePhone), WithLogger(logger),
		WithSpanExporter(tracetest.NewInMemoryExporter()), WithMetricReader(sdkmetric.NewManualReader()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	_, turn := sdk.StartTurn(context.Background())
	turn.SetNotSent(-1)
	mu.Lock()
	got := buf.String()
	mu.Unlock()
	if !strings.Contains(got, "recording refused") || !strings.Contains(got, "Turn.SetNotSent: seconds = -1: negative duration") {
		t.Errorf("log %q does not name the refusal", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestHistoryTravelsWithTheTurn(t *testing.T) {
	resets := 0
	sdk, exp, _ := memSDK(t, WithPoolResets(func() int { return resets }))
	live := sdk.Live()
	for i := range 5 {
		live.Add(semconv.LivePlayers, 1) // grows every turn
		if i == 3 {
			resets++
		}
		_, turn := sdk.StartTurn(context.Background())
		turn.End()
	}
	turns := ended(t, sdk, exp, semconv.SpanVoiceTurn)
	if len(turns) != 5 {
		t.Fatalf("%d turns", len(turns))
	}
	players, before := semconv.LiveAttr(semconv.LivePlayers), semconv.LiveBeforeAttr(semconv.LivePlayers)
	for i, want := range []struct {
		index, now int64
		before     []int64
		resets     int64
		prior      int64 // -1: absent
	}{
		{1, 1, nil, 0, -1},
		{2, 2, []int64{1}, 0, 0},
		{3, 3, []int64{1, 2}, 0, 0},
		{4, 4, []int64{1, 2, 3}, 1, 0},
		{5, 5, []int64{2, 3, 4}, 1, 1},
	} {
		a := turns[i]
		if a[semconv.TurnIndex].AsInt64() != want.index || a[players].AsInt64() != want.now {
			t.Errorf("turn %d: index %v players %v", i+1, a[semconv.TurnIndex].String(), a[players].String())
		}
		if got := a[before].AsInt64Slice(); !equalInts(got, want.before) {
			t.Errorf("turn %d: %s = %v, want %v", i+1, before, got, want.before)
		}
		if a[semconv.PoolResets].AsInt64() != want.resets {
			t.Errorf("turn %d: resets %v", i+1, a[semconv.PoolResets].String())
		}
		prior, ok := a[semconv.PoolResetsBefore]
		if want.prior < 0 && ok || want.prior >= 0 && (!ok || prior.AsInt64() != want.prior) {
			t.Errorf("turn %d: %s = %v (present %v), want %d", i+1, semconv.PoolResetsBefore, prior.String(), ok, want.prior)
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTakeNeedAndBeside(t *testing.T) {
	type mark struct {
		after time.Duration
		audio float64
	}
	for name, tc := range map[string]struct {
		scale     float64
		firstByte time.Duration
		marks     []mark
		end       mark
		want      map[string]float64
	}{
		"faster than real time needs nothing": {1, 300 * time.Millisecond,
			[]mark{{time.Second, 2}, {time.Second, 4}}, mark{time.Second, 6},
			map[string]float64{"first_byte": 0.3, "total": 3.3, "need": 0, "rate": 6 / 3.3}},
		"slow start needs its lag": {1, 500 * time.Millisecond,
			[]mark{{2 * time.Second, 0.5}, {time.Second, 3}}, mark{time.Second, 5},
			map[string]float64{"first_byte": 0.5, "total": 4.5, "need": 1.5, "rate": 5 / 4.5}},
		"lag at the end counts": {1, 100 * time.Millisecond,
			nil, mark{4 * time.Second, 3},
			map[string]float64{"first_byte": 0.1, "total": 4.1, "need": 1, "rate": 3 / 4.1}},
		"scale reports person-seconds": {20, 50 * time.Millisecond,
			[]mark{{100 * time.Millisecond, 1}}, mark{100 * time.Millisecond, 6},
			map[string]float64{"first_byte": 1, "total": 5, "need": 1, "rate": 6 / 5.0}},
	} {
		t.Run(name, func(t *testing.T) {
			sdk, exp, clk := memSDK(t, WithServiceName(semconv.ServiceEngine), WithTimeScale(tc.scale))
			_, take := sdk.StartTake(context.Background(), "t")
			clk.Advance(tc.firstByte)
			take.FirstByte()
			for _, m := range tc.marks {
				clk.Advance(m.after)
				take.Progress(m.audio)
			}
			clk.Advance(tc.end.after)
			take.End(tc.end.audio)
			a := ended(t, sdk, exp, semconv.SpanTTSTake)[0]
			for k, want := range tc.want {
				if got := a["pippa.take."+k].AsFloat64(); math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
		})
	}

	t.Run("beside is the most other takes at once", func(t *testing.T) {
		sdk, exp, _ := memSDK(t, WithServiceName(semconv.ServiceEngine))
		ctx := context.Background()
		_, a := sdk.StartTake(ctx, "a")
		_, b := sdk.StartTake(ctx, "b")
		_, c := sdk.StartTake(ctx, "c") // a, b, c at once
		b.End(1)
		c.End(1)
		_, d := sdk.StartTake(ctx, "d") // a, d
		a.End(1)
		d.End(1)
		_, e := sdk.StartTake(ctx, "e") // alone
		e.End(1)
		got := map[string]int64{}
		for _, s := range ended(t, sdk, exp, semconv.SpanTTSTake) {
			got[s[semconv.TakeID].AsString()] = s[semconv.TakeBeside].AsInt64()
		}
		want := map[string]int64{"a": 2, "b": 2, "c": 2, "d": 1, "e": 0}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("beside of %s = %d, want %d", k, got[k], v)
			}
		}
	})
}

func TestConcurrentRecordingIsSafe(t *testing.T) {
	sdk, exp, _ := memSDK(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				sdk.Live().Add(semconv.LiveTakes, 1)
				_, turn := sdk.StartTurn(context.Background())
				_, take := sdk.StartTake(turn.Context(), "t")
				turn.Unit(Unit{TakeID: "t"})
				take.End(1)
				turn.End()
				sdk.Live().Add(semconv.LiveTakes, -1)
			}
		}()
	}
	wg.Wait()
	if n := len(ended(t, sdk, exp, semconv.SpanVoiceTurn)); n != 160 {
		t.Errorf("%d turns, want 160", n)
	}
	if v := sdk.Live().Get(semconv.LiveTakes); v != 0 {
		t.Errorf("live takes %d after every take ended", v)
	}
}

func TestSetupValidates(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []Option
		want string
	}{
		"no service":    {nil, "no service name"},
		"bad endpoint":  {[]Option{WithServiceName("x"), WithEndpoint("127.0.0.1:4318")}, "want an http(s) base URL"},
		"zero scale":    {[]Option{WithServiceName("x"), WithTimeScale(0)}, "time scale 0"},
		"NaN scale":     {[]Option{WithServiceName("x"), WithTimeScale(math.NaN())}, "time scale NaN"},
		"no spool room": {[]Option{WithServiceName("x"), WithSpoolLimit(0)}, "spool limit 0"},
		"no interval":   {[]Option{WithServiceName("x"), WithFlushInterval(0)}, "flush interval"},
	} {
		t.Run(name, func(t *testing.T) {
			sdk, err := Setup(context.Background(), tc.opts...)
			if err == nil {
				_ = sdk.Shutdown(context.Background())
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
}

// FuzzTurnUnit feeds arbitrary readings to the public recording calls: they
// either record or return an error, never panic, and never leave a NaN or a
// negative duration on a span.
func FuzzTurnUnit(f *testing.F) {
	f.Add(1, 0.1, -0.3, 2, 1.4, 0.9, 1.5, int64(0), int64(5e9), 3.2, 2.0)
	f.Add(-1, math.NaN(), math.Inf(1), -3, -1.0, 5.0, -0.5, int64(-5e9), int64(0), -1.0, math.NaN())
	f.Fuzz(func(t *testing.T, index int, gap, lead float64, underruns int, silent, longest, cushion float64,
		startOff, endOff int64, at, audio float64) {
		var r refusals // bad input is the point: refused, never a panic
		sdk, exp, clk := memSDK(t, WithErrorHandler(r.handle))
		ctx, turn := sdk.StartTurn(context.Background())
		base := clk.Now()
		u := Unit{Index: index, Gap: gap, Lead: lead, Underruns: underruns, Silent: silent, Longest: longest,
			Cushion: cushion, Start: base.Add(time.Duration(startOff)), End: base.Add(time.Duration(endOff))}
		turn.Unit(u)
		turn.RouteChange(at, "override", nil)
		_, take := sdk.StartTake(ctx, "t")
		take.Progress(audio)
		take.End(audio)
		take.End(audio)
		turn.End()
		turn.End()
		for _, s := range ended(t, sdk, exp, semconv.SpanVoiceUnit) {
			for _, k := range []string{semconv.UnitGap, semconv.UnitSilent, semconv.UnitLongest, semconv.UnitCushion} {
				if v := s[k].AsFloat64(); math.IsNaN(v) || v < 0 {
					t.Fatalf("%s = %v recorded", k, v)
				}
			}
		}
		for _, s := range ended(t, sdk, exp, semconv.SpanTTSTake) {
			for _, k := range []string{semconv.TakeNeed, semconv.TakeAudio, semconv.TakeRate, semconv.TakeTotal} {
				if v := s[k].AsFloat64(); math.IsNaN(v) || v < 0 || math.IsInf(v, 0) {
					t.Fatalf("%s = %v recorded", k, v)
				}
			}
		}
	})
}

func TestRefusalsAreCounted(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	var r refusals
	sdk, _, _ := memSDK(t, WithMetricReader(reader), WithErrorHandler(r.handle))
	_, turn := sdk.StartTurn(context.Background())
	turn.Unit(Unit{Gap: -1})
	turn.Unit(Unit{Silent: math.NaN()})
	sdk.Live().Add("sockets", 1)
	turn.End()
	turn.End()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != semconv.MetricSDKRejected {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := p.Attributes.Value(semconv.SDKCall)
				got[v.AsString()] = p.Value
			}
		}
	}
	want := map[string]int64{"Turn.Unit": 2, "Live.Add": 1, "Turn.End": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s{%s=%s} = %d, want %d (all: %v)", semconv.MetricSDKRejected, semconv.SDKCall, k, got[k], v, got)
		}
	}
}

func TestSpanProcessorSeesEverySpanBesideTheExport(t *testing.T) {
	copyOf := tracetest.NewInMemoryExporter()
	sdk, exp, _ := memSDK(t, WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(copyOf)))
	_, turn := sdk.StartTurn(context.Background())
	turn.Unit(Unit{TakeID: "t1"})
	turn.End()
	if err := sdk.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a, b := len(exp.GetSpans()), len(copyOf.GetSpans()); a != 2 || b != 2 {
		t.Errorf("export got %d spans, the extra processor %d; want 2 and 2", a, b)
	}
}
