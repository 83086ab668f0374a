package linkstatus

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the link status' telemetry.
const ScopeName = "github.com/percause/percause/instr/linkstatus"

// Option configures a Tracker or a Monitor.
type Option func(*config)

type config struct {
	scale  float64
	th     Thresholds
	check  string
	now    func() time.Time
	heard  func() time.Time
	tp     trace.TracerProvider
	mp     metric.MeterProvider
	onLine func(Line)
}

func defaultConfig() config {
	return config{scale: 1, th: DefaultThresholds(), check: DefaultCheck, now: time.Now}
}

// WithTimeScale runs person-time thresholds f times faster and reports
// readings in person-time (1 is life).
func WithTimeScale(f float64) Option { return func(c *config) { c.scale = f } }

// WithThresholds replaces the Reconnecting rule's thresholds.
func WithThresholds(th Thresholds) Option { return func(c *config) { c.th = th } }

// WithCheck names the check whose failures the Tracker counts.
func WithCheck(name string) Option { return func(c *config) { c.check = name } }

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithHeardSource adds a source of "heard from the engine" times, such as a
// lanes Client's LastHeard, so streamed words and other answers count without
// each caller reporting them.
func WithHeardSource(f func() time.Time) Option { return func(c *config) { c.heard = f } }

// WithTracerProvider sets where status-change spans go (default: global).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where pippa.link.status_changes goes (default: global).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithLineHook is called with every new line the Monitor shows.
func WithLineHook(f func(Line)) Option { return func(c *config) { c.onLine = f } }

func (c *config) validate() error {
	var errs []error
	if c.scale <= 0 || math.IsNaN(c.scale) || math.IsInf(c.scale, 0) {
		errs = append(errs, fmt.Errorf("linkstatus: time scale must be a positive number, got %v", c.scale))
	}
	if err := c.th.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.now == nil {
		errs = append(errs, errors.New("linkstatus: clock must not be nil"))
	}
	return errors.Join(errs...)
}

func (c *config) fill() {
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
}

func (c *config) person(d time.Duration) time.Duration { return time.Duration(float64(d) * c.scale) }
func (c *config) wall(d time.Duration) time.Duration   { return time.Duration(float64(d) / c.scale) }
