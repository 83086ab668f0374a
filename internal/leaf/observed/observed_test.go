package observed

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestCountsAreReadWhenTheMetricsAre: what is added shows when a reader
// collects, by attribute value (each value at its first addition); a
// count never added to shows nothing, an up-down sum back at zero shows
// zero; after Shutdown nothing shows.
func TestCountsAreReadWhenTheMetricsAre(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	set := NewSet(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test"))
	byReason, err := set.Counter("dropped", "d", "{item}", "reason")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := set.Counter("refused", "r", "{verdict}", "")
	if err != nil {
		t.Fatal(err)
	}
	held, err := set.UpDownCounter("pending", "p", "{trace}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Counter("quiet", "q", "{item}", ""); err != nil {
		t.Fatal(err)
	}
	byReason.AddFor("decided", 3)
	byReason.AddFor("decided", 2)
	byReason.AddFor("no_turn", 1)
	plain.Add(4)
	held.Add(2)
	held.Add(-2)

	got := collect(t, reader)
	want := map[string]int64{"dropped{decided}": 5, "dropped{no_turn}": 1, "refused": 4, "pending": 0}
	if len(got) != len(want) {
		t.Errorf("read %v, want %v", got, want)
	}
	for k, v := range want {
		if n, ok := got[k]; !ok || n != v {
			t.Errorf("%s = %d (read: %v), want %d", k, n, ok, v)
		}
	}
	if err := set.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("after Shutdown read %v, want nothing", got)
	}
}

// collect reads every int64 sum point as name{value}.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s is a %T", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				key := m.Name
				for _, kv := range dp.Attributes.ToSlice() {
					key += "{" + kv.Value.AsString() + "}"
				}
				out[key] += dp.Value
			}
		}
	}
	return out
}

// BenchmarkAdd: an addition on a request's way.
func BenchmarkAdd(b *testing.B) {
	set := NewSet(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())).Meter("bench"))
	c, err := set.Counter("dropped", "d", "{item}", "reason")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.AddFor("decided", 1)
	}
}
