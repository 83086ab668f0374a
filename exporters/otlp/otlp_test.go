package otlp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func TestSendGzipProtobufAndClassifiesAnswers(t *testing.T) {
	var mu sync.Mutex
	status := http.StatusOK
	var gotPath, gotType, gotEnc string
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		gotPath, gotType, gotEnc = r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding")
		gotBody, _ = io.ReadAll(r.Body)
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "7")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("answer"))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+"/", WithHeader("Authorization", "Bearer x"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload, err := EncodeTraces([]*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: "voice.turn"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Send(ctx, SignalTraces, payload); err != nil {
		t.Fatal(err)
	}
	if gotPath != "/v1/traces" || gotType != "application/x-protobuf" || gotEnc != "gzip" {
		t.Errorf("request %s %s %s", gotPath, gotType, gotEnc)
	}
	req, err := DecodeTraces(gotBody, true)
	if err != nil || req.ResourceSpans[0].ScopeSpans[0].Spans[0].Name != "voice.turn" {
		t.Fatalf("decoded %v, %v", req, err)
	}
	for _, tc := range []struct {
		status     int
		permanent  bool
		retryAfter time.Duration
	}{
		{http.StatusBadRequest, true, 0},
		{http.StatusTooManyRequests, false, 0},
		{http.StatusServiceUnavailable, false, 7 * time.Second},
		{http.StatusBadGateway, false, 0},
		{http.StatusInternalServerError, true, 0},
	} {
		mu.Lock()
		status = tc.status
		mu.Unlock()
		err := c.Send(ctx, SignalMetrics, payload)
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != tc.status || Permanent(err) != tc.permanent || he.RetryAfter() != tc.retryAfter {
			t.Errorf("status %d: %v (permanent %v, retry after %v)", tc.status, err, Permanent(err), he.RetryAfter())
		}
		if !strings.Contains(err.Error(), "answer") {
			t.Errorf("error %q lacks the collector's answer", err)
		}
	}
	// A collector that is down is retryable.
	srv.Close()
	if err := c.Send(ctx, SignalTraces, payload); err == nil || Permanent(err) {
		t.Errorf("down collector: %v, want a retryable error", err)
	}
}

func TestNewClientValidates(t *testing.T) {
	for _, e := range []string{"127.0.0.1:4318", "ftp://x", "http://", "://"} {
		if _, err := NewClient(e); err == nil {
			t.Errorf("%q accepted", e)
		}
	}
	if err := (&Client{}).Send(context.Background(), "logs", nil); err == nil {
		t.Error("unknown signal accepted")
	}
}

// TestExportersEncodeWhatTheSDKRecords runs the OpenTelemetry SDK's own
// pipelines into the adapters and decodes what the sink receives.
func TestExportersEncodeWhatTheSDKRecords(t *testing.T) {
	var mu sync.Mutex
	got := map[Signal][][]byte{}
	sink := func(_ context.Context, sig Signal, p []byte) error {
		mu.Lock()
		defer mu.Unlock()
		got[sig] = append(got[sig], p)
		return nil
	}
	res := resource.NewSchemaless(attribute.String("service.name", "pippa-phone"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSyncer(NewSpanExporter(sink)))
	_, sp := tp.Tracer("t").Start(context.Background(), "voice.turn")
	sp.SetAttributes(attribute.Int64Slice("pippa.live.players.before", []int64{1, 2, 3}))
	sp.End()
	_ = tp.Shutdown(context.Background())

	reader := sdkmetric.NewPeriodicReader(NewMetricExporter(sink), sdkmetric.WithInterval(time.Hour))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
	m := mp.Meter("t")
	c, _ := m.Int64Counter("pippa.voice.underruns")
	c.Add(context.Background(), 2, metricAttr("network.connection.type", "wifi"))
	h, _ := m.Float64Histogram("pippa.voice.silence")
	h.Record(context.Background(), 1.4)
	g, _ := m.Int64Gauge("pippa.health.memory")
	g.Record(context.Background(), 10)
	_ = mp.Shutdown(context.Background())

	tr, err := DecodeTraces(got[SignalTraces][0], true)
	if err != nil {
		t.Fatal(err)
	}
	s := tr.ResourceSpans[0].ScopeSpans[0].Spans[0]
	if s.Name != "voice.turn" || len(s.Attributes[0].Value.GetArrayValue().GetValues()) != 3 {
		t.Errorf("span %v", s)
	}
	mr, err := DecodeMetrics(got[SignalMetrics][0], true)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range mr.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		names[m.Name] = true
		if sum := m.GetSum(); sum != nil {
			if !sum.IsMonotonic || sum.DataPoints[0].GetAsInt() != 2 || sum.AggregationTemporality.String() != "AGGREGATION_TEMPORALITY_CUMULATIVE" {
				t.Errorf("counter %v", sum)
			}
			if kv := sum.DataPoints[0].Attributes[0]; kv.Key != "network.connection.type" || kv.Value.GetStringValue() != "wifi" {
				t.Errorf("counter attribute %v", kv)
			}
		}
		if hist := m.GetHistogram(); hist != nil && (hist.DataPoints[0].GetSum() != 1.4 || hist.DataPoints[0].GetCount() != 1) {
			t.Errorf("histogram %v", hist)
		}
	}
	for _, n := range []string{"pippa.voice.underruns", "pippa.voice.silence", "pippa.health.memory"} {
		if !names[n] {
			t.Errorf("metric %s missing", n)
		}
	}
	if err := NewMetricExporter(sink).Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestAnyValueCoversAttributeTypes(t *testing.T) {
	for _, kv := range []attribute.KeyValue{
		attribute.Bool("b", true), attribute.Int("i", 1), attribute.Float64("f", 1.5), attribute.String("s", "x"),
		attribute.BoolSlice("bs", []bool{true}), attribute.IntSlice("is", []int{1}), attribute.Float64Slice("fs", []float64{1}),
		attribute.StringSlice("ss", []string{"a"}),
	} {
		v := anyValue(kv.Value)
		if v.Value == nil {
			t.Errorf("%s: empty", kv.Key)
		}
		if _, isStr := v.Value.(*commonpb.AnyValue_StringValue); isStr && kv.Value.Type() != attribute.STRING {
			t.Errorf("%s fell back to a string", kv.Key)
		}
	}
}
