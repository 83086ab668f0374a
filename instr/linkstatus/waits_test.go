package linkstatus

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/percause/percause/instr/semconv"
)

func TestWaitTexts(t *testing.T) {
	for _, tt := range []struct {
		w    *Warnable
		args Args
		want string
	}{
		{MicOpening, Args{ArgStage: semconv.StageSession}, "Opening the microphone… waiting for the audio session."},
		{MicOpening, Args{ArgStage: semconv.StageGrant, ArgFor: "3 s"}, "Opening the microphone… waiting for Pippa's listening grant (3 s)."},
		{MicOpening, Args{ArgStage: semconv.StageSocket}, "Opening the microphone… waiting for the listening socket."},
		{MicOpening, nil, "Opening the microphone…"},
		{NotSent, NotSentArgs(20500*time.Millisecond, 4), "Your words are still on this phone: not sent for 20s (4 other calls open)."},
		{NotSent, NotSentArgs(3*time.Second, 1), "Your words are still on this phone: not sent for 3s (1 other call open)."},
		{NotSent, nil, "Your words are still on this phone: not sent for ?s (? other calls open)."},
		{VoiceLate, nil, "Getting her voice ready…"},
		{VoiceLate, Args{ArgProbe: semconv.ProbeAnswered, ArgProbeRTT: ProbeSeconds(240 * time.Millisecond)}, "Getting her voice ready… Pippa is still making it (her audio connection answered in 0.2 s)."},
		{VoiceLate, Args{ArgProbe: semconv.ProbeNoAnswer}, "Getting her voice ready… This device's audio connection is not answering; opening a fresh one."},
		{VoiceLate, Args{ArgProbe: semconv.ProbeRestarting}, "Getting her voice ready… Pippa is restarting, back in a few seconds."},
		{VoiceLate, Args{ArgProbe: semconv.ProbeBusy}, "Getting her voice ready… This device's audio lane is busy; waiting for it to clear."},
	} {
		if got := tt.w.Render(tt.args); got != tt.want {
			t.Errorf("%s %v: %q, want %q", tt.w.Code, tt.args, got, tt.want)
		}
	}
	for status, want := range map[int]string{0: semconv.ProbeNoAnswer, 200: semconv.ProbeAnswered, 404: semconv.ProbeAnswered,
		503: semconv.ProbeRestarting, 502: semconv.ProbeRestarting, 500: semconv.ProbeAnswered} {
		if got := BulkFinding(status); got != want {
			t.Errorf("BulkFinding(%d) = %s, want %s", status, got, want)
		}
	}
}

// statusSpans returns the pippa.link.status spans recorded, in order, as
// attribute maps.
func statusSpans(rec *tracetest.SpanRecorder) []map[attribute.Key]attribute.Value {
	var out []map[attribute.Key]attribute.Value
	for _, s := range rec.Ended() {
		if s.Name() != semconv.SpanLinkStatus {
			continue
		}
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			m[kv.Key] = kv.Value
		}
		out = append(out, m)
	}
	return out
}

