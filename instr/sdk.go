package instr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/percause/percause/exporters/otlp"
	"github.com/percause/percause/exporters/spool"
	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the SDK's spans and metrics.
const ScopeName = "github.com/percause/percause/instr"

// SDK is one process's telemetry: providers, exporters, the live-object
// registry and the launch's turn history. Make it once per launch with Setup.
type SDK struct {
	cfg        config
	instanceID string
	tp         *sdktrace.TracerProvider
	mp         *sdkmetric.MeterProvider
	tracer     trace.Tracer
	inst       *instruments
	live       *Live
	text       *textlines.Writer
	logger     *slog.Logger

	spool     atomic.Pointer[spool.Spool]
	client    *otlp.Client
	tempSpool string // removed at Shutdown when the spool was temporary

	turns   atomic.Int64
	history history
	takes   takeTracker

	shutdownOnce sync.Once
	shutdownErr  error
}

// history is what the launch remembers between turns, so each turn report
// carries the readings the cross-turn rules need.
type history struct {
	mu          sync.Mutex
	live        [][numKinds]int64 // counts at the end of the last turns, oldest first (at most LiveHistory)
	poolPrev    int
	hasPoolPrev bool
}

// Setup builds the SDK: the resource, the tracer and meter providers, and
// (unless replaced by WithSpanExporter and WithMetricReader) the OTLP export
// through the disk spool. It installs no OpenTelemetry global (propagator,
// tracer or meter provider). Call Shutdown before the process exits.
func Setup(ctx context.Context, opts ...Option) (*SDK, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	s := &SDK{cfg: cfg, live: &Live{}, logger: cfg.logger, instanceID: cfg.instanceID}
	if s.instanceID == "" {
		s.instanceID = uuid.NewString()
	}
	if cfg.textLog != nil {
		s.text = textlines.NewWriter(cfg.textLog)
	}
	s.takes.active = map[*Take]struct{}{}

	attrs := []attribute.KeyValue{
		attribute.String(semconv.ServiceName, cfg.serviceName),
		attribute.String(semconv.ServiceInstanceID, s.instanceID),
	}
	if cfg.installationID != "" {
		attrs = append(attrs, attribute.String(semconv.AppInstallationID, cfg.installationID))
	}
	if cfg.serviceVersion != "" {
		attrs = append(attrs, attribute.String(semconv.ServiceVersion, cfg.serviceVersion))
	}
	res := resource.NewSchemaless(attrs...)

	spanExp, reader := cfg.spanExporter, cfg.metricReader
	if spanExp == nil || reader == nil {
		sink, err := s.openExport()
		if err != nil {
			return nil, err
		}
		if spanExp == nil {
			spanExp = otlp.NewSpanExporter(sink)
		}
		if reader == nil {
			reader = sdkmetric.NewPeriodicReader(otlp.NewMetricExporter(sink),
				sdkmetric.WithInterval(cfg.metricInterval))
		}
	}
	tpOpts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()), // every turn must reach the rules
		sdktrace.WithBatcher(spanExp, sdktrace.WithBatchTimeout(cfg.flushInterval)),
	}
	for _, p := range cfg.spanProcs {
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(p))
	}
	s.tp = sdktrace.NewTracerProvider(tpOpts...)
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
	s.tracer = s.tp.Tracer(ScopeName)
	inst, err := newInstruments(s.mp.Meter(ScopeName), s.live, s.spool.Load)
	if err != nil {
		_ = s.Shutdown(ctx)
		return nil, fmt.Errorf("instr: instruments: %w", err)
	}
	s.inst = inst
	inst.onError = cfg.onError
	if inst.onError == nil {
		logger := s.logger
		inst.onError = func(err error) { logger.Warn("instr: recording refused", "reason", err.Error()) }
	}
	s.live.onReject = func(err error) { inst.refuse("Live.Add", err) }
	// No global is installed: several SDKs may share a process, and the
	// app owns its globals (docs/decisions/0104-setup-leaves-globals-alone.md).
	return s, nil
}

