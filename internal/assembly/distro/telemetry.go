package distro

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtelemetry"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/service/telemetry"
	otelconf "go.opentelemetry.io/contrib/otelconf/v0.3.0"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The collector's own telemetry (service::telemetry).
//
// The upstream factory (service/telemetry/otelconftelemetry) pulls in modules
// this build cannot resolve, so the distribution carries a small factory of
// its own that reads the same configuration shape for the parts it supports:
//
//	telemetry:
//	  resource: {key: value}
//	  logs: {level: info, encoding: console}
//	  metrics:
//	    level: normal            # none turns the metrics off; below detailed the
//	                             # service's default views drop what upstream drops
//	    readers:
//	      - pull: {exporter: {prometheus: {host: 127.0.0.1, port: 8888}}}
//
// Traces of the collector itself are not exported (a no-op tracer).

// DefaultTelemetryHost is where the collector's own telemetry listens:
// loopback.
const DefaultTelemetryHost = "127.0.0.1"

var (
	errTelemetryReader = errors.New("telemetry: only pull readers with a prometheus exporter are supported")
	errTelemetryPort   = errors.New("telemetry: prometheus port must be between 1 and 65535")
)

// TelemetryConfig is the service::telemetry section this distribution reads.
type TelemetryConfig struct {
	Resource map[string]*string `mapstructure:"resource"`
	Logs     TelemetryLogs      `mapstructure:"logs"`
	Metrics  TelemetryMetrics   `mapstructure:"metrics"`
}

// TelemetryLogs configures the collector's log.
type TelemetryLogs struct {
	Level    zapcore.Level `mapstructure:"level"`
	Encoding string        `mapstructure:"encoding"`
}

// TelemetryMetrics configures the collector's own metrics.
type TelemetryMetrics struct {
	Level   string            `mapstructure:"level"`
	Readers []TelemetryReader `mapstructure:"readers"`
}

// TelemetryReader is one metric reader; only a pull reader serving the
// Prometheus text format is supported.
type TelemetryReader struct {
	Pull *struct {
		Exporter struct {
			Prometheus *struct {
				Host string `mapstructure:"host"`
				Port int    `mapstructure:"port"`
			} `mapstructure:"prometheus"`
		} `mapstructure:"exporter"`
	} `mapstructure:"pull"`
}

// Validate checks the telemetry section.
func (c *TelemetryConfig) Validate() error {
	for _, r := range c.Metrics.Readers {
		if r.Pull == nil || r.Pull.Exporter.Prometheus == nil {
			return errTelemetryReader
		}
		if p := r.Pull.Exporter.Prometheus.Port; p < 1 || p > 65535 {
			return errTelemetryPort
		}
	}
	switch c.Metrics.Level {
	case "", "none", "basic", "normal", "detailed":
	default:
		return fmt.Errorf("telemetry: metrics level %q: want none, basic, normal or detailed", c.Metrics.Level)
	}
	return nil
}

func newTelemetryFactory() telemetry.Factory {
	return telemetry.NewFactory(
		func() component.Config {
			return &TelemetryConfig{
				Logs:    TelemetryLogs{Level: zapcore.InfoLevel, Encoding: "console"},
				Metrics: TelemetryMetrics{Level: "normal"},
			}
		},
		telemetry.WithCreateResource(createResource),
		telemetry.WithCreateLogger(createLogger),
		telemetry.WithCreateMeterProvider(createMeterProvider),
	)
}

func createResource(_ context.Context, set telemetry.Settings, cfg component.Config) (pcommon.Resource, string, error) {
	c := cfg.(*TelemetryConfig)
	res := pcommon.NewResource()
	a := res.Attributes()
	a.PutStr("service.name", set.BuildInfo.Command)
	a.PutStr("service.version", set.BuildInfo.Version)
	a.PutStr("service.instance.id", uuid.NewString())
	for k, v := range c.Resource {
		if v == nil {
			a.Remove(k) // as upstream: a null value removes the attribute
			continue
		}
		a.PutStr(k, *v)
	}
	return res, "", nil
}

func createLogger(_ context.Context, set telemetry.LoggerSettings, cfg component.Config) (*zap.Logger, component.ShutdownFunc, error) {
	c := cfg.(*TelemetryConfig)
	zc := zap.NewProductionConfig()
	zc.Level = zap.NewAtomicLevelAt(c.Logs.Level)
	zc.Encoding = c.Logs.Encoding
	if zc.Encoding == "" {
		zc.Encoding = "console"
	}
	zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	zc.Sampling = nil
	build := set.BuildZapLogger
	if build == nil {
		build = zap.Config.Build
	}
	logger, err := build(zc)
	if err != nil {
		return nil, nil, err
	}
	return logger, func(context.Context) error { _ = logger.Sync(); return nil }, nil
}

// meterProvider serves the collector's own metrics in the Prometheus text
// format on each configured pull reader.
type meterProvider struct {
	*sdkmetric.MeterProvider
	servers []*http.Server
}

