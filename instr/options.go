package instr

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"time"

	"github.com/percause/percause/exporters/otlp"
	"github.com/percause/percause/exporters/spool"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Defaults.
const (
	// DefaultEndpoint is the local collector's OTLP/HTTP receiver.
	DefaultEndpoint = otlp.DefaultEndpoint
	// DefaultFlushInterval is the longest a finished span waits in memory
	// before its batch goes to the spool (turn end to verdict is meant to
	// take seconds, not minutes).
	DefaultFlushInterval = time.Second
	// DefaultMetricInterval is how often metrics are collected and spooled.
	DefaultMetricInterval = 10 * time.Second
	// DefaultSpoolLimit bounds the disk spool.
	DefaultSpoolLimit = spool.DefaultLimit
	// DefaultShutdownWait bounds how long Shutdown tries to deliver what is
	// spooled when its context has no earlier deadline; what is left stays on
	// disk for the next launch.
	DefaultShutdownWait = 5 * time.Second
	// DefaultTimeScale reports wall time as is.
	DefaultTimeScale = 1.0
)

// Option configures Setup.
type Option func(*config)

type config struct {
	serviceName    string
	serviceVersion string
	installationID string
	instanceID     string
	endpoint       string
	headers        map[string]string
	spoolDir       string
	spoolLimit     int64
	busy           func() bool
	textLog        io.Writer
	spanExporter   sdktrace.SpanExporter
	spanProcs      []sdktrace.SpanProcessor
	metricReader   sdkmetric.Reader
	flushInterval  time.Duration
	metricInterval time.Duration
	timeScale      float64
	logger         *slog.Logger
	onError        func(error)
	poolResets     func() int
	clock          func() time.Time
}

// WithServiceName sets service.name (semconv.ServicePhone or
// semconv.ServiceEngine). Required.
func WithServiceName(name string) Option { return func(c *config) { c.serviceName = name } }

// WithServiceVersion sets service.version.
func WithServiceVersion(v string) Option { return func(c *config) { c.serviceVersion = v } }

// WithInstallationID sets app.installation.id: the phone's install, a UUID the
// app makes once and keeps (no hardware identifier).
func WithInstallationID(id string) Option { return func(c *config) { c.installationID = id } }

// WithInstanceID sets service.instance.id. Default: a new UUID per Setup,
// which is one launch of the process.
func WithInstanceID(id string) Option { return func(c *config) { c.instanceID = id } }

// WithEndpoint sets the collector's OTLP/HTTP base URL (default
// DefaultEndpoint); traces go to /v1/traces and metrics to /v1/metrics.
func WithEndpoint(baseURL string) Option { return func(c *config) { c.endpoint = baseURL } }

// WithHeader adds a header to every export request.
func WithHeader(key, value string) Option {
	return func(c *config) {
		if c.headers == nil {
			c.headers = map[string]string{}
		}
		c.headers[key] = value
	}
}

// WithSpoolDir keeps export batches in dir until the collector accepts them,
// across crashes and relaunches. Without it the spool lives in a temporary
// folder removed at Shutdown (nothing survives a relaunch).
func WithSpoolDir(dir string) Option { return func(c *config) { c.spoolDir = dir } }

// WithSpoolLimit bounds the spool's bytes on disk (default
// DefaultSpoolLimit); beyond it the oldest batches are dropped and counted.
func WithSpoolLimit(bytes int64) Option { return func(c *config) { c.spoolLimit = bytes } }

// WithBusy defers sending while busy reports true (the voice lane is
// streaming), unless the spool is near full. busy is called from the
// exporter's goroutine and must be cheap and safe for concurrent use.
func WithBusy(busy func() bool) Option { return func(c *config) { c.busy = busy } }

// WithTextLog writes the canonical [voice-turn] and [tts-take] lines to w.
func WithTextLog(w io.Writer) Option { return func(c *config) { c.textLog = w } }

