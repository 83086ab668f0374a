package instr

import (
	"context"
	"time"

	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Route is the audio session's route. Bluetooth is derived: true when any
// output is a Bluetooth port (semconv.BluetoothPortPrefix).
type Route struct {
	Inputs, Outputs []string
	SampleRate      float64
	Category, Mode  string
}

// Health is the process and device state at the turn.
type Health struct {
	DeviceUptime, AppUptime float64 // seconds
	Activations             int     // audio-session activations since launch
	Memory                  int64   // bytes
}

// Listen is the microphone-open stages, in seconds.
type Listen struct {
	Grant, Session, Total float64
}

// Unit is one unit read aloud. Start and End are wall times (zero End: now;
// zero Start: End); the rest is taken as given (the caller scales lab time).
type Unit struct {
	Index     int    // from 1; 0 numbers it after the turn's previous unit
	TakeID    string // the take it played
	Gap       float64
	Lead      float64 // negative: queued after the previous unit had ended
	Underruns int
	Silent    float64
	Longest   float64
	Cushion   float64
	Player    string
	Start     time.Time
	End       time.Time
}

// Precomputed attribute keys of the live counts.
var liveKeys, liveBeforeKeys = func() (now, before [numKinds]string) {
	for i, k := range semconv.LiveKinds {
		now[i], before[i] = semconv.LiveAttr(k), semconv.LiveBeforeAttr(k)
	}
	return now, before
}()

// Turn is one voice turn's report: the root span voice.turn and what is
// recorded on it. Its methods are safe for concurrent use.
type Turn struct {
	sdk   *SDK
	ctx   context.Context
	span  trace.Span
	index int
	start time.Time

	guard
	linkType, linkSubtype string
	route                 Route
	hasRoute              bool
	health                Health
	hasHealth             bool
	listen                Listen
	hasListen             bool
	rpmLoaded, rpmFresh   float64
	hasRPM                bool
	speechEndToPost       float64
	hasSpeechEndToPost    bool
	notSent               float64
	stutter               bool
	poolResets            int
	hasPoolResets         bool
	routeChanges          int
	changes               []textlines.RouteChange // for the text line, when one is written
	units                 int
	lastUnit              int
	lines                 []textlines.Unit // kept only when a text log is set
	buf                   [64]attribute.KeyValue
}

// StartTurn starts a voice turn: a new trace whose root span is voice.turn.
// Its index is the number of turns started since the launch, from 1. Use the
// returned context for the turn's outgoing calls so they carry its
// traceparent.
func (s *SDK) StartTurn(ctx context.Context) (context.Context, *Turn) {
	start := s.now()
	ctx, span := s.tracer.Start(ctx, semconv.SpanVoiceTurn, trace.WithNewRoot(), trace.WithTimestamp(start))
	t := &Turn{sdk: s, guard: guard{inst: s.inst}, ctx: ctx, span: span, index: int(s.turns.Add(1)), start: start}
	return ctx, t
}

// Index is the turn's number within the launch, from 1.
func (t *Turn) Index() int { return t.index }

// Context is the turn's context (carrying its span).
func (t *Turn) Context() context.Context { return t.ctx }

// TraceID is the turn's trace ID in hex.
func (t *Turn) TraceID() string { return t.span.SpanContext().TraceID().String() }

// SetLink records network.connection.type (semconv.LinkWifi, LinkCell, …) and
// network.connection.subtype (lte, nr, … or "").
func (t *Turn) SetLink(typ, subtype string) {
	const call = "Turn.SetLink"
	t.do(call, func() error {
		if typ == "" {
			return &InputError{call, "typ", typ, "empty (use semconv.LinkUnknown)"}
		}
		t.linkType, t.linkSubtype = typ, subtype
		return nil
	})
}

// SetRoute records the audio route.
func (t *Turn) SetRoute(r Route) {
	const call = "Turn.SetRoute"
	t.do(call, func() error {
		if err := checkSeconds(call, "SampleRate", r.SampleRate); err != nil {
			return err
		}
		r.Inputs = append([]string(nil), r.Inputs...)
		r.Outputs = append([]string(nil), r.Outputs...)
		t.route, t.hasRoute = r, true
		return nil
	})
}

// Bluetooth reports whether any output is a Bluetooth port.
func Bluetooth(outputs []string) bool { return semconv.Bluetooth(outputs) }

// RouteChange records a route change while she reads: at is seconds since she
// began reading, reason one of semconv.RouteReasons (others are kept on the
// span and counted as "other" in the metric), outputs the new outputs.
func (t *Turn) RouteChange(at float64, reason string, outputs []string) {
	const call = "Turn.RouteChange"
	if reason == "" {
		reason = semconv.RouteReasonUnknown
	}
	ok := t.do(call, func() error {
		if err := checkSeconds(call, "at", at); err != nil {
			return err
		}
		t.span.AddEvent(semconv.EventRouteChange, trace.WithTimestamp(t.sdk.now()), trace.WithAttributes(
			attribute.Float64(semconv.RouteChangeAt, at),
			attribute.String(semconv.RouteChangeReason, reason),
			attribute.StringSlice(semconv.RouteOutputs, outputs),
		))
		t.routeChanges++
		if t.sdk.text != nil && len(t.changes) < textlines.MaxChanges {
			t.changes = append(t.changes, textlines.RouteChange{At: at, Reason: reason, Outputs: append([]string(nil), outputs...)})
		}
		return nil
	})
	if ok {
		t.sdk.inst.routeChanges.Add(context.Background(), 1, t.sdk.inst.reason(reason).add...)
	}
}

// SetHealth records device and app uptime, audio-session activations and memory.
func (t *Turn) SetHealth(h Health) {
	const call = "Turn.SetHealth"
	t.do(call, func() error {
		if err := firstError(
			checkSeconds(call, "DeviceUptime", h.DeviceUptime),
			checkSeconds(call, "AppUptime", h.AppUptime),
			checkCount(call, "Activations", h.Activations),
		); err != nil {
			return err
		}
		if h.Memory < 0 {
			return &InputError{call, "Memory", h.Memory, "negative byte count"}
		}
		t.health, t.hasHealth = h, true
		return nil
	})
}

// SetListen records the microphone-open stages.
func (t *Turn) SetListen(l Listen) {
	const call = "Turn.SetListen"
	t.do(call, func() error {
		if err := firstError(
			checkSeconds(call, "Grant", l.Grant),
			checkSeconds(call, "Session", l.Session),
			checkSeconds(call, "Total", l.Total),
		); err != nil {
			return err
		}
		t.listen, t.hasListen = l, true
		return nil
	})
}

// SetRPM records the control round trip on the loaded lane and on a fresh
// connection, in seconds.
func (t *Turn) SetRPM(loaded, fresh float64) {
	const call = "Turn.SetRPM"
	t.do(call, func() error {
		if err := firstError(checkSeconds(call, "loaded", loaded), checkSeconds(call, "fresh", fresh)); err != nil {
			return err
		}
		t.rpmLoaded, t.rpmFresh, t.hasRPM = loaded, fresh, true
		return nil
	})
}

// SetSpeechEndToPost records the seconds from the end of speech to the post
// leaving the phone.
func (t *Turn) SetSpeechEndToPost(seconds float64) {
	const call = "Turn.SetSpeechEndToPost"
	t.do(call, func() error {
		if err := checkSeconds(call, "seconds", seconds); err != nil {
			return err
		}
		t.speechEndToPost, t.hasSpeechEndToPost = seconds, true
		return nil
	})
}

// SetNotSent records the longest "not sent for N s" wait shown during the
// turn (0: none). Calling it again keeps the longest.
func (t *Turn) SetNotSent(seconds float64) {
	const call = "Turn.SetNotSent"
	t.do(call, func() error {
		if err := checkSeconds(call, "seconds", seconds); err != nil {
			return err
		}
		t.notSent = max(t.notSent, seconds)
		return nil
	})
}

// MarkStutter records that the listener marked this turn as breaking up.
func (t *Turn) MarkStutter() {
	t.do("Turn.MarkStutter", func() error {
		t.stutter = true
		return nil
	})
}

// SetPoolResets records the launch's pool-reset tally now. The SDK adds the
// tally at the end of the previous turn itself. Without a call, End reads
// WithPoolResets' function, if any.
func (t *Turn) SetPoolResets(now int) {
	const call = "Turn.SetPoolResets"
	t.do(call, func() error {
		if err := checkCount(call, "now", now); err != nil {
			return err
		}
		t.poolResets, t.hasPoolResets = now, true
		return nil
	})
}

// Unit records one unit read aloud as a voice.unit child span.
func (t *Turn) Unit(u Unit) {
	const call = "Turn.Unit"
	var link attrOpts
	ok := t.do(call, func() error {
		if err := t.checkUnit(&u); err != nil {
			return err
		}
		if u.Index == 0 {
			u.Index = t.lastUnit + 1
		}
		t.lastUnit = u.Index
		t.units++
		kv := append(t.buf[:0],
			attribute.Int(semconv.UnitIndex, u.Index),
			attribute.String(semconv.TakeID, u.TakeID),
			attribute.Float64(semconv.UnitGap, u.Gap),
			attribute.Float64(semconv.UnitLead, u.Lead),
			attribute.Int(semconv.UnitUnderruns, u.Underruns),
			attribute.Float64(semconv.UnitSilent, u.Silent),
			attribute.Float64(semconv.UnitLongest, u.Longest),
			attribute.Float64(semconv.UnitCushion, u.Cushion),
		)
		if u.Player != "" {
			kv = append(kv, attribute.String(semconv.UnitPlayer, u.Player))
		}
		_, sp := t.sdk.tracer.Start(t.ctx, semconv.SpanVoiceUnit, trace.WithTimestamp(u.Start), trace.WithAttributes(kv...))
		sp.End(trace.WithTimestamp(u.End))
		if t.sdk.text != nil {
			t.lines = append(t.lines, textlines.Unit{Index: u.Index, TakeID: u.TakeID, Gap: u.Gap, Lead: u.Lead,
				Underruns: u.Underruns, Silent: u.Silent, Cushion: u.Cushion})
		}
		link = t.sdk.inst.link(t.linkType)
		return nil
	})
	if !ok {
		return
	}
	in, ctx := t.sdk.inst, context.Background()
	if u.Underruns > 0 {
		in.underruns.Add(ctx, int64(u.Underruns), link.add...)
	}
	in.silence.Record(ctx, u.Silent, link.rec...)
	in.unitLead.Record(ctx, u.Lead, link.rec...)
	in.cushion.Record(ctx, u.Cushion, link.rec...)
}

// firstError is the first non-nil error of a setter's checks.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *Turn) checkUnit(u *Unit) error {
	const call = "Turn.Unit"
	if u.Index < 0 {
		return &InputError{call, "Index", u.Index, "negative index"}
	}
	for _, c := range []struct {
		f string
		v float64
	}{{"Gap", u.Gap}, {"Silent", u.Silent}, {"Longest", u.Longest}, {"Cushion", u.Cushion}} {
		if err := checkSeconds(call, c.f, c.v); err != nil {
			return err
		}
	}
	if err := checkFinite(call, "Lead", u.Lead); err != nil {
		return err
	}
	if err := checkCount(call, "Underruns", u.Underruns); err != nil {
		return err
	}
	if u.Longest > u.Silent+1e-9 {
		return &InputError{call, "Longest", u.Longest, "longer than the unit's silent seconds"}
	}
	if u.End.IsZero() {
		u.End = t.sdk.now()
	}
	if u.Start.IsZero() {
		u.Start = u.End
	}
	if u.End.Before(u.Start) {
		return &InputError{call, "End", u.End, "before the unit's start"}
	}
	if u.Start.Before(t.start) {
		return &InputError{call, "Start", u.Start, "before the turn started at " + t.start.Format(time.RFC3339Nano)}
	}
	return nil
}

