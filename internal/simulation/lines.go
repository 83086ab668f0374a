package simulation

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/components/linesconnector"
	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/verdict"
)

// A phone that sends lines sends each turn as the app's lines instead of
// OTLP traces: its request is an OTLP logs request with the turn's
// [voice-turn] line, the engine's one with its [tts-take] lines, written
// by exporters/textlines' writer from the readings of the turn's spans,
// so the lines read back exactly as the app and the engine write them.
// They go through the lines connector, whose next consumer is the verdict
// processor.

// Where a line's trace ID is: in the line (trace=), only in its log
// record (an app's OTLP log SDK sets the record's), or nowhere.
const (
	traceInLine = iota
	traceInRecord
	traceNowhere
)

var traceWhere = [...]string{"in the line", "in the record", "nowhere"}

// linesTurn is a turn sent as lines: its two requests and the trace the
// lines connector gives it.
type linesTurn struct {
	phone, engine plog.Logs
	// trace is the turn's trace as the lines connector makes it: the
	// turn's own when its line or record carries it, else the one derived
	// from its line (linesconnector.TurnTrace).
	trace pcommon.TraceID
	// turnAt, takesAt: where the turn's and the takes' trace IDs are.
	turnAt, takesAt int
}

// linesOf writes turn t as lines, its turn line timed at end and each take
// line as far before it as its span ended before the turn's (the spans'
// own times are the wall clock's, which would make a schedule's records
// differ from run to run), the trace IDs where rng says: the turn's
// in its line, in its record or nowhere; the takes' likewise when the
// turn's is somewhere, else nowhere (a take with a trace ID the turn
// lacks would make a trace of its own). A take without one joins its
// turn by take ID within the take window (only the takes of units that
// underran are named by the turn line: the others are dropped, and the
// rules do not read them). Take IDs are the turn's own: the turns of a
// schedule end within microseconds of each other, so IDs reused between
// them would join the nearest, not their own.
func linesOf(t *load.Turn, end time.Time, rng *rand.Rand) *linesTurn {
	lt := &linesTurn{turnAt: rng.IntN(3), takesAt: traceNowhere}
	if lt.turnAt != traceNowhere {
		lt.takesAt = rng.IntN(3)
	}
	trace := t.TraceID.String()
	takeID := func(id string) string { return fmt.Sprintf("%s-%s", trace[:8], id) }

	var buf bytes.Buffer
	w := textlines.NewWriter(&buf)
	line := func() string {
		s := strings.TrimSuffix(buf.String(), "\n")
		buf.Reset()
		return s
	}

	// The phone's request: its [voice-turn] line, timed as its turn ended.
	prs := t.Phone.ResourceSpans().At(0)
	spans := prs.ScopeSpans().At(0).Spans()
	turn := &textlines.Turn{}
	var turnEnd pcommon.Timestamp
	for i := 0; i < spans.Len(); i++ {
		sp := spans.At(i)
		a := sp.Attributes()
		switch sp.Name() {
		case semconv.SpanVoiceTurn:
			turnEnd = sp.EndTimestamp()
			turnOf(turn, a)
		case semconv.SpanVoiceUnit:
			turn.Units = append(turn.Units, textlines.Unit{
				Index: int(intOf(a, semconv.UnitIndex)), TakeID: takeID(verdict.AttrString(a, semconv.TakeID)),
				Gap: floatOf(a, semconv.UnitGap), Lead: floatOf(a, semconv.UnitLead),
				Underruns: int(intOf(a, semconv.UnitUnderruns)), Silent: floatOf(a, semconv.UnitSilent),
				Cushion: floatOf(a, semconv.UnitCushion),
			})
		}
	}
	if lt.turnAt == traceInLine {
		turn.TraceID = trace
	}
	_ = w.WriteTurn(turn)
	lt.phone = plog.NewLogs()
	rl := lt.phone.ResourceLogs().AppendEmpty()
	prs.Resource().CopyTo(rl.Resource())
	text := line()
	at := pcommon.NewTimestampFromTime(end)
	record(rl, text, at, t.TraceID, lt.turnAt == traceInRecord)
	lt.trace = t.TraceID
	if lt.turnAt == traceNowhere {
		lt.trace, _ = linesconnector.TurnTrace(rl.Resource(), text)
	}

	// The engine's request: a [tts-take] line a take, each timed as it
	// ended.
	ers := t.Engine.ResourceSpans().At(0)
	lt.engine = plog.NewLogs()
	el := lt.engine.ResourceLogs().AppendEmpty()
	ers.Resource().CopyTo(el.Resource())
	takes := ers.ScopeSpans().At(0).Spans()
	for i := 0; i < takes.Len(); i++ {
		sp := takes.At(i)
		a := sp.Attributes()
		tk := &textlines.Take{
			ID: takeID(verdict.AttrString(a, semconv.TakeID)), FirstByte: floatOf(a, semconv.TakeFirstByte),
			Total: floatOf(a, semconv.TakeTotal), Audio: floatOf(a, semconv.TakeAudio),
			Rate: floatOf(a, semconv.TakeRate), Need: floatOf(a, semconv.TakeNeed),
			Beside: int(intOf(a, semconv.TakeBeside)),
		}
		if lt.takesAt == traceInLine {
			tk.TraceID = trace
		}
		_ = w.WriteTake(tk)
		record(el, line(), at-turnEnd+sp.EndTimestamp(), t.TraceID, lt.takesAt == traceInRecord)
	}
	return lt
}