// WithSpanExporter replaces the OTLP/spool span export (tests, or an app
// bringing its own pipeline).
func WithSpanExporter(e sdktrace.SpanExporter) Option { return func(c *config) { c.spanExporter = e } }

// WithSpanProcessor adds a span processor beside the export (for example one
// that keeps a copy of every span for a test or the lab's readings).
func WithSpanProcessor(p sdktrace.SpanProcessor) Option {
	return func(c *config) { c.spanProcs = append(c.spanProcs, p) }
}

// WithMetricReader replaces the OTLP/spool metric export (tests: a
// sdkmetric.ManualReader).
func WithMetricReader(r sdkmetric.Reader) Option { return func(c *config) { c.metricReader = r } }

// WithFlushInterval sets how long finished spans wait before their batch is
// spooled (default DefaultFlushInterval).
func WithFlushInterval(d time.Duration) Option { return func(c *config) { c.flushInterval = d } }

// WithMetricInterval sets how often metrics are collected and spooled
// (default DefaultMetricInterval).
func WithMetricInterval(d time.Duration) Option { return func(c *config) { c.metricInterval = d } }

// WithTimeScale multiplies every duration the SDK measures itself (take first
// byte, total and need) by f, so a lab run at scale 20 reports person-seconds.
// Values passed in (unit silent seconds and the like) are taken as given.
func WithTimeScale(f float64) Option { return func(c *config) { c.timeScale = f } }

// WithLogger sets where the SDK and its exporters log (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithErrorHandler sets where refused recordings go. The recording calls
// (the turn's and the take's setters, Unit, RouteChange, MarkStutter, End,
// FirstByte, Progress, Live.Add) return nothing, as OpenTelemetry's do: each
// refusal is counted in percause.sdk.rejected by call and handed to f, which
// must be safe for concurrent use and must not block. Without it, refusals
// are logged at warn level by the SDK's logger
// (docs/decisions/0105-recording-calls-return-nothing.md).
func WithErrorHandler(f func(error)) Option { return func(c *config) { c.onError = f } }

// WithPoolResets gives the SDK the launch's pool-reset tally (for example the
// lanes client's Resets). Turn.End reads it when the turn did not call
// SetPoolResets.
func WithPoolResets(tally func() int) Option { return func(c *config) { c.poolResets = tally } }

// WithClock replaces time.Now for the SDK's own measurements (tests).
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

func defaultConfig() config {
	return config{
		endpoint:       DefaultEndpoint,
		spoolLimit:     DefaultSpoolLimit,
		flushInterval:  DefaultFlushInterval,
		metricInterval: DefaultMetricInterval,
		timeScale:      DefaultTimeScale,
		clock:          time.Now,
	}
}

// Validate reports the first thing wrong with the configuration.
func (c *config) Validate() error {
	var errs []error
	if c.serviceName == "" {
		errs = append(errs, errors.New("instr: no service name (WithServiceName)"))
	}
	if c.spanExporter == nil || c.metricReader == nil {
		u, err := url.Parse(c.endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("instr: endpoint %q: want an http(s) base URL such as %s", c.endpoint, DefaultEndpoint))
		}
	}
	if c.spoolLimit <= 0 {
		errs = append(errs, fmt.Errorf("instr: spool limit %d bytes must be positive", c.spoolLimit))
	}
	if c.flushInterval <= 0 {
		errs = append(errs, fmt.Errorf("instr: flush interval %v must be positive", c.flushInterval))
	}
	if c.metricInterval <= 0 {
		errs = append(errs, fmt.Errorf("instr: metric interval %v must be positive", c.metricInterval))
	}
	if !(c.timeScale > 0) || math.IsInf(c.timeScale, 0) {
		errs = append(errs, fmt.Errorf("instr: time scale %v must be a positive finite number", c.timeScale))
	}
	if c.clock == nil {
		errs = append(errs, errors.New("instr: nil clock"))
	}
	return errors.Join(errs...)
}
