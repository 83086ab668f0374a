package lanes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/percause/percause/instr/semconv"
)

// CallEnd describes one finished call (WithCallHook).
type CallEnd struct {
	Lane    string
	Kind    Kind
	Session int    // the session that carried it (0: a fresh connection of its own)
	Seq     uint64 // its number within that session (never used to route its reply)
	Fresh   bool
	Outcome string // a semconv.CallOutcome* value
	Status  int    // HTTP status (0: no reply)
	// NotSent is how long it was not sent (person-time): waiting for a
	// connection or, with a body, for the engine's first answer
	// (Client.Waiting).
	NotSent time.Duration
	// Duration is from its start to its end (person-time).
	Duration time.Duration
	Err      error
}

var errEarlyClose = errors.New("lanes: body closed before its end")

func errUnknown(k Kind) error { return fmt.Errorf("%w %q", ErrUnknownKind, k) }

// call is one request in flight. It is its own key: the reply reaches the
// caller through the call that asked for it, never through a number.
type call struct {
	lane   *Lane
	sess   *session
	kind   Kind
	pol    Policy
	seq    uint64
	start  time.Time
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	span   trace.Span
	timer  *time.Timer
	wall   time.Duration // the running limit: timeout, header timeout, then idle
	others int
	status int
	req    *http.Request // the caller's request, read for the span's attributes at the end

	// trace and body live in the call so a call costs one allocation, not three.
	trace httptrace.ClientTrace
	body  body

	hasBody  bool         // the request has a body: sent once the engine answers (100 Continue or its reply)
	sent     atomic.Int64 // nanoseconds after start when the engine had the request (0: not yet)
	expired  atomic.Bool
	streamed atomic.Bool // headers of a stream arrived: the idle limit runs
	done     atomic.Bool
}

func (cl *call) expire() {
	cl.expired.Store(true)
	cl.cancel(ErrTimeout)
}

func (cl *call) onGotConn(httptrace.GotConnInfo) { cl.onSent() }

// onSent marks the call sent, once: for a call without a body when it has
// a connection (its request leaves with it), for one with a body when the
// engine's first answer arrives (the 100 Continue its request asked for).
func (cl *call) onSent() {
	d := max(time.Since(cl.start), 1)
	if cl.sent.CompareAndSwap(0, int64(d)) {
		cl.lane.c.noteWait(cl.lane.c.cfg.person(d))
	}
}

func (l *Lane) do(req *http.Request, kind Kind, pol Policy) (*http.Response, error) {
	c := l.c
	if c.closed.Load() {
		return nil, ErrClosed
	}
	s := l.acquire()
	cl := &call{lane: l, sess: s, kind: kind, pol: pol, seq: s.seq.Add(1), start: time.Now(), parent: req.Context()}
	opts := l.spanOpts[kind]
	if opts == nil { // a kind added after the lane was built cannot happen; keep the call traced anyway
		opts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	}
	ctx, span := c.tracer.Start(cl.parent, req.Method, opts...)
	cl.span = span
	cl.req = req
	ctx, cl.cancel = context.WithCancelCause(ctx)
	cl.hasBody = req.Body != nil && req.Body != http.NoBody
	if cl.hasBody {
		cl.trace.GotFirstResponseByte = cl.onSent
	} else {
		cl.trace.GotConn = cl.onGotConn
	}
	cl.ctx = httptrace.WithClientTrace(ctx, &cl.trace)
	if pol.Stream {
		cl.wall = c.cfg.wall(pol.HeaderTimeout)
	} else {
		cl.wall = c.cfg.wall(pol.Timeout)
	}
	r := req.WithContext(cl.ctx)
	if span.SpanContext().IsValid() || cl.hasBody {
		r.Header = req.Header.Clone()
		if r.Header == nil {
			r.Header = make(http.Header)
		}
	}
	if span.SpanContext().IsValid() {
		c.cfg.prop.Inject(cl.ctx, propagation.HeaderCarrier(r.Header))
	}
	if cl.hasBody {
		// The engine says it has the request as soon as it starts reading
		// it; until then the call is not sent (Client.Waiting). The body
		// does not wait for the answer (the transports' ExpectContinueTimeout
		// is 0).
		r.Header.Set("Expect", "100-continue")
	}
	l.begin(cl)
	cl.timer = time.AfterFunc(cl.wall, cl.expire)

	resp, err := s.tr.RoundTrip(r)
	if err != nil {
		err = cl.wrap(err)
		cl.finish(err)
		return nil, err
	}
	now := time.Now()
	c.heard(now)
	cl.status = resp.StatusCode
	if pol.Stream {
		cl.streamed.Store(true)
		cl.wall = c.cfg.wall(pol.Idle)
		cl.timer.Reset(cl.wall)
	}
	cl.body = body{rc: resp.Body, cl: cl}
	resp.Body = &cl.body
	return resp, nil
}