func (m *meterProvider) Shutdown(ctx context.Context) error {
	var errs error
	for _, s := range m.servers {
		errs = errors.Join(errs, s.Shutdown(ctx))
	}
	return errors.Join(errs, m.MeterProvider.Shutdown(ctx))
}

func createMeterProvider(_ context.Context, set telemetry.MeterSettings, cfg component.Config) (telemetry.MeterProvider, error) {
	c := cfg.(*TelemetryConfig)
	var attrs []attribute.KeyValue
	if set.Resource != nil {
		set.Resource.Attributes().Range(func(k string, v pcommon.Value) bool {
			attrs = append(attrs, attribute.String(k, v.AsString()))
			return true
		})
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(sdkresource.NewSchemaless(attrs...))}
	if set.DefaultViews != nil {
		views, err := viewsAt(c.Metrics.Level, set.DefaultViews)
		if err != nil {
			return nil, err
		}
		for _, v := range views {
			opts = append(opts, sdkmetric.WithView(v))
		}
	}
	mp := &meterProvider{}
	if c.Metrics.Level != "none" {
		for _, r := range c.Metrics.Readers {
			p := r.Pull.Exporter.Prometheus
			host := p.Host
			if host == "" {
				host = DefaultTelemetryHost
			}
			reg := prometheus.NewRegistry()
			exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
			if err != nil {
				return nil, err
			}
			opts = append(opts, sdkmetric.WithReader(exp))
			addr := net.JoinHostPort(host, strconv.Itoa(p.Port))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return nil, fmt.Errorf("telemetry: listen on %s: %w", addr, err)
			}
			srv := &http.Server{
				Handler:           promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
				ReadHeaderTimeout: 5 * time.Second,
			}
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && set.Logger != nil {
					set.Logger.Error("telemetry endpoint stopped", zap.Error(err))
				}
			}()
			mp.servers = append(mp.servers, srv)
		}
	}
	mp.MeterProvider = sdkmetric.NewMeterProvider(opts...)
	return mp, nil
}

// viewsAt is the service's default views at a metrics level, as upstream's
// telemetry applies them: below detailed they drop, among others, the HTTP
// server's own histograms of every request (otelhttp) and the processors'
// internal duration, so a collector at normal neither serves them nor pays
// for recording them.
func viewsAt(level string, defaults func(configtelemetry.Level) []otelconf.View) ([]sdkmetric.View, error) {
	var lv configtelemetry.Level
	if level == "" {
		level = "normal"
	}
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("telemetry: metrics level: %w", err)
	}
	var views []sdkmetric.View
	for _, v := range defaults(lv) {
		sv, err := viewOf(v)
		if err != nil {
			return nil, fmt.Errorf("telemetry: default view: %w", err)
		}
		views = append(views, sv)
	}
	return views, nil
}

// viewOf is one configured view as the metrics SDK's: its selector, and a
// stream that drops the instrument or filters its attributes (what the
// service's default views use; other aggregations are refused).
func viewOf(v otelconf.View) (sdkmetric.View, error) {
	if v.Selector == nil {
		return nil, errors.New("a view without a selector")
	}
	if v.Selector.InstrumentType != nil {
		return nil, fmt.Errorf("view selector by instrument type %q: not supported", *v.Selector.InstrumentType)
	}
	inst := sdkmetric.Instrument{
		Name: deref(v.Selector.InstrumentName),
		Unit: deref(v.Selector.Unit),
		Scope: instrumentation.Scope{
			Name:      deref(v.Selector.MeterName),
			Version:   deref(v.Selector.MeterVersion),
			SchemaURL: deref(v.Selector.MeterSchemaUrl),
		},
	}
	var stream sdkmetric.Stream
	if vs := v.Stream; vs != nil {
		stream.Name, stream.Description = deref(vs.Name), deref(vs.Description)
		if a := vs.Aggregation; a != nil {
			switch {
			case a.Drop != nil:
				stream.Aggregation = sdkmetric.AggregationDrop{}
			case a.Default != nil:
			default:
				return nil, errors.New("a view's aggregation other than drop: not supported")
			}
		}
		if k := vs.AttributeKeys; k != nil {
			stream.AttributeFilter = keysFilter(k.Included, k.Excluded)
		}
	}
	return sdkmetric.NewView(inst, stream), nil
}

// keysFilter keeps the attributes named in included (all when it is empty)
// that excluded does not name.
func keysFilter(included, excluded []string) attribute.Filter {
	in, ex := make(map[attribute.Key]bool, len(included)), make(map[attribute.Key]bool, len(excluded))
	for _, k := range included {
		in[attribute.Key(k)] = true
	}
	for _, k := range excluded {
		ex[attribute.Key(k)] = true
	}
	return func(kv attribute.KeyValue) bool {
		return (len(in) == 0 || in[kv.Key]) && !ex[kv.Key]
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