// openExport opens the spool and the OTLP client and returns the sink the
// exporters write to.
func (s *SDK) openExport() (otlp.Sink, error) {
	var copts []otlp.ClientOption
	for k, v := range s.cfg.headers {
		copts = append(copts, otlp.WithHeader(k, v))
	}
	client, err := otlp.NewClient(s.cfg.endpoint, copts...)
	if err != nil {
		return nil, fmt.Errorf("instr: %w", err)
	}
	s.client = client
	dir := s.cfg.spoolDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "percause-spool-"); err != nil {
			return nil, fmt.Errorf("instr: temporary spool: %w", err)
		}
		s.tempSpool = dir
	}
	// Metrics are cumulative: while offline, the newest collection of this
	// launch is all that needs to wait, which leaves the room to the turns.
	sopts := []spool.Option{spool.WithLimit(s.cfg.spoolLimit), spool.WithLogger(s.logger),
		spool.WithLatestOnly(string(otlp.SignalMetrics))}
	if s.cfg.busy != nil {
		sopts = append(sopts, spool.WithBusy(s.cfg.busy))
	}
	sp, err := spool.Open(dir, func(ctx context.Context, kind string, payload []byte) error {
		return client.Send(ctx, otlp.Signal(kind), payload)
	}, sopts...)
	if err != nil {
		client.Close()
		if s.tempSpool != "" {
			_ = os.RemoveAll(s.tempSpool)
		}
		return nil, fmt.Errorf("instr: %w", err)
	}
	s.spool.Store(sp)
	return func(_ context.Context, sig otlp.Signal, payload []byte) error {
		return sp.Put(string(sig), payload)
	}, nil
}

// TracerProvider is the SDK's tracer provider (for otelhttp and the lanes).
func (s *SDK) TracerProvider() trace.TracerProvider { return s.tp }

// MeterProvider is the SDK's meter provider.
func (s *SDK) MeterProvider() metric.MeterProvider { return s.mp }

// Live is the live-object registry of this launch.
func (s *SDK) Live() *Live { return s.live }

// InstanceID is service.instance.id: this launch.
func (s *SDK) InstanceID() string { return s.instanceID }

// ExportStats is the spool's self-telemetry (zero when export was replaced).
func (s *SDK) ExportStats() spool.Stats {
	if sp := s.spool.Load(); sp != nil {
		return sp.Stats()
	}
	return spool.Stats{}
}

// ErrNotDelivered is wrapped when ForceFlush ends with batches still spooled.
var ErrNotDelivered = errors.New("instr: batches still in the spool")

// ForceFlush spools every finished span and the current metrics, then tries to
// deliver everything spooled (ignoring the busy signal) until ctx ends. An
// error wrapping ErrNotDelivered means batches are still on disk; they are
// sent later or on the next launch.
func (s *SDK) ForceFlush(ctx context.Context) error {
	err := errors.Join(s.tp.ForceFlush(ctx), s.mp.ForceFlush(ctx))
	if sp := s.spool.Load(); sp != nil {
		if ferr := sp.Flush(ctx); ferr != nil {
			err = errors.Join(err, fmt.Errorf("%w: %v", ErrNotDelivered, ferr))
		}
	}
	return err
}

// Shutdown ends the providers (spooling what they hold), tries to deliver the
// spool until ctx ends or DefaultShutdownWait passes, and stops exporting.
// Undelivered batches stay on disk for the next launch (when WithSpoolDir was
// given); that is logged, not an error.
func (s *SDK) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		var errs []error
		if s.tp != nil {
			errs = append(errs, s.tp.Shutdown(ctx))
		}
		if s.mp != nil {
			errs = append(errs, s.mp.Shutdown(ctx))
		}
		if sp := s.spool.Load(); sp != nil {
			fctx, cancel := context.WithTimeout(ctx, DefaultShutdownWait)
			if err := sp.Flush(fctx); err != nil {
				s.logger.Warn("instr: shutdown left batches in the spool", "dir", sp.Dir(), "reason", err.Error())
			}
			cancel()
			errs = append(errs, sp.Close())
		}
		if s.client != nil {
			s.client.Close()
		}
		if s.tempSpool != "" {
			errs = append(errs, os.RemoveAll(s.tempSpool))
		}
		s.shutdownErr = errors.Join(errs...)
	})
	return s.shutdownErr
}

// now is the SDK's clock.
func (s *SDK) now() time.Time { return s.cfg.clock() }

// scaled converts a measured wall duration to reported seconds.
func (s *SDK) scaled(d time.Duration) float64 { return d.Seconds() * s.cfg.timeScale }
