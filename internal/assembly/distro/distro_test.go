package distro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/service/telemetry"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// TestFactories: the distribution carries every component its
// configurations name.
func TestFactories(t *testing.T) {
	f, err := Factories()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"receiver":  {"otlp", "filelog", "kafka"},
		"processor": {"verdict", "batch", "memory_limiter", "resource"},
		"exporter":  {"prometheus", "prometheusremotewrite", "otlphttp", "debug", "nop", "file", "kafka", "verdicts"},
		"extension": {"file_storage", "shared_storage", "bearertokenauth", "health_check"},
		"connector": {"count", "lines", "forward", "verdictcount"},
	}
	has := func(kind, name string) bool {
		typ := component.MustNewType(name)
		switch kind {
		case "receiver":
			_, ok := f.Receivers[typ]
			return ok
		case "processor":
			_, ok := f.Processors[typ]
			return ok && f.ProcessorModules[typ] != ""
		case "exporter":
			_, ok := f.Exporters[typ]
			return ok
		case "extension":
			_, ok := f.Extensions[typ]
			return ok
		case "connector":
			_, ok := f.Connectors[typ]
			return ok
		}
		return false
	}
	for kind, names := range want {
		for _, n := range names {
			if !has(kind, n) {
				t.Errorf("%s %s missing", kind, n)
			}
		}
	}
	if f.Telemetry == nil {
		t.Fatal("no telemetry factory: otelcol refuses to start")
	}
}

func telemetryConfig(t *testing.T, raw map[string]any) *TelemetryConfig {
	t.Helper()
	cfg := newTelemetryFactory().CreateDefaultConfig().(*TelemetryConfig)
	if err := confmap.NewFromStringMap(raw).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestTelemetryConfigValidate(t *testing.T) {
	pull := func(port int) map[string]any {
		return map[string]any{"metrics": map[string]any{"readers": []any{
			map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": port}}}},
		}}}
	}
	if err := telemetryConfig(t, pull(8888)).Validate(); err != nil {
		t.Fatalf("pull reader rejected: %v", err)
	}
	if err := telemetryConfig(t, pull(0)).Validate(); !errors.Is(err, errTelemetryPort) {
		t.Fatalf("port 0: %v", err)
	}
	periodic := map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"periodic": map[string]any{}}}}}
	cfg := newTelemetryFactory().CreateDefaultConfig().(*TelemetryConfig)
	if err := confmap.NewFromStringMap(periodic).Unmarshal(cfg); err == nil {
		if err := cfg.Validate(); !errors.Is(err, errTelemetryReader) {
			t.Fatalf("periodic reader: %v", err)
		}
	}
	if err := telemetryConfig(t, map[string]any{"metrics": map[string]any{"level": "loud"}}).Validate(); err == nil {
		t.Fatal("level loud accepted")
	}
}

// TestTelemetryServesMetrics: the collector's own metrics are served in the
// Prometheus format on the configured loopback port.
func TestTelemetryServesMetrics(t *testing.T) {
	port := testenv.FreePort(t)
	cfg := telemetryConfig(t, map[string]any{"metrics": map[string]any{"readers": []any{
		map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": port}}}},
	}}})
	f := newTelemetryFactory()
	set := telemetry.Settings{BuildInfo: component.BuildInfo{Command: Command, Version: "test"}}
	res, _, err := f.CreateResource(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	set.Resource = &res
	mp, err := f.CreateMeterProvider(context.Background(), telemetry.MeterSettings{Settings: set, Logger: zap.NewNop()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mp.Shutdown(context.Background()) }()
	c, err := mp.Meter("test").Int64Counter("otelcol_test_things", metric.WithDescription("things"))
	if err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 3)
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "otelcol_test_things_total 3") && !strings.Contains(string(b), "otelcol_test_things_total{") {
		t.Fatalf("metric not served:\n%s", b)
	}
	if !strings.Contains(string(b), `service_name="percause collector"`) {
		t.Errorf("resource not on target_info:\n%s", b)
	}
}
