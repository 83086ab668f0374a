package linkstatus

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/percause/percause/instr/semconv"
)

func TestReconnecting(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		r    Readings
		show bool
		msg  string
		why  string
	}{
		{"one miss is never a verdict", Readings{Check: "progress check", Failures: 1, FailingFor: 30 * s, QuietFor: 30 * s}, false, "", "fewer than 2"},
		{"two misses, failing only 5 s", Readings{Failures: 2, FailingFor: 5 * s, QuietFor: 30 * s}, false, "", "under 6 s"},
		{"two misses, failing 6 s exactly, quiet 15 s exactly", Readings{Check: "progress check", Failures: 2, FailingFor: 6 * s, QuietFor: 15 * s}, true,
			"Reconnecting: the progress check has failed for 6 s (2 times in a row).", ""},
		{"her words still arriving (heard 2 s ago)", Readings{Failures: 5, FailingFor: 40 * s, QuietFor: 2 * s}, false, "", "heard from the engine 2 s ago"},
		{"quiet 14.9 s", Readings{Failures: 3, FailingFor: 16 * s, QuietFor: 14900 * time.Millisecond}, false, "", "under 15 s"},
		{"the engine gone: the reference row at 21 s", Readings{Check: "progress check", Failures: 3, FailingFor: 16 * s, QuietFor: 21 * s}, true,
			"Reconnecting: the progress check has failed for 16 s (3 times in a row).", ""},
		{"an unnamed check reads as the progress check", Readings{Failures: 2, FailingFor: 8500 * time.Millisecond, QuietFor: 20 * s}, true,
			"Reconnecting: the progress check has failed for 8 s (2 times in a row).", ""},
		{"no failure at all", Readings{QuietFor: time.Hour}, false, "", "0 failure(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Reconnecting(tt.r, DefaultThresholds())
			if v.Show != tt.show || v.Message != tt.msg {
				t.Errorf("got show=%v %q, want show=%v %q", v.Show, v.Message, tt.show, tt.msg)
			}
			if !strings.Contains(v.Why, tt.why) {
				t.Errorf("why %q does not say %q", v.Why, tt.why)
			}
		})
	}
}

func TestThresholdsValidate(t *testing.T) {
	err := Thresholds{Failures: 0, FailingFor: -1, Quiet: -1}.Validate()
	for _, want := range []string{"Failures must be at least 1", "FailingFor must not be negative", "Quiet must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want it to say %q", err, want)
		}
	}
	if err := DefaultThresholds().Validate(); err != nil {
		t.Error(err)
	}
}

func TestDiagnose(t *testing.T) {
	tests := []struct {
		name   string
		p      Probes
		status string
		msg    string
		advice bool
	}{
		{"probes still running", Probes{}, semconv.LinkStatusConnectionLost, "Connection lost. Checking why…", false},
		{"offline explains everything", Probes{Probed: true, DeviceOnline: false, FrontStatus: 503}, semconv.LinkStatusDeviceOffline, "This device is offline.", false},
		{"front answers 502", Probes{Probed: true, DeviceOnline: true, FrontStatus: 502}, semconv.LinkStatusEngineRestarting, "Pippa is restarting, back in a few seconds.", false},
		{"front answers 503", Probes{Probed: true, DeviceOnline: true, FrontStatus: 503, OtherAnswered: true}, semconv.LinkStatusEngineRestarting, "Pippa is restarting, back in a few seconds.", false},
		{"front answers 504", Probes{Probed: true, DeviceOnline: true, FrontStatus: 504}, semconv.LinkStatusEngineRestarting, "Pippa is restarting, back in a few seconds.", false},
		{"online, nothing answers", Probes{Probed: true, DeviceOnline: true, Lane: "control", InFlight: 6, Limit: 6}, semconv.LinkStatusUnreachable, "Pippa cannot be reached from this device.", true},
		{"engine answers on the bulk lane, control full", Probes{Probed: true, DeviceOnline: true, OtherAnswered: true, Lane: "control", InFlight: 6, Limit: 6}, semconv.LinkStatusLaneSaturated,
			"Pippa is answering; this device's control lane is busy (6 of 6 calls open). Waiting for it to clear.", false},
		{"fresh connection answers 200, shared lane over full", Probes{Probed: true, DeviceOnline: true, FrontStatus: 200, Lane: "shared", InFlight: 11, Limit: 6}, semconv.LinkStatusLaneSaturated,
			"Pippa is answering; this device's shared lane is busy (11 of 6 calls open). Waiting for it to clear.", false},
		{"engine answers and the lane has room: not lost", Probes{Probed: true, DeviceOnline: true, FrontStatus: 200, Lane: "control", InFlight: 2, Limit: 6}, semconv.LinkStatusOK, "", false},
		{"a fresh connection answers, the lane's own hangs: stale", Probes{Probed: true, DeviceOnline: true, FrontStatus: 200, Lane: "control", InFlight: 1, Limit: 6, PoolProbed: true},
			semconv.LinkStatusStaleConnection, "Pippa is answering on a fresh connection; this device's open connections to her stopped answering. Opening fresh ones…", false},
		{"a fresh connection and the lane's own both answer: not lost", Probes{Probed: true, DeviceOnline: true, FrontStatus: 200, Lane: "control", InFlight: 1, Limit: 6, PoolProbed: true, PoolStatus: 200},
			semconv.LinkStatusOK, "", false},
		{"heard elsewhere, no fresh answer, pool silent: not called stale", Probes{Probed: true, DeviceOnline: true, OtherAnswered: true, Lane: "control", InFlight: 1, Limit: 6, PoolProbed: true},
			semconv.LinkStatusOK, "", false},
		{"a full lane is saturation even with a silent pool", Probes{Probed: true, DeviceOnline: true, FrontStatus: 200, Lane: "control", InFlight: 6, Limit: 6, PoolProbed: true},
			semconv.LinkStatusLaneSaturated, "Pippa is answering; this device's control lane is busy (6 of 6 calls open). Waiting for it to clear.", false},
		{"a restarting front outranks a silent pool", Probes{Probed: true, DeviceOnline: true, FrontStatus: 503, Lane: "control", InFlight: 1, Limit: 6, PoolProbed: true},
			semconv.LinkStatusEngineRestarting, "Pippa is restarting, back in a few seconds.", false},
		{"front answers 500: the engine is there", Probes{Probed: true, DeviceOnline: true, FrontStatus: 500, Lane: "control", InFlight: 1, Limit: 6}, semconv.LinkStatusOK, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Diagnose(tt.p)
			if l.Status != tt.status || l.Message != tt.msg {
				t.Errorf("got %s %q, want %s %q", l.Status, l.Message, tt.status, tt.msg)
			}
			if (l.Advice != "") != tt.advice {
				t.Errorf("advice %q, want advice: %v", l.Advice, tt.advice)
			}
			if tt.advice && !strings.Contains(l.String(), "Tailscale") {
				t.Errorf("line %q lacks the tailnet advice", l.String())
			}
		})
	}
}