// TestMonitorShowsWaits: a wait shows only after its time to visible, its
// message follows its arguments without a change being recorded, its end is
// recorded with its last readings and what it last said, and a lost link
// outranks it (an offline device hides it).
func TestMonitorShowsWaits(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, err := NewMonitor(WithTracerProvider(tp), WithMeterProvider(mp), WithClock(c.now))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stage := func(s string, d time.Duration) Args { return Args{ArgStage: s, ArgFor: Seconds(d)} }

	if l := m.Show(ctx, MicOpening, stage(semconv.StageSession, 0)); l.Status != semconv.LinkStatusOK {
		t.Fatalf("a wait just begun shows %s", l.Status)
	}
	c.add(1400 * time.Millisecond)
	if l := m.Show(ctx, MicOpening, stage(semconv.StageSession, 1400*time.Millisecond)); l.Status != semconv.LinkStatusOK {
		t.Fatalf("after 1.4 s (1.5 s to visible) the line shows %s", l.Status)
	}
	c.add(200 * time.Millisecond)
	l := m.Show(ctx, MicOpening, stage(semconv.StageSession, 1600*time.Millisecond), attribute.String(semconv.WaitStage, semconv.StageSession))
	if l.Message != "Opening the microphone… waiting for the audio session." {
		t.Fatalf("after 1.6 s: %q", l.Message)
	}
	c.add(time.Second)
	l = m.Show(ctx, MicOpening, stage(semconv.StageGrant, time.Second), attribute.String(semconv.WaitStage, semconv.StageGrant))
	if l.Message != "Opening the microphone… waiting for Pippa's listening grant (1 s)." {
		t.Fatalf("the grant stage: %q", l.Message)
	}
	c.add(time.Second)
	m.Show(ctx, MicOpening, stage(semconv.StageGrant, 2*time.Second))
	if l := m.Clear(ctx, MicOpening, attribute.Float64(semconv.WaitFor, 3.1)); l.Status != semconv.LinkStatusOK {
		t.Fatalf("after Clear: %s", l.Status)
	}

	// A post not sent while the device goes offline: offline hides it once
	// visible, and it shows again when the link is back.
	m.Show(ctx, NotSent, NotSentArgs(2*time.Second, 3))
	if l := m.Line(); l.Status != semconv.LinkStatusNotSent {
		t.Fatalf("not sent: %s", l.Status)
	}
	m.Update(ctx, Verdict{}, &Probes{Probed: true})
	c.add(2 * time.Second)
	if l := m.Update(ctx, Verdict{}, &Probes{Probed: true}); l.Status != semconv.LinkStatusDeviceOffline {
		t.Fatalf("offline behind a wait: %s", l.Status)
	}
	if l := m.Update(ctx, Verdict{}, nil); l.Status != semconv.LinkStatusNotSent || !strings.Contains(l.Message, "not sent for 2s (3 other calls open)") {
		t.Fatalf("back online: %s %q", l.Status, l.Message)
	}
	m.Clear(ctx, NotSent)

	got := statusSpans(rec)
	var seq []string
	for _, s := range got {
		seq = append(seq, s[semconv.LinkStatus].AsString())
	}
	want := []string{"mic_opening", "mic_opening", "ok", "not_sent", "connection_lost", "device_offline", "not_sent", "ok"}
	if strings.Join(seq, ",") != strings.Join(want, ",") {
		t.Fatalf("changes %v, want %v", seq, want)
	}
	if s := got[0]; s[semconv.WaitStage].AsString() != semconv.StageSession || s[semconv.LinkPrevious].AsString() != semconv.LinkStatusOK {
		t.Errorf("the change to mic_opening lacks its readings: %v", s)
	}
	if s := got[1]; s[semconv.WaitStage].AsString() != semconv.StageGrant ||
		s[semconv.LinkPreviousMessage].AsString() != "Opening the microphone… waiting for the audio session." {
		t.Errorf("the stage's change is a change of the line, with its readings: %v", s)
	}
	if s := got[2]; s[semconv.LinkPreviousMessage].AsString() != "Opening the microphone… waiting for Pippa's listening grant (2 s)." || s[semconv.WaitFor].AsFloat64() != 3.1 {
		t.Errorf("the end of the wait: previous message %q, waited %v", s[semconv.LinkPreviousMessage].AsString(), s[semconv.WaitFor])
	}
}

// TestMonitorSaysStaleConnection: a check fails, a fresh connection answers
// and the lane's own connection does not: the line goes from "Checking
// why…" to the stale connection, and clears when a check answers.
func TestMonitorSaysStaleConnection(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	m, err := NewMonitor(WithTracerProvider(tp), WithMeterProvider(sdkmetric.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	one := Verdict{Readings: Readings{Check: DefaultCheck, Failures: 1}}
	m.Update(ctx, one, &Probes{DeviceOnline: true})
	l := m.Update(ctx, one, &Probes{Probed: true, DeviceOnline: true, FrontStatus: 200, Lane: "control", InFlight: 1, Limit: 6, PoolProbed: true})
	if l.Status != semconv.LinkStatusStaleConnection {
		t.Fatalf("stale: %s %q", l.Status, l.Message)
	}
	m.Update(ctx, Verdict{}, nil)
	var seq []string
	for _, s := range statusSpans(rec) {
		seq = append(seq, s[semconv.LinkStatus].AsString())
		if s[semconv.LinkStatus].AsString() == semconv.LinkStatusStaleConnection &&
			(!s[semconv.LinkPoolProbed].AsBool() || s[semconv.LinkPoolStatus].AsInt64() != 0 || s[semconv.LinkFrontStatus].AsInt64() != 200) {
			t.Errorf("the stale change lacks its probe readings: %v", s)
		}
	}
	if want := "connection_lost,stale_connection,ok"; strings.Join(seq, ",") != want {
		t.Errorf("changes %v, want %s", seq, want)
	}
}
