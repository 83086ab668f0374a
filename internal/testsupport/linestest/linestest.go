// Package linestest is what the tests of the lines path share: a set of
// turns, one per cause, recorded by the real SDK (its OTLP spans and its own
// text log, from the same recordings), and the verdicts read back from
// traces.
package linestest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/percause/percause/exporters/otlp"
	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/verdicts"
)

// Turn is one scripted turn and the cause it must be given.
type Turn struct {
	Name   string
	Expect string
	// Leak is how many players the phone leaks (or frees) before the turn.
	Leak   int
	record func(r *recorder, turn *instr.Turn, tr *tracker)
}

// clock is a clock the recorder moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

type recorder struct {
	clk           *clock
	phone, engine *instr.SDK
	ctx           context.Context
}

// tracker knows the takes a turn made, to drop the lost ones.
type tracker struct{ lost map[string]bool }

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// take makes one engine take in the turn's trace: first byte after fb
// seconds, then all its audio at once after total seconds, so need =
// total - fb - audio (when positive).
func (r *recorder) take(ctx context.Context, id string, fb, total, audio float64) {
	_, tk := r.engine.StartTake(ctx, id)
	r.clk.Advance(sec(fb))
	tk.FirstByte()
	r.clk.Advance(sec(total - fb))
	tk.End(audio)
}

// units records n units; broke[i] (1-based) is the unit that underran.
func (r *recorder) units(turn *instr.Turn, n int, f func(i int, u *instr.Unit)) {
	for i := 1; i <= n; i++ {
		start := r.clk.Now()
		end := r.clk.Advance(3 * time.Second)
		u := instr.Unit{Index: i, TakeID: fmt.Sprintf("%s-t%d", takePrefix(turn), i), Gap: 0.12, Lead: 0.4, Cushion: 1.5,
			Player: "queue", Start: start, End: end}
		if f != nil {
			f(i, &u)
		}
		turn.Unit(u)
	}
}

func takePrefix(turn *instr.Turn) string { return fmt.Sprintf("turn%d", turn.Index()) }

// Turns is the set: one turn per cause, in the order they are recorded. The
// players alive rise on the three turns up to the state turn, so only it
// reads three rises in a row; the launch's pool tally moves on the pool turn
// only.
var Turns = []Turn{
	{Name: "healthy", Expect: semconv.CauseNone, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		r.plainTakes(turn, 3, nil)
	}},
	{Name: "network", Expect: semconv.CauseNetwork, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		r.plainTakes(turn, 3, func(i int, u *instr.Unit) {
			if i == 2 {
				u.Underruns, u.Silent, u.Longest = 2, 1.4, 0.9
			}
		})
	}},
	{Name: "synthesis", Expect: semconv.CauseSynthesis, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		p := takePrefix(turn)
		r.take(turn.Context(), p+"-t1", 0.4, 2.0, 3.6)
		r.take(turn.Context(), p+"-t2", 0.4, 5.5, 3.0) // need 2.10
		r.units(turn, 2, func(i int, u *instr.Unit) {
			if i == 2 {
				u.Underruns, u.Silent, u.Longest, u.Cushion = 1, 0.8, 0.8, 0.5
			}
		})
	}},
	{Name: "bluetooth", Expect: semconv.CauseBluetooth, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		turn.SetRoute(instr.Route{Inputs: []string{semconv.PortBluetoothHFP}, Outputs: []string{semconv.PortBluetoothA2DP},
			SampleRate: 16000})
		turn.RouteChange(1.2, semconv.RouteReasonOldDevice, []string{semconv.PortBuiltinSpeaker})
		turn.MarkStutter()
		r.plainTakes(turn, 2, nil)
	}},
	{Name: "late-words", Expect: semconv.CauseWait, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		r.plainTakes(turn, 3, func(i int, u *instr.Unit) {
			if i == 2 {
				u.Gap, u.Lead = 0.56, -0.3
			}
		})
	}},
	{Name: "slow-mic", Expect: semconv.CauseWait, Leak: 1, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		turn.SetListen(instr.Listen{Grant: 0.2, Session: 1.4, Total: 1.9})
		r.plainTakes(turn, 1, nil)
	}},
	{Name: "pool", Expect: semconv.CausePool, Leak: 1, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		r.plainTakes(turn, 2, nil)
	}},
	{Name: "state", Expect: semconv.CauseState, Leak: 1, record: func(r *recorder, turn *instr.Turn, _ *tracker) {
		r.plainTakes(turn, 2, nil)
	}},
	{Name: "lost-take", Expect: semconv.CauseUnknown, Leak: -1, record: func(r *recorder, turn *instr.Turn, tr *tracker) {
		tr.lost[takePrefix(turn)+"-t2"] = true
		r.plainTakes(turn, 2, func(i int, u *instr.Unit) {
			if i == 2 {
				u.Underruns, u.Silent, u.Longest = 1, 0.6, 0.6
			}
		})
	}},
}

// plainTakes makes n healthy takes (need 0) and their units.
func (r *recorder) plainTakes(turn *instr.Turn, n int, f func(i int, u *instr.Unit)) {
	for i := 1; i <= n; i++ {
		r.take(turn.Context(), fmt.Sprintf("%s-t%d", takePrefix(turn), i), 0.3, 1.0, 3.6)
	}
	r.units(turn, n, f)
}