// Every lost-link warning but "cannot be reached" is free of tailnet advice.
func TestOnlyUnreachableCarriesAdvice(t *testing.T) {
	for _, w := range Warnables() {
		if (w.Advice != "") != (w == Unreachable) {
			t.Errorf("%s: advice %q", w.Code, w.Advice)
		}
		if w.Status == "" || w.Title == "" || w.Render(nil) == "" {
			t.Errorf("%s: incomplete registration", w.Code)
		}
	}
	if len(Warnables()) != 10 {
		t.Errorf("%d warnables registered, want 10", len(Warnables()))
	}
	statuses := map[string]bool{}
	for _, w := range Warnables() {
		statuses[w.Status] = true
	}
	for _, s := range semconv.LinkStatuses {
		if !statuses[s] && s != semconv.LinkStatusOK {
			t.Errorf("status %s has no warnable", s)
		}
	}
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time                { return c.t }
func (c *clock) add(d time.Duration) time.Time { c.t = c.t.Add(d); return c.t }

// TestTrackerReplaysTheModel feeds the tracker the engine-gone row of the
// queueing model (checks time out at 5, 13, 21 s; no words) and the
// one-pool row (one miss at 27.4 s while her words stream).
func TestTrackerReplaysTheModel(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

	c := &clock{t: t0}
	tr, err := NewTracker(WithClock(c.now))
	if err != nil {
		t.Fatal(err)
	}
	var shownAt []float64
	for _, s := range []float64{5, 13, 21, 29} {
		tr.Failed(at(s))
		if tr.Verdict(at(s)).Show {
			shownAt = append(shownAt, s)
		}
	}
	if len(shownAt) == 0 || shownAt[0] != 21 {
		t.Fatalf("engine gone: verdict shown at %v, want first at 21 s", shownAt)
	}

	// Her words stream until 40.4 s: one miss at 27.4, answered at 34.6.
	tr2, _ := NewTracker(WithClock(func() time.Time { return t0 }), WithHeardSource(func() time.Time { return at(27) }))
	tr2.Answered(at(19.4))
	tr2.Failed(at(27.4))
	if v := tr2.Verdict(at(27.4)); v.Show {
		t.Fatalf("one miss with words streaming: %q", v.Message)
	}
	tr2.Answered(at(34.6))
	if r := tr2.Readings(at(35)); r.Failures != 0 || r.FailingFor != 0 {
		t.Fatalf("after an answer: %+v", r)
	}
}

func TestTrackerTimeScale(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, err := NewTracker(WithClock(func() time.Time { return t0 }), WithTimeScale(20))
	if err != nil {
		t.Fatal(err)
	}
	// At scale 20, 0.25 s of wall time is 5 s of person-time.
	tr.Failed(t0.Add(250 * time.Millisecond))
	tr.Failed(t0.Add(650 * time.Millisecond))
	r := tr.Readings(t0.Add(1050 * time.Millisecond))
	if r.FailingFor != 16*time.Second || r.QuietFor != 21*time.Second {
		t.Fatalf("readings %+v, want failing 16 s, quiet 21 s", r)
	}
	if _, err := NewTracker(WithTimeScale(0)); err == nil {
		t.Fatal("scale 0 accepted")
	}
}

func TestMonitorRecordsEveryChange(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, err := NewMonitor(WithTracerProvider(tp), WithMeterProvider(mp), WithClock(c.now))
	if err != nil {
		t.Fatal(err)
	}
	ctx, turn := tp.Tracer("test").Start(context.Background(), semconv.SpanVoiceTurn)
	show := Verdict{Show: true, Readings: Readings{Check: "progress check", Failures: 3, FailingFor: 16 * time.Second, QuietFor: 21 * time.Second}}
	steps := []struct {
		name string
		v    Verdict
		p    *Probes
		want string
		msg  string
	}{
		{"all well", Verdict{}, nil, semconv.LinkStatusOK, ""},
		{"verdict holds", show, nil, semconv.LinkStatusReconnecting, "Reconnecting: the progress check has failed for 16 s (3 times in a row)."},
		{"probing", show, &Probes{}, semconv.LinkStatusConnectionLost, "Connection lost. Checking why…"},
		{"saturated hides Reconnecting", show, &Probes{Probed: true, DeviceOnline: true, OtherAnswered: true, Lane: "control", InFlight: 6, Limit: 6},
			semconv.LinkStatusLaneSaturated, "Pippa is answering; this device's control lane is busy (6 of 6 calls open). Waiting for it to clear."},
		{"offline not yet visible (2 s to visible): still checking why", show, &Probes{Probed: true}, semconv.LinkStatusConnectionLost, "Connection lost. Checking why…"},
		{"offline after 2 s", show, &Probes{Probed: true}, semconv.LinkStatusDeviceOffline, "This device is offline."},
		{"back online, engine restarting", show, &Probes{Probed: true, DeviceOnline: true, FrontStatus: 503}, semconv.LinkStatusEngineRestarting, "Pippa is restarting, back in a few seconds."},
		{"cannot be reached", show, &Probes{Probed: true, DeviceOnline: true}, semconv.LinkStatusUnreachable, "Pippa cannot be reached from this device."},
		{"healed", Verdict{}, nil, semconv.LinkStatusOK, ""},
	}
	for _, st := range steps {
		if st.name == "offline after 2 s" {
			c.add(2 * time.Second)
		}
		l := m.Update(ctx, st.v, st.p)
		if l.Status != st.want || l.Message != st.msg {
			t.Errorf("%s: got %s %q, want %s %q", st.name, l.Status, l.Message, st.want, st.msg)
		}
	}
	turn.End()

	var changes []string
	for _, s := range rec.Ended() {
		if s.Name() != semconv.SpanLinkStatus {
			continue
		}
		if s.Parent().SpanID() != turn.SpanContext().SpanID() {
			t.Errorf("status span not a child of the turn")
		}
		got := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			got[kv.Key] = kv.Value
		}
		changes = append(changes, got[semconv.LinkStatus].AsString())
		if got[semconv.LinkStatus].AsString() == semconv.LinkStatusLaneSaturated {
			if got[semconv.LinkLaneInFlight].AsInt64() != 6 || !got[semconv.LinkOtherAnswered].AsBool() {
				t.Errorf("saturated change lacks its probe readings: %v", got)
			}
		}
	}
	want := []string{"reconnecting", "connection_lost", "lane_saturated", "connection_lost", "device_offline", "engine_restarting", "unreachable", "ok"}
	if strings.Join(changes, ",") != strings.Join(want, ",") {
		t.Errorf("changes %v, want %v", changes, want)
	}
	events := 0
	for _, s := range rec.Ended() {
		if s.Name() == semconv.SpanVoiceTurn {
			for _, e := range s.Events() {
				if e.Name == semconv.EventLinkStatus {
					events++
				}
			}
		}
	}
	if events != len(want) {
		t.Errorf("%d status events on the turn, want %d", events, len(want))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name != semconv.MetricLinkStatus {
				continue
			}
			for _, dp := range mt.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := dp.Attributes.Value(semconv.LinkStatus)
				counts[v.AsString()] = dp.Value
			}
		}
	}
	if counts["ok"] != 1 || counts["connection_lost"] != 2 || counts["reconnecting"] != 1 || counts["lane_saturated"] != 1 || counts["unreachable"] != 1 {
		t.Errorf("%s by status: %v", semconv.MetricLinkStatus, counts)
	}
}
