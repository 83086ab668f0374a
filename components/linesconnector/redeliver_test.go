package linesconnector_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// refusingNextConfig is the lines path with a next hop the test serves:
// OTLP logs in, the lines connector, and its traces out over OTLP/HTTP with
// neither a retry nor a queue, so the next hop's refusal goes back through
// the pipeline to the client at once. No verdict processor: it holds a
// refused verdict and sends it again on its own, which would hide whether
// the connector emits a refused turn again; the connector must, whatever
// follows it (a gateway, say).
const refusingNextConfig = `
extensions:
  health_check:
    endpoint: ${env:PERCAUSE_HEALTH_ENDPOINT}
receivers:
  otlp:
    protocols:
      http:
        endpoint: ${env:PERCAUSE_OTLP_ENDPOINT}
connectors:
  lines:
    wait: 1h
exporters:
  otlphttp/next:
    traces_endpoint: ${env:PERCAUSE_TEST_NEXT}
    compression: none
    retry_on_failure:
      enabled: false
    sending_queue:
      enabled: false
service:
  extensions: [health_check]
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [lines]
    traces:
      receivers: [lines]
      exporters: [otlphttp/next]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: ${env:PERCAUSE_TELEMETRY_PORT}
`

// TestARefusedBatchOfLinesIsEmittedWhenSentAgain: the real collector
// binary takes an app's lines as OTLP logs from the OpenTelemetry Go SDK's
// log exporter; the next hop after the lines connector refuses the first
// request that carries a trace it has not seen (503). The refusal goes back
// to the client, which sends the same logs again (the connector's wait is
// an hour: only the delivery again can emit them), and the turn arrives:
// first a turn without takes, then a turn with its take, each in a batch of
// its own.
func TestARefusedBatchOfLinesIsEmittedWhenSentAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	requests, refused := 0, 0
	got := map[string]map[string]int{} // trace → span name → spans accepted
	next := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		requests++
		spans := spansOf([]ptrace.Traces{req.Traces()})
		fresh := false
		for _, s := range spans {
			if id := s.span.TraceID().String(); !seen[id] {
				seen[id], fresh = true, true
			}
		}
		if fresh {
			refused++
			http.Error(w, "the next hop is not ready", http.StatusServiceUnavailable)
			return
		}
		for _, s := range spans {
			id := s.span.TraceID().String()
			if got[id] == nil {
				got[id] = map[string]int{}
			}
			got[id][s.span.Name()]++
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := ptraceotlp.NewExportResponse().MarshalProto()
		_, _ = w.Write(b)
	}))
	defer next.Close()

	cfg := filepath.Join(t.TempDir(), "refusing-next.yaml")
	if err := os.WriteFile(cfg, []byte(refusingNextConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	col := testenv.StartCollector(t, testenv.WithCollectorConfig(cfg), testenv.WithCollectorEnv("PERCAUSE_TEST_NEXT", next.URL+"/v1/traces"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(col.OTLPURL+"/v1/logs"), otlploghttp.WithInsecure(),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond,
			MaxInterval: time.Second, MaxElapsedTime: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))))
	defer func() { _ = lp.Shutdown(context.Background()) }()
	logger := lp.Logger("pippa")
	send := func(lines ...string) {
		t.Helper()
		for _, l := range lines {
			var rec otellog.Record
			rec.SetTimestamp(time.Now())
			rec.SetBody(attribute.StringValue(l))
			logger.Emit(ctx, rec)
		}
		if err := lp.ForceFlush(ctx); err != nil { // one request, sent again until accepted
			t.Fatalf("the client's logs were not accepted in the end: %v", err)
		}
	}
	arrived := func(trace string, takes int) {
		t.Helper()
		testenv.WaitFor(t, 30*time.Second, "trace "+trace+"'s turn at the next hop", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return got[trace][semconv.SpanVoiceTurn] > 0
		})
		mu.Lock()
		defer mu.Unlock()
		if n := got[trace]; n[semconv.SpanVoiceTurn] != 1 || n[semconv.SpanTTSTake] != takes {
			t.Errorf("trace %s: spans %v, want its turn once and %d takes", trace, n, takes)
		}
	}

	send("[voice-turn] turn=1 trace=" + plainTrace + " link=wifi units=1 gaps=0.10 broke=-")
	arrived(plainTrace, 0)
	send("[tts-take] take=t2 trace="+redeliveredTrace+" need=0.20",
		"[voice-turn] turn=2 trace="+redeliveredTrace+" link=wifi units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2")
	arrived(redeliveredTrace, 1)
	col.Stop()

	mu.Lock()
	defer mu.Unlock()
	if refused != 2 {
		t.Fatalf("the next hop refused %d requests, want 2, one per batch (no refusal, no test)", refused)
	}
	t.Logf("%d requests to the next hop, %d refused", requests, refused)
}

const (
	plainTrace       = "5b8efff798038103d269b633813fc60d"
	redeliveredTrace = "0af7651916cd43dd8448eb211c80319c"
)
