package instr

import (
	"context"
	"strings"
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
func (t *Turn) SetLink(typ, subtype string) error {
	if err := t.lock("Turn.SetLink"); err != nil {
		return err
	}
	if typ == "" {
		return t.refuse("Turn.SetLink", &InputError{"Turn.SetLink", "typ", typ, "empty (use semconv.LinkUnknown)"})
	}
	t.linkType, t.linkSubtype = typ, subtype
	t.mu.Unlock()
	return nil
}

// SetRoute records the audio route.
func (t *Turn) SetRoute(r Route) error {
	const call = "Turn.SetRoute"
	if err := t.lock(call); err != nil {
		return err
	}
	if err := checkSeconds(call, "SampleRate", r.SampleRate); err != nil {
		return t.refuse(call, err)
	}
	r.Inputs = append([]string(nil), r.Inputs...)
	r.Outputs = append([]string(nil), r.Outputs...)
	t.route, t.hasRoute = r, true
	t.mu.Unlock()
	return nil
}

// Bluetooth reports whether any output is a Bluetooth port.
func Bluetooth(outputs []string) bool {
	for _, o := range outputs {
		if strings.HasPrefix(o, semconv.BluetoothPortPrefix) {
			return true
		}
	}
	return false
}

// RouteChange records a route change while she reads: at is seconds since she
// began reading, reason one of semconv.RouteReasons (others are kept on the
// span and counted as "other" in the metric), outputs the new outputs.
func (t *Turn) RouteChange(at float64, reason string, outputs []string) error {
	const call = "Turn.RouteChange"
	if err := t.lock(call); err != nil {
		return err
	}
	if err := checkSeconds(call, "at", at); err != nil {
		return t.refuse(call, err)
	}
	if reason == "" {
		reason = semconv.RouteReasonUnknown
	}
	t.span.AddEvent(semconv.EventRouteChange, trace.WithTimestamp(t.sdk.now()), trace.WithAttributes(
		attribute.Float64(semconv.RouteChangeAt, at),
		attribute.String(semconv.RouteChangeReason, reason),
		attribute.StringSlice(semconv.RouteOutputs, outputs),
	))
	t.routeChanges++
	t.mu.Unlock()
	t.sdk.inst.routeChanges.Add(context.Background(), 1, t.sdk.inst.reason(reason).add...)
	return nil
}

// SetHealth records device and app uptime, audio-session activations and memory.
func (t *Turn) SetHealth(h Health) error {
	const call = "Turn.SetHealth"
	if err := t.lock(call); err != nil {
		return err
	}
	for _, c := range []error{
		checkSeconds(call, "DeviceUptime", h.DeviceUptime),
		checkSeconds(call, "AppUptime", h.AppUptime),
		checkCount(call, "Activations", h.Activations),
	} {
		if c != nil {
			return t.refuse(call, c)
		}
	}
	if h.Memory < 0 {
		return t.refuse(call, &InputError{call, "Memory", h.Memory, "negative byte count"})
	}
	t.health, t.hasHealth = h, true
	t.mu.Unlock()
	return nil
}

// SetListen records the microphone-open stages.
func (t *Turn) SetListen(l Listen) error {
	const call = "Turn.SetListen"
	if err := t.lock(call); err != nil {
		return err
	}
	for _, c := range []error{
		checkSeconds(call, "Grant", l.Grant),
		checkSeconds(call, "Session", l.Session),
		checkSeconds(call, "Total", l.Total),
	} {
		if c != nil {
			return t.refuse(call, c)
		}
	}
	t.listen, t.hasListen = l, true
	t.mu.Unlock()
	return nil
}

// SetRPM records the control round trip on the loaded lane and on a fresh
// connection, in seconds.
func (t *Turn) SetRPM(loaded, fresh float64) error {
	const call = "Turn.SetRPM"
	if err := t.lock(call); err != nil {
		return err
	}
	if err := checkSeconds(call, "loaded", loaded); err != nil {
		return t.refuse(call, err)
	}
	if err := checkSeconds(call, "fresh", fresh); err != nil {
		return t.refuse(call, err)
	}
	t.rpmLoaded, t.rpmFresh, t.hasRPM = loaded, fresh, true
	t.mu.Unlock()
	return nil
}

// SetSpeechEndToPost records the seconds from the end of speech to the post
// leaving the phone.
func (t *Turn) SetSpeechEndToPost(seconds float64) error {
	const call = "Turn.SetSpeechEndToPost"
	if err := t.lock(call); err != nil {
		return err
	}
	if err := checkSeconds(call, "seconds", seconds); err != nil {
		return t.refuse(call, err)
	}
	t.speechEndToPost, t.hasSpeechEndToPost = seconds, true
	t.mu.Unlock()
	return nil
}

// SetNotSent records the longest "not sent for N s" wait shown during the
// turn (0: none). Calling it again keeps the longest.
func (t *Turn) SetNotSent(seconds float64) error {
	const call = "Turn.SetNotSent"
	if err := t.lock(call); err != nil {
		return err
	}
	if err := checkSeconds(call, "seconds", seconds); err != nil {
		return t.refuse(call, err)
	}
	t.notSent = max(t.notSent, seconds)
	t.mu.Unlock()
	return nil
}

// MarkStutter records that the listener marked this turn as breaking up.
func (t *Turn) MarkStutter() error {
	if err := t.lock("Turn.MarkStutter"); err != nil {
		return err
	}
	t.stutter = true
	t.mu.Unlock()
	return nil
}

// SetPoolResets records the launch's pool-reset tally now. The SDK adds the
// tally at the end of the previous turn itself. Without a call, End reads
// WithPoolResets' function, if any.
func (t *Turn) SetPoolResets(now int) error {
	const call = "Turn.SetPoolResets"
	if err := t.lock(call); err != nil {
		return err
	}
	if err := checkCount(call, "now", now); err != nil {
		return t.refuse(call, err)
	}
	t.poolResets, t.hasPoolResets = now, true
	t.mu.Unlock()
	return nil
}

// Unit records one unit read aloud as a voice.unit child span.
func (t *Turn) Unit(u Unit) error {
	const call = "Turn.Unit"
	if err := t.lock(call); err != nil {
		return err
	}
	if err := t.checkUnit(&u); err != nil {
		return t.refuse(call, err)
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
	link := t.sdk.inst.link(t.linkType)
	t.mu.Unlock()

	in, ctx := t.sdk.inst, context.Background()
	if u.Underruns > 0 {
		in.underruns.Add(ctx, int64(u.Underruns), link.add...)
	}
	in.silence.Record(ctx, u.Silent, link.rec...)
	in.unitLead.Record(ctx, u.Lead, link.rec...)
	in.cushion.Record(ctx, u.Cushion, link.rec...)
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
// metrics and writes the [voice-turn] line. Ending twice returns ErrEnded.
func (t *Turn) End() error {
	const call = "Turn.End"
	if err := t.lock(call); err != nil {
		return err
	}
	t.ended = true
	s := t.sdk
	now := s.now()
	live := s.live.snapshot()
	pool, hasPool := t.poolResets, t.hasPoolResets
	if !hasPool && s.cfg.poolResets != nil {
		pool, hasPool = s.cfg.poolResets(), true
	}

	s.history.mu.Lock()
	nBefore := len(s.history.live)
	var before [numKinds][]int64
	if nBefore > 0 {
		backing := make([]int64, numKinds*nBefore)
		for k := range numKinds {
			series := backing[k*nBefore : (k+1)*nBefore : (k+1)*nBefore]
			for j, h := range s.history.live {
				series[j] = h[k]
			}
			before[k] = series
		}
	}
	poolPrev, hasPoolPrev := s.history.poolPrev, s.history.hasPoolPrev
	if nBefore == semconv.LiveHistory {
		copy(s.history.live, s.history.live[1:])
		s.history.live[nBefore-1] = live
	} else {
		s.history.live = append(s.history.live, live)
	}
	s.history.poolPrev, s.history.hasPoolPrev = pool, hasPool
	s.history.mu.Unlock()

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
	bluetooth := false
	if t.hasRoute {
		bluetooth = Bluetooth(t.route.Outputs)
		kv = append(kv,
			attribute.StringSlice(semconv.RouteInputs, t.route.Inputs),
			attribute.StringSlice(semconv.RouteOutputs, t.route.Outputs),
			attribute.Bool(semconv.RouteBluetooth, bluetooth),
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
		kv = append(kv, attribute.Int64(liveKeys[k], live[k]))
		if nBefore > 0 {
			kv = append(kv, attribute.Int64Slice(liveBeforeKeys[k], before[k]))
		}
	}
	if hasPool {
		kv = append(kv, attribute.Int(semconv.PoolResets, pool))
		if hasPoolPrev {
			kv = append(kv, attribute.Int(semconv.PoolResetsBefore, poolPrev))
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
	t.span.SetAttributes(kv...)
	t.span.End(trace.WithTimestamp(now))

	in, ctx := s.inst, context.Background()
	link := in.link(t.linkType)
	in.turns.Add(ctx, 1, in.turnAttrs(t.linkType, bluetooth).add...)
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

	var line *textlines.Turn
	if s.text != nil {
		line = &textlines.Turn{
			Index: t.index, TraceID: t.TraceID(), LinkType: t.linkType, LinkSubtype: t.linkSubtype,
			Inputs: t.route.Inputs, Outputs: t.route.Outputs, Bluetooth: bluetooth, SampleRate: t.route.SampleRate,
			RouteChanges: t.routeChanges, Stutter: t.stutter, Units: t.lines,
			ListenGrant: t.listen.Grant, ListenSession: t.listen.Session, ListenTotal: t.listen.Total,
			RPMLoaded: t.rpmLoaded, RPMFresh: t.rpmFresh, SpeechEndToPost: t.speechEndToPost, NotSent: t.notSent,
			PoolResets: pool, PoolResetsBefore: poolPrev, HasPoolResets: hasPool, HasPoolPrior: hasPool && hasPoolPrev,
			DeviceUptime: t.health.DeviceUptime, AppUptime: t.health.AppUptime,
			Activations: t.health.Activations, Memory: t.health.Memory,
		}
		line.Live = make([]textlines.Live, numKinds)
		for k, kind := range semconv.LiveKinds {
			l := textlines.Live{Kind: kind, Now: int(live[k])}
			for _, v := range before[k] {
				l.Before = append(l.Before, int(v))
			}
			line.Live[k] = l
		}
	}
	t.mu.Unlock()
	if line != nil {
		if err := s.text.WriteTurn(line); err != nil {
			s.logger.Warn("instr: writing the [voice-turn] line", "reason", err.Error())
		}
	}
	return nil
}
