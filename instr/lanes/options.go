package lanes

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of the pool (docs/domain.md, "What was learned about the connections").
const (
	// DefaultConnsPerHost is the phone's limit: six connections to a host,
	// here per lane.
	DefaultConnsPerHost = 6
	// DefaultResetAfter is how many failures in a row (buffered-reply
	// timeouts, stream stalls, streams lost mid-reply) heal the pool.
	DefaultResetAfter = semconv.DefaultPoolResetAfter
	// DefaultResetSpacing is the least time between two heals of one lane.
	DefaultResetSpacing = semconv.DefaultPoolResetSpacing
	// DefaultNotSentAfter is how long a call may wait for a connection
	// before the wait counts as "not sent": long enough that a handshake
	// never counts, short enough to show within a check's 5 s timeout.
	DefaultNotSentAfter = 2 * time.Second
	// DefaultDialTimeout bounds opening one connection.
	DefaultDialTimeout = 10 * time.Second
	// DefaultIdleConnTimeout closes kept-alive connections idle this long.
	DefaultIdleConnTimeout = 90 * time.Second
)

// defaultPropagator is instr.Propagator(): W3C Trace Context and Baggage.
var defaultPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// ScopeName is the instrumentation scope of the lanes' spans and metrics.
const ScopeName = "github.com/percause/percause/instr/lanes"

// Option configures a Client.
type Option func(*config)

type config struct {
	scale        float64
	connsPerHost int
	resetAfter   int
	resetSpacing time.Duration
	notSentAfter time.Duration
	dialTimeout  time.Duration
	shared       bool
	policies     map[Kind]Policy
	base         *http.Transport
	tp           trace.TracerProvider
	mp           metric.MeterProvider
	prop         propagation.TextMapPropagator
	log          *slog.Logger
	onCall       func(CallEnd)
	onReset      func(Reset)
	onInFlight   func(lane string, delta int)
	errs         []error

	// feedRetired lets outcomes of calls on a healed-away session count
	// toward the next heal: the bug this package exists to avoid. Tests set
	// it to show that their replay would catch it.
	feedRetired bool
}

func defaultConfig() config {
	return config{
		scale:        1,
		connsPerHost: DefaultConnsPerHost,
		resetAfter:   DefaultResetAfter,
		resetSpacing: DefaultResetSpacing,
		notSentAfter: DefaultNotSentAfter,
		dialTimeout:  DefaultDialTimeout,
		policies:     DefaultPolicies(),
	}
}

// WithTimeScale runs every person-time threshold (timeouts, the heal
// spacing, the not-sent threshold) f times faster, and reports every reading
// (waits, round trips) multiplied by f, so a lab run at scale 20 reports
// person-seconds. 1 is life.
func WithTimeScale(f float64) Option { return func(c *config) { c.scale = f } }

// WithConnsPerHost sets the connections per host of each lane (default 6).
func WithConnsPerHost(n int) Option { return func(c *config) { c.connsPerHost = n } }

// WithResetAfter sets how many failures in a row heal a lane (default 2).
func WithResetAfter(n int) Option { return func(c *config) { c.resetAfter = n } }

// WithResetSpacing sets the least person-time between two heals of one lane
// (default 20 s).
func WithResetSpacing(d time.Duration) Option { return func(c *config) { c.resetSpacing = d } }

// WithNotSentAfter sets how long (person-time) a call may wait for a
// connection before its wait counts as "not sent" (default 2 s).
func WithNotSentAfter(d time.Duration) Option { return func(c *config) { c.notSentAfter = d } }

// WithDialTimeout bounds opening one connection (person-time, default 10 s).
func WithDialTimeout(d time.Duration) Option { return func(c *config) { c.dialTimeout = d } }

// WithSharedPool carries every call, the turn's line stream included, on one
// pool of WithConnsPerHost connections: the arrangement that starved control
// traffic. It exists so the lab and the tests can show the difference.
func WithSharedPool() Option { return func(c *config) { c.shared = true } }

// WithPolicy sets how calls of kind k are carried (a new kind or a changed
// timeout). Times are person-time.
func WithPolicy(k Kind, p Policy) Option {
	return func(c *config) {
		if err := p.Validate(); err != nil {
			c.errs = append(c.errs, fmt.Errorf("lanes: policy of kind %q: %w", k, err))
			return
		}
		c.policies[k] = p
	}
}

// WithBaseTransport sets the transport every session is cloned from (TLS
// settings, a dialer). Its connection limits are replaced by the lane's.
func WithBaseTransport(t *http.Transport) Option { return func(c *config) { c.base = t } }

// WithTracerProvider sets where the calls' client spans go (default: the
// global provider).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where pippa.pool.resets and
// pippa.pool.replies_in_flight go (default: the global provider).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithPropagator sets how trace context rides on each call (default: W3C
// Trace Context and Baggage, which the engine reads, whatever the global
// propagator is).
func WithPropagator(p propagation.TextMapPropagator) Option { return func(c *config) { c.prop = p } }

// WithLogger sets where pool resets are logged (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithCallHook is called once at the end of every call (after its span
// ended), for logs and tests. It must not block.
func WithCallHook(f func(CallEnd)) Option { return func(c *config) { c.onCall = f } }

// WithResetHook is called after every pool reset. It must not block.
func WithResetHook(f func(Reset)) Option { return func(c *config) { c.onReset = f } }

// WithInFlightHook is called with +1 when a call starts and -1 when it ends,
// for a live-object registry (pippa.live.replies_in_flight).
func WithInFlightHook(f func(lane string, delta int)) Option {
	return func(c *config) { c.onInFlight = f }
}

// Validate reports every option that cannot work, each with its own error.
func (c *config) Validate() error {
	errs := append([]error(nil), c.errs...)
	if c.scale <= 0 || math.IsNaN(c.scale) || math.IsInf(c.scale, 0) {
		errs = append(errs, fmt.Errorf("lanes: time scale must be a positive number, got %v", c.scale))
	}
	if c.connsPerHost < 1 {
		errs = append(errs, fmt.Errorf("lanes: connections per host must be at least 1, got %d", c.connsPerHost))
	}
	if c.resetAfter < 1 {
		errs = append(errs, fmt.Errorf("lanes: reset-after must be at least 1, got %d", c.resetAfter))
	}
	if c.resetSpacing < 0 {
		errs = append(errs, fmt.Errorf("lanes: reset spacing must not be negative, got %s", c.resetSpacing))
	}
	if c.notSentAfter < 0 {
		errs = append(errs, fmt.Errorf("lanes: not-sent threshold must not be negative, got %s", c.notSentAfter))
	}
	if c.dialTimeout <= 0 {
		errs = append(errs, fmt.Errorf("lanes: dial timeout must be positive, got %s", c.dialTimeout))
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
	if c.prop == nil {
		c.prop = defaultPropagator
	}
	if c.log == nil {
		c.log = slog.Default()
	}
}

// wall converts person-time to wall time.
func (c *config) wall(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.scale)
}

// person converts wall time to person-time.
func (c *config) person(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.scale)
}
