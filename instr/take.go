package instr

import (
	"context"
	"sync"
	"time"

	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// takeTracker knows the takes in flight, engine-wide, for beside.
type takeTracker struct {
	mu     sync.Mutex
	active map[*Take]struct{}
}

// Take is one engine take's report: the span tts.take. Its methods are safe
// for concurrent use.
type Take struct {
	sdk   *SDK
	span  trace.Span
	id    string
	start time.Time
	err   error // set when the take could not start (an empty id)

	guard
	firstByte time.Time
	hasFirst  bool
	produced  float64
	need      float64
	buf       [8]attribute.KeyValue

	beside int // guarded by sdk.takes.mu
}

// StartTake starts a take's span, tts.take, as a child of ctx: pass the
// request's context after Extract so the take lands in the phone's turn trace.
// An empty id is refused, and so is every call of the take it returns.
func (s *SDK) StartTake(ctx context.Context, id string) (context.Context, *Take) {
	if id == "" {
		err := &InputError{"StartTake", "id", id, "empty take id"}
		s.inst.refuse("StartTake", err)
		return ctx, &Take{sdk: s, guard: guard{inst: s.inst}, err: err}
	}
	start := s.now()
	ctx, span := s.tracer.Start(ctx, semconv.SpanTTSTake, trace.WithTimestamp(start))
	t := &Take{sdk: s, guard: guard{inst: s.inst}, span: span, id: id, start: start}
	s.takes.mu.Lock()
	n := len(s.takes.active)
	for o := range s.takes.active {
		o.beside = max(o.beside, n)
	}
	t.beside = n
	s.takes.active[t] = struct{}{}
	s.takes.mu.Unlock()
	return ctx, t
}

// ID is the take's id.
func (t *Take) ID() string { return t.id }

// do is the guard's do, after refusing every call on a take that could
// not start.
func (t *Take) do(call string, f func() error) bool {
	if t.err != nil {
		t.inst.refuse(call, t.err)
		return false
	}
	return t.guard.do(call, f)
}

// FirstByte marks the take's first audio byte, now. Playback of the take is
// assumed to start here, at real time.
func (t *Take) FirstByte() {
	const call = "Take.FirstByte"
	t.do(call, func() error {
		if t.hasFirst {
			return &InputError{call, "first byte", t.firstByte, "already marked"}
		}
		t.firstByte, t.hasFirst = t.sdk.now(), true
		return nil
	})
}

// Progress marks that audioSeconds of audio (cumulative) have been produced,
// now. need is the worst lag of production behind real-time playback from the
// first byte over these marks. A first mark with audio before FirstByte was
// called marks the first byte.
func (t *Take) Progress(audioSeconds float64) {
	const call = "Take.Progress"
	t.do(call, func() error {
		if err := t.checkAudio(call, audioSeconds); err != nil {
			return err
		}
		t.mark(t.sdk.now(), audioSeconds)
		return nil
	})
}

func (t *Take) checkAudio(call string, audio float64) error {
	if err := checkSeconds(call, "audioSeconds", audio); err != nil {
		return err
	}
	if audio < t.produced {
		return &InputError{call, "audioSeconds", audio, "less than the audio already reported (it is cumulative)"}
	}
	return nil
}

func (t *Take) mark(now time.Time, audio float64) {
	t.produced = audio
	if !t.hasFirst {
		if audio <= 0 {
			return
		}
		t.firstByte, t.hasFirst = now, true
	}
	if lag := t.sdk.scaled(now.Sub(t.firstByte)) - audio; lag > t.need {
		t.need = lag
	}
}

// End ends the take with audioSeconds of audio in all and records first byte,
// total, audio, rate (audio seconds per second of making), need and beside.
// Invalid audio still ends the take, with the last valid reading, and is
// refused. Ending twice is refused (ErrEnded).
func (t *Take) End(audioSeconds float64) {
	const call = "Take.End"
	var (
		r     textlines.Take
		ended bool
	)
	t.do(call, func() error {
		t.ended, ended = true, true
		s := t.sdk
		now := s.now()
		inputErr := t.checkAudio(call, audioSeconds)
		if inputErr != nil {
			audioSeconds = t.produced
		}
		if !t.hasFirst {
			t.firstByte, t.hasFirst = now, true
		}
		t.mark(now, audioSeconds)
		r = textlines.Take{ID: t.id, FirstByte: s.scaled(t.firstByte.Sub(t.start)), Total: s.scaled(now.Sub(t.start)),
			Audio: audioSeconds, Need: max(t.need, 0)}
		if r.Total > 0 {
			r.Rate = audioSeconds / r.Total
		}
		s.takes.mu.Lock()
		delete(s.takes.active, t)
		r.Beside = t.beside
		s.takes.mu.Unlock()

		t.span.SetAttributes(append(t.buf[:0],
			attribute.String(semconv.TakeID, t.id),
			attribute.Float64(semconv.TakeFirstByte, r.FirstByte),
			attribute.Float64(semconv.TakeTotal, r.Total),
			attribute.Float64(semconv.TakeAudio, r.Audio),
			attribute.Float64(semconv.TakeRate, r.Rate),
			attribute.Float64(semconv.TakeNeed, r.Need),
			attribute.Int(semconv.TakeBeside, r.Beside),
		)...)
		t.span.End(trace.WithTimestamp(now))
		return inputErr // the take has ended all the same
	})
	if !ended {
		return
	}
	s := t.sdk
	in, ctx := s.inst, context.Background()
	in.takeFirstByte.Record(ctx, r.FirstByte, in.none.rec...)
	in.takeNeed.Record(ctx, r.Need, in.none.rec...)
	in.takeRate.Record(ctx, r.Rate, in.none.rec...)
	in.takeBeside.Record(ctx, int64(r.Beside), in.none.rec...)
	if s.text != nil {
		r.TraceID = t.span.SpanContext().TraceID().String()
		if werr := s.text.WriteTake(&r); werr != nil {
			s.logger.Warn("instr: writing the [tts-take] line", "reason", werr.Error())
		}
	}
}
