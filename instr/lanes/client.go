package lanes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/percause/percause/instr/linkstatus"
	"github.com/percause/percause/instr/semconv"
)

// Errors a call can end with. Each is wrapped with the call's kind and lane.
var (
	// ErrTimeout: a buffered reply (or a stream's headers) did not arrive
	// within its kind's timeout.
	ErrTimeout = errors.New("lanes: no reply in time")
	// ErrStalled: a byte or line stream went silent beyond its idle limit.
	ErrStalled = errors.New("lanes: stream stalled")
	// ErrUnknownKind: the call's kind has no policy.
	ErrUnknownKind = errors.New("lanes: unknown call kind")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("lanes: client closed")
)

// Client carries the phone's calls to the engine by kind: a control lane, a
// bulk lane and the turn's line stream on a connection of its own. Each pooled
// lane heals itself (see Lane). A Client is meant to live as long as the app
// (one per launch): its pool-reset tally is the launch's.
type Client struct {
	cfg      config
	tracer   trace.Tracer
	resets   metric.Int64Counter
	inFlight metric.Int64UpDownCounter

	control, bulk, stream *Lane
	fresh                 *Lane   // probes on a connection of their own, outside every pool
	lanes                 []*Lane // distinct lanes, in a fixed order

	lastHeard   atomic.Int64 // unix nanoseconds of the last byte from the engine
	longestWait atomic.Int64 // longest not-sent wait (person nanoseconds) since TakeNotSent
	closed      atomic.Bool
}

// New builds a Client. Every option error is reported, none panics.
func New(opts ...Option) (*Client, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.fill()
	c := &Client{cfg: cfg, tracer: cfg.tp.Tracer(ScopeName)}
	meter := cfg.mp.Meter(ScopeName)
	var err error
	c.resets, err = meter.Int64Counter(semconv.MetricPoolResets,
		metric.WithDescription("Pool resets (heals) since the launch, by lane: a fresh session after failures in a row."),
		metric.WithUnit(semconv.UnitResets))
	if err != nil {
		return nil, fmt.Errorf("lanes: counter %s: %w", semconv.MetricPoolResets, err)
	}
	c.inFlight, err = meter.Int64UpDownCounter(semconv.MetricRepliesInFlight,
		metric.WithDescription("Calls whose reply has not ended yet, by lane."),
		metric.WithUnit(semconv.UnitReplies))
	if err != nil {
		return nil, fmt.Errorf("lanes: up-down counter %s: %w", semconv.MetricRepliesInFlight, err)
	}
	if cfg.shared {
		shared := newLane(c, semconv.LaneShared, false)
		c.control, c.bulk, c.stream = shared, shared, shared
		c.lanes = []*Lane{shared}
	} else {
		c.control = newLane(c, semconv.LaneControl, false)
		c.bulk = newLane(c, semconv.LaneBulk, false)
		c.stream = newLane(c, semconv.LaneStream, true)
		c.lanes = []*Lane{c.control, c.bulk, c.stream}
	}
	c.fresh = newLane(c, semconv.LaneFresh, true)
	c.lanes = append(c.lanes, c.fresh)
	return c, nil
}

// Control is the lane of checks, reads, the grant, take tickets and ensure.
func (c *Client) Control() *Lane { return c.control }

// Bulk is the lane of take streams, speech, uploads and downloads.
func (c *Client) Bulk() *Lane { return c.bulk }

// StreamLane carries the turn's line stream, a fresh connection per call.
func (c *Client) StreamLane() *Lane { return c.stream }

// Lane returns the lane named name (semconv.LaneControl, LaneBulk,
// LaneStream, LaneFresh; with WithSharedPool the first three return the
// shared lane).
func (c *Client) Lane(name string) (*Lane, error) {
	switch name {
	case semconv.LaneControl:
		return c.control, nil
	case semconv.LaneBulk:
		return c.bulk, nil
	case semconv.LaneStream:
		return c.stream, nil
	case semconv.LaneFresh:
		return c.fresh, nil
	case semconv.LaneShared:
		if c.cfg.shared {
			return c.control, nil
		}
	}
	return nil, fmt.Errorf("lanes: no lane %q", name)
}

// Policy returns how calls of kind k are carried.
func (c *Client) Policy(k Kind) (Policy, bool) {
	p, ok := c.cfg.policies[k]
	return p, ok
}

// Do sends req on the lane its kind belongs to and returns the reply. The
// reply's body must be read to its end or closed: until then the call counts
// as a reply in flight, and for a buffered kind its timeout still runs.
// Redirects are not followed (HTTPClient follows them).
func (c *Client) Do(req *http.Request, kind Kind) (*http.Response, error) {
	pol, ok := c.cfg.policies[kind]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	l, _ := c.Lane(pol.Lane)
	return l.do(req, kind, pol)
}

// Fetch sends req like Do and reads the whole reply (at most limit bytes; a
// longer reply is an error), all within the kind's timeout.
func (c *Client) Fetch(req *http.Request, kind Kind, limit int64) ([]byte, *http.Response, error) {
	resp, err := c.Do(req, kind)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, resp, err
	}
	if int64(len(data)) > limit {
		return nil, resp, fmt.Errorf("lanes: %s reply longer than %d bytes", kind, limit)
	}
	return data, resp, nil
}

