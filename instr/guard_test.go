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
// for bad input, leaves the report usable (the lock is released) and is
// counted under its own name; after End, each is refused with ErrEnded and
// counted again.
func TestEveryCallGoesThroughTheGuard(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	sdk, _, _ := memSDK(t, WithMetricReader(reader))
	_, turn := sdk.StartTurn(context.Background())
	_, take := sdk.StartTake(context.Background(), "t1")
	nan := math.NaN()
	calls := []struct {
		name      string
		bad, good func() error
	}{
		{"Turn.SetLink", func() error { return turn.SetLink("", "") }, func() error { return turn.SetLink(semconv.LinkWifi, "") }},
		{"Turn.SetRoute", func() error { return turn.SetRoute(Route{SampleRate: nan}) }, func() error { return turn.SetRoute(Route{SampleRate: 16000}) }},
		{"Turn.RouteChange", func() error { return turn.RouteChange(-1, "", nil) }, func() error { return turn.RouteChange(1, "", nil) }},
		{"Turn.SetHealth", func() error { return turn.SetHealth(Health{Memory: -1}) }, func() error { return turn.SetHealth(Health{}) }},
		{"Turn.SetListen", func() error { return turn.SetListen(Listen{Total: nan}) }, func() error { return turn.SetListen(Listen{}) }},
		{"Turn.SetRPM", func() error { return turn.SetRPM(0, -1) }, func() error { return turn.SetRPM(0.1, 0.1) }},
		{"Turn.SetSpeechEndToPost", func() error { return turn.SetSpeechEndToPost(nan) }, func() error { return turn.SetSpeechEndToPost(1) }},
		{"Turn.SetNotSent", func() error { return turn.SetNotSent(-1) }, func() error { return turn.SetNotSent(0) }},
		{"Turn.MarkStutter", nil, turn.MarkStutter},
		{"Turn.SetPoolResets", func() error { return turn.SetPoolResets(-1) }, func() error { return turn.SetPoolResets(0) }},
		{"Turn.Unit", func() error { return turn.Unit(Unit{Gap: -1}) }, func() error { return turn.Unit(Unit{}) }},
		{"Take.FirstByte", nil, take.FirstByte},
		{"Take.Progress", func() error { return take.Progress(nan) }, func() error { return take.Progress(1) }},
	}
	want := map[string]int64{}
	for _, c := range calls {
		if c.bad != nil {
			if err := c.bad(); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s with bad input: %v, want ErrInvalid", c.name, err)
			}
			want[c.name]++
		}
		if err := c.good(); err != nil { // would hang if the refusal kept the lock
			t.Errorf("%s after a refusal: %v", c.name, err)
		}
	}
	if err := turn.End(); err != nil {
		t.Fatal(err)
	}
	if err := take.End(2); err != nil {
		t.Fatal(err)
	}
	calls = append(calls,
		struct {
			name      string
			bad, good func() error
		}{"Turn.End", nil, turn.End},
		struct {
			name      string
			bad, good func() error
		}{"Take.End", nil, func() error { return take.End(3) }},
	)
	for _, c := range calls {
		if err := c.good(); !errors.Is(err, ErrEnded) {
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