// Recorded is what the SDK made for Turns.
type Recorded struct {
	// Traces are the spans as the SDK exported them (OTLP), lost takes
	// removed.
	Traces []ptrace.Traces
	// Phone and Engine are the SDK's text logs, lost takes' lines removed.
	Phone, Engine []byte
	// Expect is the expected cause by trace ID; Names the turn's name.
	Expect, Names map[string]string
	// Order lists the trace IDs in the order the turns were recorded.
	Order []string
}

// Record records Turns with the real SDK on a clock of its own.
func Record(ctx context.Context) (*Recorded, error) {
	clk := &clock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	var payloads [][]byte
	sink := func(_ context.Context, sig otlp.Signal, p []byte) error {
		if sig == otlp.SignalTraces {
			mu.Lock()
			payloads = append(payloads, p)
			mu.Unlock()
		}
		return nil
	}
	var phoneLog, engineLog bytes.Buffer
	// A refused reading would make a turn that is not the one scripted.
	var refused []error
	common := func(service string, log *bytes.Buffer) []instr.Option {
		return []instr.Option{instr.WithServiceName(service), instr.WithClock(clk.Now), instr.WithTextLog(log),
			instr.WithErrorHandler(func(err error) { mu.Lock(); refused = append(refused, err); mu.Unlock() }),
			instr.WithSpanExporter(otlp.NewSpanExporter(sink)), instr.WithMetricReader(sdkmetric.NewManualReader()),
			instr.WithFlushInterval(time.Hour)}
	}
	phone, err := instr.Setup(ctx, append(common(semconv.ServicePhone, &phoneLog), instr.WithInstallationID("3f0c8a52-6d1e-4c1b-9a57-2f1f8e0b9d11"))...)
	if err != nil {
		return nil, err
	}
	defer phone.Shutdown(ctx)
	engine, err := instr.Setup(ctx, common(semconv.ServiceEngine, &engineLog)...)
	if err != nil {
		return nil, err
	}
	defer engine.Shutdown(ctx)
	r := &recorder{clk: clk, phone: phone, engine: engine, ctx: ctx}
	tr := &tracker{lost: map[string]bool{}}
	rec := &Recorded{Expect: map[string]string{}, Names: map[string]string{}}
	for _, t := range Turns {
		if t.Leak != 0 {
			phone.Live().Add(semconv.LivePlayers, t.Leak)
		}
		_, turn := phone.StartTurn(ctx)
		turn.SetLink(semconv.LinkWifi, "")
		turn.SetPoolResets(poolTally(t.Name))
		turn.SetSpeechEndToPost(0.8)
		t.record(r, turn, tr)
		turn.End()
		rec.Expect[turn.TraceID()] = t.Expect
		rec.Names[turn.TraceID()] = t.Name
		rec.Order = append(rec.Order, turn.TraceID())
		clk.Advance(10 * time.Second)
	}
	for _, s := range []*instr.SDK{engine, phone} {
		if err := s.ForceFlush(ctx); err != nil {
			return nil, err
		}
	}
	mu.Lock()
	err = errors.Join(refused...)
	mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("linestest: the SDK refused a scripted reading: %w", err)
	}
	for _, p := range payloads {
		raw, err := otlp.Gunzip(p)
		if err != nil {
			return nil, err
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(raw); err != nil {
			return nil, err
		}
		td := req.Traces()
		dropLost(td, tr.lost)
		rec.Traces = append(rec.Traces, td)
	}
	rec.Phone = phoneLog.Bytes()
	rec.Engine = dropLostLines(engineLog.Bytes(), tr.lost)
	return rec, nil
}

// poolTally keeps the launch's tally at 0 before the pool turn and at 1
// after it, so only the pool turn sees it move.
func poolTally(name string) int {
	for _, t := range Turns {
		if t.Name == "pool" {
			break
		}
		if t.Name == name {
			return 0
		}
	}
	return 1
}

func dropLost(td ptrace.Traces, lost map[string]bool) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sss.At(j).Spans().RemoveIf(func(s ptrace.Span) bool {
				id, _ := s.Attributes().Get(semconv.TakeID)
				return s.Name() == semconv.SpanTTSTake && lost[id.AsString()]
			})
		}
	}
}

func dropLostLines(b []byte, lost map[string]bool) []byte {
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		keep := true
		for id := range lost {
			if bytes.Contains(l, []byte(" take="+id+" ")) {
				keep = false
			}
		}
		if keep {
			out.Write(l)
		}
	}
	return out.Bytes()
}

// Verdicts returns the verdict spans in traces, by trace ID.
func Verdicts(traces ...ptrace.Traces) (map[string]verdicts.Verdict, error) {
	out := map[string]verdicts.Verdict{}
	m := &ptrace.JSONMarshaler{}
	for _, td := range traces {
		b, err := m.MarshalTraces(td)
		if err != nil {
			return nil, err
		}
		vs, err := verdicts.Parse(b)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if _, dup := out[v.TraceID]; dup {
				return nil, fmt.Errorf("two verdicts for trace %s", v.TraceID)
			}
			out[v.TraceID] = v
		}
	}
	return out, nil
}
