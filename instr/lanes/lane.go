package lanes

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/percause/percause/instr/semconv"
)

// Lane is one pool of connections for one kind of traffic. A pooled lane
// heals itself: after WithResetAfter failures in a row (buffered-reply
// timeouts, stalled or lost streams) among the calls of its current session,
// later calls go to a fresh session (a new http.Transport, new connections)
// while calls in flight finish on the old one. A heal happens at most once
// per WithResetSpacing, is logged, and counts in pippa.pool.resets.
//
// Outcomes of calls on a session that has already been replaced never count
// toward the next heal: those calls belong to the pool that was healed, and
// letting them count is how a heal feeds itself.
type Lane struct {
	c     *Client
	name  string
	fresh bool // every call on a connection of its own (the line stream); never heals

	metricOpts []metric.AddOption
	spanOpts   map[Kind][]trace.SpanStartOption

	mu         sync.Mutex
	cur        *session
	gen        int
	streak     int
	lastReset  time.Time
	suppressed int
	calls      map[*call]struct{} // calls in flight, keyed by the call itself

	resets   atomic.Int64
	inFlight atomic.Int64
}

type session struct {
	gen      int
	tr       *http.Transport
	seq      atomic.Uint64
	inFlight atomic.Int64
	retired  atomic.Bool
	fresh    bool
}

// finished is called when one of the session's calls ended.
func (s *session) finished() {
	if s.fresh {
		s.tr.CloseIdleConnections()
		return
	}
	if s.inFlight.Add(-1) == 0 && s.retired.Load() {
		s.tr.CloseIdleConnections()
	}
}

func (s *session) retire() {
	s.retired.Store(true)
	// Idle connections go now; busy ones when their call ends.
	s.tr.CloseIdleConnections()
}

func newLane(c *Client, name string, fresh bool) *Lane {
	l := &Lane{
		c:          c,
		name:       name,
		fresh:      fresh,
		calls:      make(map[*call]struct{}),
		spanOpts:   make(map[Kind][]trace.SpanStartOption),
		metricOpts: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(semconv.Lane, name)))},
	}
	for k := range c.cfg.policies {
		l.spanOpts[k] = []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String(semconv.Lane, name), attribute.String(semconv.CallKind, string(k)), attribute.Bool(semconv.CallFresh, fresh)),
		}
	}
	if !fresh {
		l.gen = 1
		l.cur = &session{gen: 1, tr: c.newTransport(false)}
	}
	return l
}

// Name is the lane's pippa.lane value.
func (l *Lane) Name() string { return l.name }

// Resets is the lane's pool-reset tally since the launch.
func (l *Lane) Resets() int { return int(l.resets.Load()) }

// Session is the lane's current session: 1 at launch, one more per reset.
func (l *Lane) Session() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gen
}

// RepliesInFlight is the number of calls open on the lane.
func (l *Lane) RepliesInFlight() int { return int(l.inFlight.Load()) }

// Suppressed is how many heals were due but held back by the spacing.
func (l *Lane) Suppressed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.suppressed
}

// Do sends req on this lane with the timeouts of kind, whichever lane the
// kind normally rides (the lab uses it to put traffic where it used to be).
func (l *Lane) Do(req *http.Request, kind Kind) (*http.Response, error) {
	pol, ok := l.c.cfg.policies[kind]
	if !ok {
		return nil, errUnknown(kind)
	}
	return l.do(req, kind, pol)
}

// acquire returns the session a new call rides and counts the call in it.
func (l *Lane) acquire() *session {
	if l.fresh {
		return &session{tr: l.c.newTransport(true), fresh: true}
	}
	l.mu.Lock()
	s := l.cur
	s.inFlight.Add(1)
	l.mu.Unlock()
	return s
}

func (l *Lane) begin(cl *call) {
	l.mu.Lock()
	l.calls[cl] = struct{}{}
	l.mu.Unlock()
	cl.others = int(l.inFlight.Add(1)) - 1
	l.c.inFlight.Add(cl.ctx, 1, l.metricOpts...)
	if f := l.c.cfg.onInFlight; f != nil {
		f(l.name, 1)
	}
}

