// Package load sends realistic voice turns to a percause collector and
// checks what it counted: N installations, each relaunching every few turns,
// each turn built to fire one known cause, the phone's spans and the
// engine's takes in two OTLP/HTTP requests in either order, every refused
// request sent again until it is accepted. `percause load` is its command;
// the collector's delivery tests use it too.
package load

import (
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// Causes are the causes a generated turn fires, in the order turns cycle
// through them. Each turn fires exactly one rule (or none).
var Causes = []string{
	semconv.CauseNetwork, semconv.CauseSynthesis, semconv.CauseBluetooth,
	semconv.CauseWait, semconv.CausePool, semconv.CauseState, semconv.CauseNone,
}

// UnitsPerTurn is how many units (and takes) a generated turn has.
const UnitsPerTurn = 5

// What one generated turn sends: the phone's request (the voice.turn and
// its units) and the engine's (the takes), accepted at the first try.
const (
	SpansPerTurn    = 1 + 2*UnitsPerTurn
	RequestsPerTurn = 2
)

// Turn is one generated voice turn: its two requests and what it must get.
type Turn struct {
	TraceID      pcommon.TraceID
	Installation int
	Launch       int
	Index        int    // turn number within its launch, from 1
	Cause        string // the verdict it must get
	Link         string
	Phone        ptrace.Traces // voice.turn and its voice.unit spans
	Engine       ptrace.Traces // the tts.take spans
	EngineFirst  bool          // the engine's request goes first
}

// Fleet generates the turns of a fleet of installations, deterministically
// from a seed.
type Fleet struct {
	Installations int // how many phones
	RelaunchEvery int // turns per launch (0: never relaunch)
	Seed          uint64
	Version       string // the app's service.version
	// Clock gives each turn's end on the phone's clock (nil: time.Now); the
	// fault simulation's is its own, so a seed makes the same spans.
	Clock func() time.Time

	rng      *rand.Rand
	next     int   // turns made so far
	launches []int // per installation: its current launch number
	turns    []int // per installation: turns in its current launch
	engineID string
}

// NewFleet returns a generator for installations phones.
func NewFleet(installations, relaunchEvery int, seed uint64) *Fleet {
	return &Fleet{
		Installations: max(installations, 1),
		RelaunchEvery: relaunchEvery,
		Seed:          seed,
		Version:       "1.0.0",
		rng:           rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15)),
		launches:      make([]int, max(installations, 1)),
		turns:         make([]int, max(installations, 1)),
		engineID:      fmt.Sprintf("engine-%d", seed),
	}
}

// installationID names an installation the way an app does: a UUID made
// once and kept.
func (f *Fleet) installationID(i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(f.Seed), i)
}

func (f *Fleet) launchID(i, launch int) string {
	return fmt.Sprintf("%08x-%04x-4000-9000-%012x", uint32(f.Seed), launch&0xffff, i)
}

