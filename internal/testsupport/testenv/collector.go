package testenv

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
)

// Environment variables that collector-config/local.yaml reads (with
// loopback defaults) so that each test gets its own ports and folders.
const (
	EnvOTLPEndpoint   = collectorconfig.EnvOTLPEndpoint
	EnvPromEndpoint   = collectorconfig.EnvPromEndpoint
	EnvPageEndpoint   = collectorconfig.EnvPageEndpoint
	EnvHealthEndpoint = collectorconfig.EnvHealthEndpoint
	EnvTelemetryPort  = collectorconfig.EnvTelemetryPort
	EnvDataDir        = collectorconfig.EnvDataDir
	EnvVerdictFile    = collectorconfig.EnvVerdictFile
	EnvVerdictWait    = collectorconfig.EnvVerdictWait
	EnvDecisionWait   = collectorconfig.EnvDecisionWait
)

// collectorStartTimeout bounds how long a collector may take to report healthy.
const collectorStartTimeout = 30 * time.Second

// Collector is a `percause collector` child process started for a test, with
// the addresses it listens on.
type Collector struct {
	*Process
	// OTLPURL is the OTLP/HTTP base URL (traces at /v1/traces, metrics at
	// /v1/metrics), e.g. http://127.0.0.1:41234.
	OTLPURL string
	// PromURL is the Prometheus exporter's scrape URL (…/metrics): the
	// verdict counters and the phone's and engine's metrics.
	PromURL string
	// TelemetryURL is the collector's own metrics (…/metrics), including the
	// verdict processor's otelcol_processor_verdict_* counters.
	TelemetryURL string
	// HealthURL is the health_check endpoint.
	HealthURL string
	// PageURL is the verdict page (…/).
	PageURL string
	// DataDir is the collector's data folder (a test temp dir).
	DataDir string
	// VerdictFile is where the verdict spans are written as OTLP JSON
	// lines.
	VerdictFile string
}

type collectorOptions struct {
	config string
	env    map[string]string
}

// CollectorOption changes how StartCollector starts the collector.
type CollectorOption func(*collectorOptions)

// WithCollectorConfig runs the collector with --config path instead of the
// embedded default. The file sees the same environment variables, so a
// config written like local.yaml gets the test's ports and folders.
func WithCollectorConfig(path string) CollectorOption {
	return func(o *collectorOptions) { o.config = path }
}

// WithCollectorEnv sets an environment variable of the collector process,
// e.g. WithCollectorEnv(EnvVerdictWait, "500ms").
func WithCollectorEnv(key, value string) CollectorOption {
	return func(o *collectorOptions) { o.env[key] = value }
}

// StartCollector starts the real percause binary as `percause collector` on
// free loopback ports with a temporary data folder, waits until its
// health_check answers, and stops it when the test ends.
func StartCollector(tb testing.TB, opts ...CollectorOption) *Collector {
	tb.Helper()
	o := collectorOptions{env: map[string]string{}}
	for _, opt := range opts {
		opt(&o)
	}
	dir := tb.TempDir()
	c := &Collector{DataDir: filepath.Join(dir, "data")}
	c.VerdictFile = filepath.Join(c.DataDir, "verdicts.jsonl")
	otlp, prom, health, tel, page := FreePort(tb), FreePort(tb), FreePort(tb), FreePort(tb), FreePort(tb)
	c.OTLPURL = fmt.Sprintf("http://127.0.0.1:%d", otlp)
	c.PromURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", prom)
	c.HealthURL = fmt.Sprintf("http://127.0.0.1:%d/", health)
	c.TelemetryURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", tel)
	c.PageURL = fmt.Sprintf("http://127.0.0.1:%d/", page)

	env := map[string]string{
		EnvOTLPEndpoint:   fmt.Sprintf("127.0.0.1:%d", otlp),
		EnvPromEndpoint:   fmt.Sprintf("127.0.0.1:%d", prom),
		EnvHealthEndpoint: fmt.Sprintf("127.0.0.1:%d", health),
		EnvPageEndpoint:   fmt.Sprintf("127.0.0.1:%d", page),
		EnvTelemetryPort:  fmt.Sprint(tel),
		EnvDataDir:        c.DataDir,
		EnvVerdictFile:    c.VerdictFile,
	}
	for k, v := range o.env {
		env[k] = v
	}
	if v, ok := env[EnvVerdictFile]; ok {
		c.VerdictFile = v
	}
	args := []string{"collector"}
	if o.config != "" {
		args = append(args, "--config", o.config)
	}
	c.Process = startWithEnv(tb, dir, PercauseBin(tb), env, args...)

	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(collectorStartTimeout)
	for {
		if c.Exited() {
			tb.Fatalf("percause collector exited before it was healthy:\n%s", c.Output())
		}
		if resp, err := client.Get(c.HealthURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("percause collector not healthy after %s:\n%s", collectorStartTimeout, c.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
