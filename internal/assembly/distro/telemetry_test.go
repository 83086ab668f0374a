package distro

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtelemetry"
	"go.opentelemetry.io/collector/service/telemetry"
	otelconf "go.opentelemetry.io/contrib/otelconf/v0.3.0"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// TestTelemetryAppliesTheDefaultViews: the service's default views for the
// configured level reach the meter provider. Below detailed, a dropped
// instrument is neither served nor kept, and an attribute the view leaves
// out is gone; at detailed both are as recorded.
func TestTelemetryAppliesTheDefaultViews(t *testing.T) {
	str := func(s string) *string { return &s }
	defaults := func(level configtelemetry.Level) []otelconf.View {
		if level >= configtelemetry.LevelDetailed {
			return nil
		}
		return []otelconf.View{
			{Selector: &otelconf.ViewSelector{MeterName: str("chatty")},
				Stream: &otelconf.ViewStream{Aggregation: &otelconf.ViewStreamAggregation{Drop: otelconf.ViewStreamAggregationDrop{}}}},
			{Selector: &otelconf.ViewSelector{MeterName: str("test"), InstrumentName: str("otelcol_test_failed_*")},
				Stream: &otelconf.ViewStream{AttributeKeys: &otelconf.IncludeExclude{Excluded: []string{"error.type"}}}},
		}
	}
	for _, tc := range []struct {
		level                string
		wantChatty, wantType bool
	}{
		{level: "normal"},
		{level: "", wantChatty: false}, // the default level is normal
		{level: "basic"},
		{level: "detailed", wantChatty: true, wantType: true},
	} {
		t.Run("level "+tc.level, func(t *testing.T) {
			port := testenv.FreePort(t)
			cfg := telemetryConfig(t, map[string]any{"metrics": map[string]any{"level": tc.level, "readers": []any{
				map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": port}}}},
			}}})
			f := newTelemetryFactory()
			set := telemetry.Settings{BuildInfo: component.BuildInfo{Command: Command, Version: "test"}}
			mp, err := f.CreateMeterProvider(context.Background(), telemetry.MeterSettings{Settings: set, Logger: zap.NewNop(), DefaultViews: defaults}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = mp.Shutdown(context.Background()) }()
			ctx := context.Background()
			chatty, _ := mp.Meter("chatty").Float64Histogram("http.server.request.duration")
			chatty.Record(ctx, 0.5)
			failed, _ := mp.Meter("test").Int64Counter("otelcol_test_failed_sends")
			failed.Add(ctx, 2, metric.WithAttributes(attribute.String("error.type", "refused"), attribute.String("exporter", "x")))
			body := testenv.GetBody(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
			if got := strings.Contains(body, "http_server_request_duration"); got != tc.wantChatty {
				t.Errorf("the dropped meter's histogram served: %v, want %v:\n%s", got, tc.wantChatty, body)
			}
			if !strings.Contains(body, `otelcol_test_failed_sends_total{`) || !strings.Contains(body, `exporter="x"`) {
				t.Fatalf("the counter is missing:\n%s", body)
			}
			if got := strings.Contains(body, `error_type="refused"`); got != tc.wantType {
				t.Errorf("the left-out attribute served: %v, want %v:\n%s", got, tc.wantType, body)
			}
		})
	}
}

// TestCollectorAtNormalLevelServesNoHTTPHistograms: the real collector, on
// the embedded default (metrics level normal), takes an OTLP request and
// serves no http_server_* histograms of it on its own metrics endpoint, as
// an upstream collector at that level; at level detailed it serves them.
func TestCollectorAtNormalLevelServesNoHTTPHistograms(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	detailed := filepath.Join(t.TempDir(), "detailed.yaml")
	cfg := strings.Replace(string(collectorconfig.Local), "    metrics:\n      readers:", "    metrics:\n      level: detailed\n      readers:", 1)
	if cfg == string(collectorconfig.Local) {
		t.Fatal("the embedded default has no service::telemetry::metrics::readers block to set a level in")
	}
	if err := os.WriteFile(detailed, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []testenv.CollectorOption
		want bool
	}{
		{name: "embedded default"},
		{name: "level detailed", opts: []testenv.CollectorOption{testenv.WithCollectorConfig(detailed)}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testenv.StartCollector(t, tc.opts...)
			resp, err := http.Post(c.OTLPURL+"/v1/traces", "application/json", strings.NewReader(`{"resourceSpans":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST /v1/traces: %s", resp.Status)
			}
			body := testenv.GetBody(t, c.TelemetryURL)
			if !strings.Contains(body, "otelcol_receiver_accepted_spans") && !strings.Contains(body, "otelcol_process_uptime") {
				t.Fatalf("the collector's own metrics are not served:\n%s", body)
			}
			if got := strings.Contains(body, "http_server_request_duration_seconds"); got != tc.want {
				t.Errorf("http_server_request_duration_seconds served: %v, want %v", got, tc.want)
			}
		})
	}
}