// Next makes the next turn: installations take turns round robin, and each
// turn fires the next cause of Causes.
func (f *Fleet) Next() *Turn {
	n := f.next
	f.next++
	inst := n % f.Installations
	if f.RelaunchEvery > 0 && f.turns[inst] >= f.RelaunchEvery {
		f.launches[inst]++
		f.turns[inst] = 0
	}
	f.turns[inst]++
	t := &Turn{
		Installation: inst,
		Launch:       f.launches[inst],
		Index:        f.turns[inst],
		Cause:        Causes[n%len(Causes)],
		Link:         semconv.LinkWifi,
		EngineFirst:  f.rng.IntN(2) == 0,
	}
	if n%3 == 2 {
		t.Link = semconv.LinkCell
	}
	hi, lo := f.rng.Uint64(), f.rng.Uint64()
	for i := 0; i < 8; i++ {
		t.TraceID[i], t.TraceID[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	t.Phone, t.Engine = f.build(t)
	return t
}

func (f *Fleet) spanID() pcommon.SpanID {
	var id pcommon.SpanID
	for id.IsEmpty() {
		v := f.rng.Uint64()
		for i := range id {
			id[i] = byte(v >> (8 * i))
		}
	}
	return id
}

// build writes the turn's two requests. The readings are those of a healthy
// turn but for the one that makes its cause fire.
func (f *Fleet) build(t *Turn) (phone, engine ptrace.Traces) {
	now := time.Now()
	if f.Clock != nil {
		now = f.Clock()
	}
	ts := func(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(now.Add(d)) }

	phone = ptrace.NewTraces()
	prs := phone.ResourceSpans().AppendEmpty()
	pa := prs.Resource().Attributes()
	pa.PutStr(semconv.ServiceName, semconv.ServicePhone)
	pa.PutStr(semconv.ServiceVersion, f.Version)
	pa.PutStr(semconv.ServiceInstanceID, f.launchID(t.Installation, t.Launch))
	pa.PutStr(semconv.AppInstallationID, f.installationID(t.Installation))
	pss := prs.ScopeSpans().AppendEmpty()
	pss.Scope().SetName("github.com/percause/percause/instr")
	spans := pss.Spans()

	turnID := f.spanID()
	root := spans.AppendEmpty()
	root.SetTraceID(t.TraceID)
	root.SetSpanID(turnID)
	root.SetName(semconv.SpanVoiceTurn)
	root.SetKind(ptrace.SpanKindInternal)
	root.SetStartTimestamp(ts(-12 * time.Second))
	root.SetEndTimestamp(ts(0))
	a := root.Attributes()
	a.PutInt(semconv.TurnIndex, int64(t.Index))
	a.PutStr(semconv.NetworkConnectionType, t.Link)
	a.PutInt(semconv.TurnUnits, UnitsPerTurn)
	a.PutDouble(semconv.TurnSpeechEndPost, 0.8)
	a.PutDouble(semconv.TurnNotSent, 0)
	a.PutDouble(semconv.ListenGrant, 0.2)
	a.PutDouble(semconv.ListenSession, 0.3)
	a.PutDouble(semconv.ListenTotal, 0.6)
	a.PutDouble(semconv.RouteSampleRate, 16000)
	outputs := []any{semconv.PortBuiltinSpeaker}
	bluetooth := false
	if t.Cause == semconv.CauseBluetooth {
		outputs, bluetooth = []any{semconv.PortBluetoothA2DP}, true
		a.PutBool(semconv.TurnStutter, true)
	} else {
		a.PutBool(semconv.TurnStutter, false)
	}
	_ = a.PutEmptySlice(semconv.RouteOutputs).FromRaw(outputs)
	a.PutBool(semconv.RouteBluetooth, bluetooth)
	switch {
	case t.Cause == semconv.CausePool:
		a.PutInt(semconv.PoolResets, 3)
		a.PutInt(semconv.PoolResetsBefore, 2)
	case t.Index == 1:
		a.PutInt(semconv.PoolResets, 0) // a launch's first turn: no .before
	default:
		a.PutInt(semconv.PoolResets, 0)
		a.PutInt(semconv.PoolResetsBefore, 0)
	}
	players, before := int64(1), []any{int64(1), int64(1), int64(1)}
	if t.Cause == semconv.CauseState {
		players, before = 5, []any{int64(2), int64(3), int64(4)}
	}
	a.PutInt(semconv.LiveAttr(semconv.LivePlayers), players)
	_ = a.PutEmptySlice(semconv.LiveBeforeAttr(semconv.LivePlayers)).FromRaw(before)

	engine = ptrace.NewTraces()
	ers := engine.ResourceSpans().AppendEmpty()
	ea := ers.Resource().Attributes()
	ea.PutStr(semconv.ServiceName, semconv.ServiceEngine)
	ea.PutStr(semconv.ServiceVersion, f.Version)
	ea.PutStr(semconv.ServiceInstanceID, f.engineID)
	ess := ers.ScopeSpans().AppendEmpty()
	ess.Scope().SetName("github.com/percause/percause/instr")
	takes := ess.Spans()

	for u := 1; u <= UnitsPerTurn; u++ {
		takeID := fmt.Sprintf("t%d", u)
		underruns, silent, lead, need := int64(0), 0.0, 0.3, 0.5
		switch {
		case u == 3 && t.Cause == semconv.CauseNetwork:
			underruns, silent = 2, 1.2
		case u == 3 && t.Cause == semconv.CauseSynthesis:
			underruns, silent, need = 1, 0.8, 2.4
		case u == 4 && t.Cause == semconv.CauseWait:
			lead = -0.4
		}
		us := spans.AppendEmpty()
		us.SetTraceID(t.TraceID)
		us.SetSpanID(f.spanID())
		us.SetParentSpanID(turnID)
		us.SetName(semconv.SpanVoiceUnit)
		us.SetStartTimestamp(ts(time.Duration(u-6) * 2 * time.Second))
		us.SetEndTimestamp(ts(time.Duration(u-5) * 2 * time.Second))
		ua := us.Attributes()
		ua.PutInt(semconv.UnitIndex, int64(u))
		ua.PutStr(semconv.TakeID, takeID)
		ua.PutDouble(semconv.UnitGap, 0.1)
		ua.PutDouble(semconv.UnitLead, lead)
		ua.PutInt(semconv.UnitUnderruns, underruns)
		ua.PutDouble(semconv.UnitSilent, silent)
		ua.PutDouble(semconv.UnitLongest, silent)
		ua.PutDouble(semconv.UnitCushion, 1.5)
		ua.PutStr(semconv.UnitPlayer, "queue")

		ts2 := takes.AppendEmpty()
		ts2.SetTraceID(t.TraceID)
		ts2.SetSpanID(f.spanID())
		ts2.SetParentSpanID(turnID)
		ts2.SetName(semconv.SpanTTSTake)
		ts2.SetKind(ptrace.SpanKindServer)
		ts2.SetStartTimestamp(ts(time.Duration(u-7) * 2 * time.Second))
		ts2.SetEndTimestamp(ts(time.Duration(u-6) * 2 * time.Second))
		ta := ts2.Attributes()
		ta.PutStr(semconv.TakeID, takeID)
		ta.PutDouble(semconv.TakeFirstByte, 0.3)
		ta.PutDouble(semconv.TakeTotal, 3)
		ta.PutDouble(semconv.TakeAudio, 4)
		ta.PutDouble(semconv.TakeRate, 1.33)
		ta.PutDouble(semconv.TakeNeed, need)
		ta.PutInt(semconv.TakeBeside, 1)
	}
	return phone, engine
}
