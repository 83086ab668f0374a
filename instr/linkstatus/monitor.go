package linkstatus

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/percause/percause/instr/semconv"
)

// Monitor keeps the warnings' state and decides the one line the status
// shows: the link's (Update) and the waits' (Show, Clear). Every change of
// the shown status is recorded: a span pippa.link.status (child of the
// context given, so it lands in the turn's trace) carrying the readings that
// chose it and what the line last said before, an event of the same name on
// the context's span, and the counter
// pippa.link.status_changes{pippa.link.status}.
type Monitor struct {
	cfg     config
	tracer  trace.Tracer
	changes metric.Int64Counter
	sets    map[string][]metric.AddOption

	mu        sync.Mutex
	unhealthy map[*Warnable]unhealthy
	shown     Line
}

type unhealthy struct {
	since time.Time
	args  Args
}

// NewMonitor builds a Monitor showing OK.
func NewMonitor(opts ...Option) (*Monitor, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.fill()
	m := &Monitor{
		cfg:       cfg,
		tracer:    cfg.tp.Tracer(ScopeName),
		unhealthy: map[*Warnable]unhealthy{},
		shown:     OK,
		sets:      map[string][]metric.AddOption{},
	}
	var err error
	m.changes, err = cfg.mp.Meter(ScopeName).Int64Counter(semconv.MetricLinkStatus,
		metric.WithDescription("Changes of the link status the phone shows, by the status changed to."),
		metric.WithUnit(semconv.UnitChanges))
	if err != nil {
		return nil, fmt.Errorf("linkstatus: counter %s: %w", semconv.MetricLinkStatus, err)
	}
	for _, s := range semconv.LinkStatuses {
		m.sets[s] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(semconv.LinkStatus, s)))}
	}
	return m, nil
}

// SetUnhealthy marks w unhealthy with args (keeping the time it first became
// so, which TimeToVisible counts from).
func (m *Monitor) SetUnhealthy(w *Warnable, args Args) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setUnhealthy(w, args)
}

func (m *Monitor) setUnhealthy(w *Warnable, args Args) {
	u, ok := m.unhealthy[w]
	if !ok {
		u.since = m.cfg.now()
	}
	u.args = args
	m.unhealthy[w] = u
}

// SetHealthy marks w healthy.
func (m *Monitor) SetHealthy(w *Warnable) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.unhealthy, w)
}

// Visible lists the lines that may show now: unhealthy for at least their
// TimeToVisible, with nothing they depend on visible; preferred first.
func (m *Monitor) Visible() []Line {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.visible(m.cfg.now())
}

func (m *Monitor) visible(now time.Time) []Line {
	var out []Line
	for _, w := range Warnables() {
		u, ok := m.unhealthy[w]
		if !ok || now.Sub(u.since) < m.cfg.wall(w.TimeToVisible) {
			continue
		}
		// A dependent hides only behind a dependency that is itself shown:
		// while "offline" waits out its TimeToVisible, "Connection lost.
		// Checking why…" keeps the line instead of an empty one.
		hidden := false
		for _, d := range w.DependsOn {
			if du, bad := m.unhealthy[d]; bad && now.Sub(du.since) >= m.cfg.wall(d.TimeToVisible) {
				hidden = true
				break
			}
		}
		if !hidden {
			out = append(out, w.line(u.args))
		}
	}
	return out
}

// Line is the line shown now (as of the last Update).
func (m *Monitor) Line() Line {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shown
}

// Update feeds the Reconnecting verdict and, when the link looks lost, the
// probes (nil: the link is not in question), and returns the line to show.
func (m *Monitor) Update(ctx context.Context, v Verdict, p *Probes) Line {
	m.mu.Lock()
	if v.Show {
		m.setUnhealthy(ReconnectingWarnable, Args{
			ArgCheck:      v.Readings.Check,
			ArgFailingFor: Seconds(v.Readings.FailingFor),
			ArgFailures:   strconv.Itoa(v.Readings.Failures),
		})
	} else {
		delete(m.unhealthy, ReconnectingWarnable)
	}
	var chosen *Warnable
	var args Args
	if p != nil {
		chosen, args = diagnose(*p)
	}
	for _, w := range lostLink {
		switch {
		case w == chosen:
			m.setUnhealthy(w, args)
		case w == ConnectionLost && chosen != nil:
			// The link is in question: "Checking why…" stays behind whatever
			// the probes chose, so the line never reads OK while a
			// diagnosis waits out its TimeToVisible.
			m.setUnhealthy(w, nil)
		default:
			delete(m.unhealthy, w)
		}
	}
	return m.show(ctx, linkReadings(v, p))
}