// End ends the turn: it reads the live counts and the pool-reset tally, adds
// the launch's history (the counts at the end of up to 3 earlier turns, the
// tally at the end of the previous one), ends the span, records the turn's
// metrics and writes the [voice-turn] line. Ending twice is refused (ErrEnded).
func (t *Turn) End() {
	var line *textlines.Turn
	t.do("Turn.End", func() error {
		t.ended = true
		r := t.read()
		t.span.SetAttributes(t.attributes(&r)...)
		t.span.End(trace.WithTimestamp(r.now))
		t.recordMetrics(&r)
		if t.sdk.text != nil {
			line = t.textLine(&r)
		}
		return nil
	})
	if line != nil {
		if err := t.sdk.text.WriteTurn(line); err != nil {
			t.sdk.logger.Warn("instr: writing the [voice-turn] line", "reason", err.Error())
		}
	}
}

// endReadings is what a turn reads once, as it ends: the end time, the live
// counts now and at the end of the launch's earlier turns, and the
// pool-reset tally now and at the end of the previous turn.
type endReadings struct {
	now         time.Time
	live        [numKinds]int64
	before      [numKinds][]int64 // each kind's counts, oldest first; nil on a launch's first turn
	pool        int
	hasPool     bool
	poolPrev    int
	hasPoolPrev bool
	bluetooth   bool
}

