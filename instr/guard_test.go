package instr

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/percause/percause/instr/semconv"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// rejectedByCall reads percause.sdk.rejected by call.
func rejectedByCall(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
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
	return got
}

// TestEveryCallGoesThroughTheGuard: each call of a turn and a take, refused
// for bad input, leaves the report usable (the lock is released, even for an
// error handler that calls back into the report) and is counted under its
// own name; after End, each is refused with ErrEnded and counted again.
func TestEveryCallGoesThroughTheGuard(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	var r refusals
	var turn *Turn
	sdk, _, _ := memSDK(t, WithMetricReader(reader), WithErrorHandler(func(err error) {
		r.handle(err)
		turn.Index() // a handler may call back into the report: the lock is released
	}))
	_, turn = sdk.StartTurn(context.Background())
	_, take := sdk.StartTake(context.Background(), "t1")
	nan := math.NaN()
	calls := []struct {
		name      string
		bad, good func()
	}{
		{"Turn.SetLink", func() { turn.SetLink("", "") }, func() { turn.SetLink(semconv.LinkWifi, "") }},
		{"Turn.SetRoute", func() { turn.SetRoute(Route{SampleRate: nan}) }, func() { turn.SetRoute(Route{SampleRate: 16000}) }},
		{"Turn.RouteChange", func() { turn.RouteChange(-1, "", nil) }, func() { turn.RouteChange(1, "", nil) }},
		{"Turn.SetHealth", func() { turn.SetHealth(Health{Memory: -1}) }, func() { turn.SetHealth(Health{}) }},
		{"Turn.SetListen", func() { turn.SetListen(Listen{Total: nan}) }, func() { turn.SetListen(Listen{}) }},
		{"Turn.SetRPM", func() { turn.SetRPM(0, -1) }, func() { turn.SetRPM(0.1, 0.1) }},
		{"Turn.SetSpeechEndToPost", func() { turn.SetSpeechEndToPost(nan) }, func() { turn.SetSpeechEndToPost(1) }},
		{"Turn.SetNotSent", func() { turn.SetNotSent(-1) }, func() { turn.SetNotSent(0) }},
		{"Turn.MarkStutter", nil, turn.MarkStutter},
		{"Turn.SetPoolResets", func() { turn.SetPoolResets(-1) }, func() { turn.SetPoolResets(0) }},
		{"Turn.Unit", func() { turn.Unit(Unit{Gap: -1}) }, func() { turn.Unit(Unit{}) }},
		{"Take.FirstByte", nil, take.FirstByte},
		{"Take.Progress", func() { take.Progress(nan) }, func() { take.Progress(1) }},
	}
	want := map[string]int64{}
	for _, c := range calls {
		if c.bad != nil {
			if err := r.one(t, c.bad); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s with bad input: %v, want ErrInvalid", c.name, err)
			}
			want[c.name]++
		}
		if errs := r.during(c.good); len(errs) != 0 { // would hang if the refusal kept the lock
			t.Errorf("%s after a refusal: %v", c.name, errs)
		}
	}
	if errs := r.during(func() { turn.End(); take.End(2) }); len(errs) != 0 {
		t.Fatal(errs)
	}
	calls = append(calls,
		struct {
			name      string
			bad, good func()
		}{"Turn.End", nil, turn.End},
		struct {
			name      string
			bad, good func()
		}{"Take.End", nil, func() { take.End(3) }},
	)
	for _, c := range calls {
		if err := r.one(t, c.good); !errors.Is(err, ErrEnded) {
			t.Errorf("%s after End: %v, want ErrEnded", c.name, err)
		}
		want[c.name]++
	}
	got := rejectedByCall(t, reader)
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s{%s=%q} = %d, want %d", semconv.MetricSDKRejected, semconv.SDKCall, name, got[name], n)
		}
	}
}