// Show marks the wait w as what the phone waits on now, with args (calling
// it again updates them: "not sent for 3s", then "4s"), and returns the line
// shown. A change of the line is recorded with readings: what the wait is
// on, for how long, what its probe found.
func (m *Monitor) Show(ctx context.Context, w *Warnable, args Args, readings ...attribute.KeyValue) Line {
	m.mu.Lock()
	m.setUnhealthy(w, args)
	return m.show(ctx, readings)
}

// Clear ends the wait w and returns the line shown; a change is recorded
// with readings (the wait's last: how long it lasted in all).
func (m *Monitor) Clear(ctx context.Context, w *Warnable, readings ...attribute.KeyValue) Line {
	m.mu.Lock()
	delete(m.unhealthy, w)
	return m.show(ctx, readings)
}

// show decides the line with m.mu held, releases it, and records a change
// of the line (its status, or what a wait is on) with the readings that
// chose it. The message of a line that stays is kept current, so the next
// change can say what it last showed.
func (m *Monitor) show(ctx context.Context, readings []attribute.KeyValue) Line {
	line := OK
	if vis := m.visible(m.cfg.now()); len(vis) > 0 {
		line = vis[0]
	}
	prev := m.shown
	m.shown = line
	m.mu.Unlock()

	if line.changed(prev) {
		m.record(ctx, prev, line, readings)
	}
	return line
}

// linkReadings are the readings an Update chose the line from: the
// Reconnecting verdict's and, when the link was in question, the probes'.
func linkReadings(v Verdict, p *Probes) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String(semconv.LinkCheck, v.Readings.Check),
		attribute.Int(semconv.LinkFailures, v.Readings.Failures),
		attribute.Float64(semconv.LinkFailingFor, v.Readings.FailingFor.Seconds()),
		attribute.Float64(semconv.LinkQuietFor, v.Readings.QuietFor.Seconds()),
	}
	if p != nil {
		attrs = append(attrs,
			attribute.Bool(semconv.LinkProbed, p.Probed),
			attribute.Bool(semconv.LinkDeviceOnline, p.DeviceOnline),
			attribute.Int(semconv.LinkFrontStatus, p.FrontStatus),
			attribute.Bool(semconv.LinkOtherAnswered, p.OtherAnswered),
			attribute.String(semconv.Lane, p.Lane),
			attribute.Int(semconv.LinkLaneInFlight, p.InFlight),
			attribute.Int(semconv.LinkLaneLimit, p.Limit),
			attribute.Bool(semconv.LinkPoolProbed, p.PoolProbed),
			attribute.Int(semconv.LinkPoolStatus, p.PoolStatus),
		)
	}
	return attrs
}

func (m *Monitor) record(ctx context.Context, prev, line Line, readings []attribute.KeyValue) {
	attrs := append([]attribute.KeyValue{
		attribute.String(semconv.LinkStatus, line.Status),
		attribute.String(semconv.LinkPrevious, prev.Status),
		attribute.String(semconv.LinkCode, string(line.Code)),
		attribute.String(semconv.LinkStatusMessage, line.Message),
		attribute.String(semconv.LinkPreviousMessage, prev.Message),
	}, readings...)
	if line.Advice != "" {
		attrs = append(attrs, attribute.String(semconv.LinkAdvice, line.Advice))
	}
	_, span := m.tracer.Start(ctx, semconv.SpanLinkStatus, trace.WithAttributes(attrs...))
	span.End()
	trace.SpanFromContext(ctx).AddEvent(semconv.EventLinkStatus, trace.WithAttributes(
		attribute.String(semconv.LinkStatus, line.Status),
		attribute.String(semconv.LinkStatusMessage, line.Message),
	))
	opts, ok := m.sets[line.Status]
	if !ok {
		opts = []metric.AddOption{metric.WithAttributes(attribute.String(semconv.LinkStatus, line.Status))}
	}
	m.changes.Add(ctx, 1, opts...)
	if f := m.cfg.onLine; f != nil {
		f(line)
	}
}
