package lanes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/percause/percause/instr/semconv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Attributes whose values depend on timing or ports; the golden file keeps
// their presence, not their value.
var volatile = map[attribute.Key]bool{semconv.CallNotSent: true, semconv.ServerAddr: false}

type goldenSpan struct {
	Name       string            `json:"name"`
	Kind       string            `json:"kind"`
	Status     string            `json:"status"`
	Attributes map[string]string `json:"attributes"`
	Events     []goldenEvent     `json:"events,omitempty"`
}

type goldenEvent struct {
	Name       string            `json:"name"`
	Attributes map[string]string `json:"attributes"`
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.Value.String()
		if volatile[kv.Key] {
			v = "<" + strings.ToLower(kv.Value.Type().String()) + ">"
		}
		m[string(kv.Key)] = v
	}
	return m
}

func spansOf(spans []sdktrace.ReadOnlySpan) []goldenSpan {
	var out []goldenSpan
	for _, s := range spans {
		g := goldenSpan{Name: s.Name(), Kind: s.SpanKind().String(), Status: s.Status().Code.String(), Attributes: attrMap(s.Attributes())}
		for _, e := range s.Events() {
			if e.Name == "exception" {
				g.Events = append(g.Events, goldenEvent{Name: e.Name, Attributes: map[string]string{}})
				continue
			}
			g.Events = append(g.Events, goldenEvent{Name: e.Name, Attributes: attrMap(e.Attributes)})
		}
		out = append(out, g)
	}
	return out
}

type goldenPoint struct {
	Metric     string            `json:"metric"`
	Unit       string            `json:"unit"`
	Monotonic  bool              `json:"monotonic"`
	Cumulative bool              `json:"cumulative"`
	Attributes map[string]string `json:"attributes"`
	Value      int64             `json:"value"`
}

func metricsOf(t *testing.T, tel *telemetry) []goldenPoint {
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []goldenPoint
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			s, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s: %T", m.Name, m.Data)
			}
			for _, dp := range s.DataPoints {
				out = append(out, goldenPoint{Metric: m.Name, Unit: m.Unit, Monotonic: s.IsMonotonic,
					Cumulative: s.Temporality == metricdata.CumulativeTemporality, Attributes: attrMap(dp.Attributes.ToSlice()), Value: dp.Value})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Metric != out[j].Metric {
			return out[i].Metric < out[j].Metric
		}
		return out[i].Attributes[semconv.Lane] < out[j].Attributes[semconv.Lane]
	})
	return out
}

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking the change):\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestTelemetryGolden records a fixed sequence — a check answered, a stale
// connection that times out and heals the control lane (one failure is
// enough here, to keep the sequence serial), a check on the fresh session,
// a take on the bulk lane and the turn's line stream — and compares the spans
// and the metrics with the golden files, the contract dashboards and a Swift
// client share. It also checks the reset was logged and that trace context
// rode on every call.
func TestTelemetryGolden(t *testing.T) {
	var traceparents []string
	mux := http.NewServeMux()
	mux.HandleFunc("/check", func(w http.ResponseWriter, r *http.Request) {
		traceparents = append(traceparents, r.Header.Get("traceparent"))
		fmt.Fprint(w, "alive")
	})
	mux.HandleFunc("/take", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 4096)) })
	mux.HandleFunc("/lines", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "one\ntwo\n") })
	srv, fl := newFreezingServer(t, mux)

	tel := newTelemetry(t)
	var logs bytes.Buffer
	c, err := New(append(tel.options(), WithTimeScale(testScale), WithResetAfter(1),
		WithPropagator(propagation.TraceContext{}), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, turn := tel.tp.Tracer("test").Start(context.Background(), semconv.SpanVoiceTurn)
	check := func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/check", nil)
		_, _, err := c.Fetch(req, KindCheck, 1024)
		return err
	}
	if err := check(); err != nil {
		t.Fatal(err)
	}
	fl.freeze()
	if err := check(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("stale check: %v", err)
	}
	if err := check(); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/take", nil)
	resp, err := c.Do(req, KindTake)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/lines", nil)
	ls, err := c.Stream(req)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := ls.Next(); err != nil {
			break
		}
	}
	ls.Close()
	turn.End()

	var calls []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() != semconv.SpanVoiceTurn {
			if s.Parent().SpanID() != turn.SpanContext().SpanID() {
				t.Errorf("call span %s is not a child of the turn", s.Name())
			}
			calls = append(calls, s)
		}
	}
	golden(t, "spans.golden.json", spansOf(calls))
	golden(t, "metrics.golden.json", metricsOf(t, tel))
	if !strings.Contains(logs.String(), "pool reset") || !strings.Contains(logs.String(), "lane=control") {
		t.Errorf("the reset was not logged: %q", logs.String())
	}
	for _, tp := range traceparents {
		if !strings.Contains(tp, turn.SpanContext().TraceID().String()) {
			t.Errorf("traceparent %q does not carry the turn's trace", tp)
		}
	}
}