// wrap turns the transport's error into the lanes' own when a limit of the
// call ended it.
func (cl *call) wrap(err error) error {
	if !cl.expired.Load() || contextErr(cl.parent) {
		return err
	}
	c := &cl.lane.c.cfg
	if cl.streamed.Load() {
		return fmt.Errorf("lanes: %s stream on the %s lane silent for %s: %w", cl.kind, cl.lane.name, c.person(cl.wall), ErrStalled)
	}
	return fmt.Errorf("lanes: %s call on the %s lane: no reply within %s: %w", cl.kind, cl.lane.name, c.person(cl.wall), ErrTimeout)
}

func (cl *call) outcome(err error) string {
	switch {
	case err == nil || errors.Is(err, errEarlyClose):
		return semconv.CallOutcomeOK
	case errors.Is(err, ErrStalled):
		return semconv.CallOutcomeStalled
	case errors.Is(err, ErrTimeout):
		return semconv.CallOutcomeTimeout
	case contextErr(cl.parent):
		return semconv.CallOutcomeCanceled
	case cl.pol.Stream && cl.streamed.Load():
		// The stream had begun and its connection broke: the reply was lost.
		return semconv.CallOutcomeLost
	default:
		return semconv.CallOutcomeError
	}
}

// finish ends the call once: its timer, its place in flight, its span, and
// its report to the heal.
func (cl *call) finish(err error) {
	if !cl.done.CompareAndSwap(false, true) {
		return
	}
	cl.timer.Stop()
	end := time.Now()
	l, c := cl.lane, cl.lane.c
	outcome := cl.outcome(err)
	sentAfter := time.Duration(cl.sent.Load())
	if sentAfter == 0 {
		sentAfter = end.Sub(cl.start)
		c.noteWait(c.cfg.person(sentAfter))
	}
	l.end(cl)
	reset, didReset := l.report(cl, outcome)
	cl.sess.finished()
	span := cl.span
	if span.IsRecording() {
		attrs := []attribute.KeyValue{
			attribute.String(semconv.HTTPMethod, cl.req.Method),
			attribute.String(semconv.ServerAddr, cl.req.URL.Hostname()),
			attribute.String(semconv.URLPath, cl.req.URL.Path),
			attribute.String(semconv.CallOutcome, outcome),
			attribute.Float64(semconv.CallNotSent, c.cfg.person(sentAfter).Seconds()),
			attribute.Int(semconv.PoolSession, cl.sess.gen),
			attribute.Int64(semconv.CallSeq, int64(cl.seq)),
			attribute.Int(semconv.CallOthers, cl.others),
			attribute.Int(semconv.HTTPStatus, cl.status),
		}
		if cl.status == 0 { // no reply: no status code, as the HTTP conventions say
			attrs = attrs[:len(attrs)-1]
		}
		span.SetAttributes(attrs...)
		if didReset {
			span.AddEvent(semconv.EventPoolReset, trace.WithAttributes(
				attribute.String(semconv.Lane, reset.Lane),
				attribute.Int(semconv.PoolResetsTally, reset.Tally),
				attribute.Int(semconv.PoolSession, reset.Session),
				attribute.Int(semconv.PoolOldInFlight, reset.OldInFlight),
				attribute.String(semconv.PoolResetTrigger, reset.Trigger),
			))
		}
	}
	if outcome != semconv.CallOutcomeOK {
		span.SetStatus(codes.Error, outcome)
		if err != nil && span.IsRecording() {
			span.RecordError(err)
		}
	} else if cl.status >= 500 {
		span.SetStatus(codes.Error, "")
	}
	span.End()
	cl.cancel(nil)
	if f := c.cfg.onCall; f != nil {
		f(CallEnd{
			Lane: l.name, Kind: cl.kind, Session: cl.sess.gen, Seq: cl.seq, Fresh: cl.sess.fresh,
			Outcome: outcome, Status: cl.status, NotSent: c.cfg.person(sentAfter),
			Duration: c.cfg.person(end.Sub(cl.start)), Err: err,
		})
	}
}

// body follows a reply to its end: every byte is hearing from the engine, a
// stream's idle limit restarts on each read, and the call ends at EOF, on an
// error or when the caller closes it.
type body struct {
	rc io.ReadCloser
	cl *call
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	cl := b.cl
	if n > 0 {
		if cl.pol.Stream {
			cl.timer.Reset(cl.wall)
		}
		cl.lane.c.heard(time.Now())
	}
	if err != nil {
		if err == io.EOF {
			cl.finish(nil)
			return n, err
		}
		err = cl.wrap(err)
		cl.finish(err)
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.cl.finish(errEarlyClose)
	return err
}