type roundTripper struct {
	c    *Client
	kind Kind
}

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return rt.c.Do(r, rt.kind) }

// RoundTripper returns an http.RoundTripper that carries every request as a
// call of kind k.
func (c *Client) RoundTripper(k Kind) http.RoundTripper { return roundTripper{c, k} }

// HTTPClient returns an *http.Client that carries every request as a call of
// kind k (for code written against net/http). Timeouts come from the kind.
func (c *Client) HTTPClient(k Kind) *http.Client {
	return &http.Client{Transport: roundTripper{c, k}}
}

// Resets is the launch's pool-reset tally, all lanes together. It never
// goes down.
func (c *Client) Resets() int {
	n := 0
	for _, l := range c.lanes {
		n += l.Resets()
	}
	return n
}

// RepliesInFlight is the number of calls open on the named lane.
func (c *Client) RepliesInFlight(lane string) int {
	l, err := c.Lane(lane)
	if err != nil {
		return 0
	}
	return l.RepliesInFlight()
}

// ConnsPerHost is each lane's connection limit.
func (c *Client) ConnsPerHost() int { return c.cfg.connsPerHost }

// LastHeard is when the engine was last heard from on any lane: a reply's
// headers or any byte of a body, streamed words included (zero: never).
func (c *Client) LastHeard() time.Time {
	n := c.lastHeard.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func (c *Client) heard(now time.Time) { c.lastHeard.Store(now.UnixNano()) }

// Wait is a call not sent yet: waiting for a connection, or, for a call with
// a body, for the engine to say it has the request (see Client.Waiting).
type Wait struct {
	Lane string
	Kind Kind
	// For is how long it has waited (person-time).
	For time.Duration
	// Others is how many other calls are open on its lane.
	Others int
}

// Message is the line a waiting call shows: "not sent for 20s (4 other calls open)".
func (w Wait) Message() string {
	return NotSentMessage(w.For, w.Others)
}

// NotSentMessage renders a not-sent wait the way the status line speaks
// (linkstatus.NotSent's words).
func NotSentMessage(d time.Duration, others int) string {
	a := linkstatus.NotSentArgs(d, others)
	return linkstatus.NotSentText(a[linkstatus.ArgFor], a[linkstatus.ArgOthers])
}

// Waiting lists the calls not sent for at least WithNotSentAfter, longest
// first. A call is sent once the engine has heard it, as far as the phone
// can tell: a call without a body when it has a connection (its request
// goes out with it); a call with a body when the engine answers its
// request's "Expect: 100-continue", or answers at all. A post written into
// a kept-alive connection that no longer reaches the engine is therefore
// still not sent, as it is: nothing of it arrived
// (docs/decisions/0107-sent-when-the-engine-hears-it.md).
func (c *Client) Waiting() []Wait {
	now := time.Now()
	var out []Wait
	for _, l := range c.lanes {
		out = l.waiting(now, out)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].For > out[j].For })
	return out
}

// TakeNotSent returns the longest not-sent wait (person-seconds) since the
// previous TakeNotSent, counting calls still waiting, and starts over: the
// reading a turn report carries (Turn.SetNotSent). 0 means no call waited
// WithNotSentAfter or longer.
func (c *Client) TakeNotSent() float64 {
	longest := time.Duration(c.longestWait.Swap(0))
	for _, w := range c.Waiting() {
		longest = max(longest, w.For)
	}
	return longest.Seconds()
}

func (c *Client) noteWait(person time.Duration) {
	if person < c.cfg.notSentAfter {
		return
	}
	for {
		old := c.longestWait.Load()
		if int64(person) <= old || c.longestWait.CompareAndSwap(old, int64(person)) {
			return
		}
	}
}

// Close closes every idle connection and refuses later calls. Calls in
// flight finish.
func (c *Client) Close() error {
	c.closed.Store(true)
	for _, l := range c.lanes {
		l.closeIdle()
	}
	return nil
}

func (c *Client) newTransport(fresh bool) *http.Transport {
	var t *http.Transport
	if c.cfg.base != nil {
		t = c.cfg.base.Clone()
	} else {
		d := &net.Dialer{Timeout: c.cfg.wall(c.cfg.dialTimeout), KeepAlive: 30 * time.Second}
		t = &http.Transport{
			DialContext:         d.DialContext,
			TLSHandshakeTimeout: c.cfg.wall(DefaultDialTimeout),
			IdleConnTimeout:     DefaultIdleConnTimeout,
		}
	}
	// One request per connection (HTTP/1.1), so the six-connection limit
	// means what it means on the phone; see docs/decisions.
	t.ForceAttemptHTTP2 = false
	// A body leaves at once: the engine's 100 Continue is read as its word
	// that it has the request (Waiting), never waited for, so asking for
	// it costs no round trip.
	t.ExpectContinueTimeout = 0
	t.MaxConnsPerHost = c.cfg.connsPerHost
	t.MaxIdleConnsPerHost = c.cfg.connsPerHost
	if fresh {
		t.DisableKeepAlives = true
		t.MaxConnsPerHost = 1
		t.MaxIdleConnsPerHost = -1
	}
	return t
}

// contextErr reports whether the caller's own context ended the call.
func contextErr(ctx context.Context) bool { return ctx.Err() != nil }