// turnOf reads the voice.turn span's attributes into the line's readings.
func turnOf(turn *textlines.Turn, a pcommon.Map) {
	turn.Index = int(intOf(a, semconv.TurnIndex))
	turn.LinkType = verdict.AttrString(a, semconv.NetworkConnectionType)
	turn.SpeechEndToPost = floatOf(a, semconv.TurnSpeechEndPost)
	turn.NotSent = floatOf(a, semconv.TurnNotSent)
	turn.ListenGrant = floatOf(a, semconv.ListenGrant)
	turn.ListenSession = floatOf(a, semconv.ListenSession)
	turn.ListenTotal = floatOf(a, semconv.ListenTotal)
	turn.SampleRate = floatOf(a, semconv.RouteSampleRate)
	turn.Stutter = boolOf(a, semconv.TurnStutter)
	turn.Bluetooth = boolOf(a, semconv.RouteBluetooth)
	turn.Inputs = stringsOf(a, semconv.RouteInputs)
	turn.Outputs = stringsOf(a, semconv.RouteOutputs)
	if v, ok := a.Get(semconv.PoolResets); ok {
		turn.PoolResets, turn.HasPoolResets = int(v.Int()), true
	}
	if v, ok := a.Get(semconv.PoolResetsBefore); ok {
		turn.PoolResetsBefore, turn.HasPoolPrior = int(v.Int()), true
	}
	for _, kind := range semconv.LiveKinds {
		v, ok := a.Get(semconv.LiveAttr(kind))
		if !ok {
			continue
		}
		l := textlines.Live{Kind: kind, Now: int(v.Int())}
		if b, ok := a.Get(semconv.LiveBeforeAttr(kind)); ok {
			for i := 0; i < b.Slice().Len(); i++ {
				l.Before = append(l.Before, int(b.Slice().At(i).Int()))
			}
		}
		turn.Live = append(turn.Live, l)
	}
}

// record appends a log record holding one line, timed at, with the trace
// ID when inRecord.
func record(rl plog.ResourceLogs, text string, at pcommon.Timestamp, trace pcommon.TraceID, inRecord bool) {
	if rl.ScopeLogs().Len() == 0 {
		rl.ScopeLogs().AppendEmpty().Scope().SetName("github.com/percause/percause/internal/simulation")
	}
	lr := rl.ScopeLogs().At(0).LogRecords().AppendEmpty()
	lr.Body().SetStr(text)
	lr.SetTimestamp(at)
	lr.SetObservedTimestamp(at)
	if inRecord {
		lr.SetTraceID(trace)
	}
}

func intOf(a pcommon.Map, k string) int64 {
	v, _ := a.Get(k)
	return v.Int()
}

func floatOf(a pcommon.Map, k string) float64 {
	v, _ := a.Get(k)
	return v.Double()
}

func boolOf(a pcommon.Map, k string) bool {
	v, _ := a.Get(k)
	return v.Bool()
}

func stringsOf(a pcommon.Map, k string) []string {
	v, ok := a.Get(k)
	if !ok {
		return nil
	}
	out := make([]string, 0, v.Slice().Len())
	for i := 0; i < v.Slice().Len(); i++ {
		out = append(out, v.Slice().At(i).AsString())
	}
	return out
}

// copyLogs is a fresh copy of a request's logs.
func copyLogs(src plog.Logs) plog.Logs {
	ld := plog.NewLogs()
	src.CopyTo(ld)
	return ld
}