// read takes the turn's end readings and moves the launch's history on.
func (t *Turn) read() endReadings {
	s := t.sdk
	r := endReadings{now: s.now(), live: s.live.snapshot(), pool: t.poolResets, hasPool: t.hasPoolResets}
	if !r.hasPool && s.cfg.poolResets != nil {
		r.pool, r.hasPool = s.cfg.poolResets(), true
	}
	r.before, r.poolPrev, r.hasPoolPrev = s.history.rotate(r.live, r.pool, r.hasPool)
	r.bluetooth = t.hasRoute && Bluetooth(t.route.Outputs)
	return r
}

// rotate returns each kind's counts at the end of the turns it remembers
// (oldest first, nil when it remembers none) and the previous turn's
// tally, then remembers this turn's counts (keeping the last
// semconv.LiveHistory) and tally.
func (h *history) rotate(live [numKinds]int64, pool int, hasPool bool) (before [numKinds][]int64, poolPrev int, hasPoolPrev bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.live); n > 0 {
		backing := make([]int64, numKinds*n)
		for k := range numKinds {
			series := backing[k*n : (k+1)*n : (k+1)*n]
			for j, counts := range h.live {
				series[j] = counts[k]
			}
			before[k] = series
		}
	}
	poolPrev, hasPoolPrev = h.poolPrev, h.hasPoolPrev
	if len(h.live) == semconv.LiveHistory {
		copy(h.live, h.live[1:])
		h.live[len(h.live)-1] = live
	} else {
		h.live = append(h.live, live)
	}
	h.poolPrev, h.hasPoolPrev = pool, hasPool
	return before, poolPrev, hasPoolPrev
}