func (l *Lane) end(cl *call) {
	l.mu.Lock()
	delete(l.calls, cl)
	l.mu.Unlock()
	l.inFlight.Add(-1)
	l.c.inFlight.Add(cl.ctx, -1, l.metricOpts...)
	if f := l.c.cfg.onInFlight; f != nil {
		f(l.name, -1)
	}
}

func (l *Lane) waiting(now time.Time, out []Wait) []Wait {
	min := l.c.cfg.wall(l.c.cfg.notSentAfter)
	open := int(l.inFlight.Load())
	l.mu.Lock()
	defer l.mu.Unlock()
	for cl := range l.calls {
		if cl.sent.Load() != 0 {
			continue
		}
		if d := now.Sub(cl.start); d >= min {
			out = append(out, Wait{Lane: l.name, Kind: cl.kind, For: l.c.cfg.person(d), Others: max(open-1, 0)})
		}
	}
	return out
}

func (l *Lane) closeIdle() {
	l.mu.Lock()
	s := l.cur
	l.mu.Unlock()
	if s != nil {
		s.tr.CloseIdleConnections()
	}
}

// Reset describes one heal of a lane.
type Reset struct {
	Lane string
	// Tally is the lane's resets since the launch, this one included.
	Tally int
	// Session is the new session's number.
	Session int
	// OldInFlight is how many calls were left to finish on the old session.
	OldInFlight int
	// Trigger is the outcome that completed the streak (timeout, stalled, lost).
	Trigger string
	At      time.Time
}

// report feeds a call's outcome to the heal. It returns the reset it caused,
// if any.
func (l *Lane) report(cl *call, outcome string) (Reset, bool) {
	if l.fresh {
		return Reset{}, false
	}
	failure := outcome == semconv.CallOutcomeTimeout || outcome == semconv.CallOutcomeStalled || outcome == semconv.CallOutcomeLost
	if !failure && outcome != semconv.CallOutcomeOK {
		return Reset{}, false // the caller gave up, or the engine refused: says nothing about this pool
	}
	cfg := &l.c.cfg
	l.mu.Lock()
	if cl.sess != l.cur && !cfg.feedRetired {
		// The call rode a session that was already healed away.
		l.mu.Unlock()
		return Reset{}, false
	}
	if !failure {
		l.streak = 0
		l.mu.Unlock()
		return Reset{}, false
	}
	l.streak++
	if l.streak < cfg.resetAfter {
		l.mu.Unlock()
		return Reset{}, false
	}
	now := time.Now()
	if !l.lastReset.IsZero() && now.Sub(l.lastReset) < cfg.wall(cfg.resetSpacing) {
		l.suppressed++
		l.mu.Unlock()
		cfg.log.Info("pool reset held back by spacing", "lane", l.name, "streak", l.streak,
			"since_last", cfg.person(now.Sub(l.lastReset)).String(), "spacing", cfg.resetSpacing.String())
		return Reset{}, false
	}
	old := l.cur
	l.gen++
	l.cur = &session{gen: l.gen, tr: l.c.newTransport(false)}
	l.streak = 0
	l.lastReset = now
	tally := int(l.resets.Add(1))
	r := Reset{Lane: l.name, Tally: tally, Session: l.gen, OldInFlight: int(old.inFlight.Load()) - 1, Trigger: outcome, At: now}
	l.mu.Unlock()
	// The call that triggered the heal is still counted on the old session
	// until it finishes; it is not one of those left to finish.
	r.OldInFlight = max(r.OldInFlight, 0)
	old.retire()
	l.c.resets.Add(cl.ctx, 1, l.metricOpts...)
	cfg.log.Warn("pool reset: fresh session for later calls", "lane", l.name, "tally", tally,
		"session", r.Session, "old_in_flight", r.OldInFlight, "trigger", outcome)
	if f := cfg.onReset; f != nil {
		f(r)
	}
	return r, true
}