// attributes are the voice.turn span's attributes at its end, in the
// turn's own buffer.
func (t *Turn) attributes(r *endReadings) []attribute.KeyValue {
	kv := append(t.buf[:0],
		attribute.Int(semconv.TurnIndex, t.index),
		attribute.Bool(semconv.TurnStutter, t.stutter),
		attribute.Int(semconv.TurnUnits, t.units),
		attribute.Float64(semconv.TurnNotSent, t.notSent),
	)
	if t.linkType != "" {
		kv = append(kv, attribute.String(semconv.NetworkConnectionType, t.linkType))
		if t.linkSubtype != "" {
			kv = append(kv, attribute.String(semconv.NetworkConnectionSubtype, t.linkSubtype))
		}
	}
	if t.hasRoute {
		kv = append(kv,
			attribute.StringSlice(semconv.RouteInputs, t.route.Inputs),
			attribute.StringSlice(semconv.RouteOutputs, t.route.Outputs),
			attribute.Bool(semconv.RouteBluetooth, r.bluetooth),
			attribute.Float64(semconv.RouteSampleRate, t.route.SampleRate),
			attribute.String(semconv.RouteCategory, t.route.Category),
			attribute.String(semconv.RouteMode, t.route.Mode),
		)
	}
	if t.hasHealth {
		kv = append(kv,
			attribute.Float64(semconv.HealthDeviceUptime, t.health.DeviceUptime),
			attribute.Float64(semconv.HealthAppUptime, t.health.AppUptime),
			attribute.Int(semconv.HealthActivations, t.health.Activations),
			attribute.Int64(semconv.HealthMemory, t.health.Memory),
		)
	}
	for k := range numKinds {
		kv = append(kv, attribute.Int64(liveKeys[k], r.live[k]))
		if r.before[k] != nil {
			kv = append(kv, attribute.Int64Slice(liveBeforeKeys[k], r.before[k]))
		}
	}
	if r.hasPool {
		kv = append(kv, attribute.Int(semconv.PoolResets, r.pool))
		if r.hasPoolPrev {
			kv = append(kv, attribute.Int(semconv.PoolResetsBefore, r.poolPrev))
		}
	}
	if t.hasListen {
		kv = append(kv,
			attribute.Float64(semconv.ListenGrant, t.listen.Grant),
			attribute.Float64(semconv.ListenSession, t.listen.Session),
			attribute.Float64(semconv.ListenTotal, t.listen.Total),
		)
	}
	if t.hasRPM {
		kv = append(kv, attribute.Float64(semconv.RPMLoaded, t.rpmLoaded), attribute.Float64(semconv.RPMFresh, t.rpmFresh))
	}
	if t.hasSpeechEndToPost {
		kv = append(kv, attribute.Float64(semconv.TurnSpeechEndPost, t.speechEndToPost))
	}
	return kv
}

// recordMetrics records the turn's own metrics (the units recorded theirs).
func (t *Turn) recordMetrics(r *endReadings) {
	in, ctx := t.sdk.inst, context.Background()
	link := in.link(t.linkType)
	in.turns.Add(ctx, 1, in.turnAttrs(t.linkType, r.bluetooth).add...)
	in.notSent.Record(ctx, t.notSent, link.rec...)
	if t.hasSpeechEndToPost {
		in.speechEndToPost.Record(ctx, t.speechEndToPost, link.rec...)
	}
	if t.hasListen {
		in.listenOpen.Record(ctx, t.listen.Grant, in.byStage[0].rec...)
		in.listenOpen.Record(ctx, t.listen.Session, in.byStage[1].rec...)
		in.listenOpen.Record(ctx, t.listen.Total, in.byStage[2].rec...)
	}
	if t.hasHealth {
		in.deviceUptime.Record(ctx, t.health.DeviceUptime, in.none.rec...)
		in.appUptime.Record(ctx, t.health.AppUptime, in.none.rec...)
		in.memory.Record(ctx, t.health.Memory, in.none.rec...)
	}
}

// textLine is the turn's [voice-turn] line.
func (t *Turn) textLine(r *endReadings) *textlines.Turn {
	line := &textlines.Turn{TraceID: t.TraceID(), Units: t.lines, TurnValues: textlines.TurnValues{
		Index: t.index, LinkType: t.linkType, LinkSubtype: t.linkSubtype,
		Inputs: t.route.Inputs, Outputs: t.route.Outputs, Bluetooth: r.bluetooth, SampleRate: t.route.SampleRate,
		RouteChanges: t.routeChanges, Changes: t.changes, Stutter: t.stutter,
		ListenGrant: t.listen.Grant, ListenSession: t.listen.Session, ListenTotal: t.listen.Total,
		RPMLoaded: t.rpmLoaded, RPMFresh: t.rpmFresh, SpeechEndToPost: t.speechEndToPost, NotSent: t.notSent,
		PoolResets: r.pool, PoolResetsBefore: r.poolPrev, HasPoolResets: r.hasPool, HasPoolPrior: r.hasPool && r.hasPoolPrev,
		DeviceUptime: t.health.DeviceUptime, AppUptime: t.health.AppUptime,
		Activations: t.health.Activations, Memory: t.health.Memory,
	}}
	line.Live = make([]textlines.Live, numKinds)
	for k, kind := range semconv.LiveKinds {
		l := textlines.Live{Kind: kind, Now: int(r.live[k])}
		for _, v := range r.before[k] {
			l.Before = append(l.Before, int(v))
		}
		line.Live[k] = l
	}
	return line
}
