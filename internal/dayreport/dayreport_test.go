package dayreport

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

func f(v float64) *float64 { return &v }
func n(v int64) *int64     { return &v }

func TestSummarizeTheDoneReading(t *testing.T) {
	ok := Turn{Cause: "none", SpeechEndToPost: f(1.2), NotSent: f(0), PoolResets: n(0)}
	for name, tc := range map[string]struct {
		turns []Turn
		done  bool
		say   string
	}{
		"clean day":        {[]Turn{ok, ok}, true, "yes speech-end-to-post within 3.00 s: 2 of 2 turns, slowest 1.20 s"},
		"slow post":        {[]Turn{ok, {Cause: "wait", SpeechEndToPost: f(3.5), NotSent: f(0), PoolResets: n(0)}}, false, "NO  speech-end-to-post within 3.00 s: 1 of 2 turns, slowest 3.50 s"},
		"post at budget":   {[]Turn{{Cause: "none", SpeechEndToPost: f(3.0), NotSent: f(0), PoolResets: n(0)}}, true, "1 of 1 turns"},
		"post missing":     {[]Turn{ok, {Cause: "none", NotSent: f(0), PoolResets: n(0)}}, false, "1 did not report it"},
		"pool moved":       {[]Turn{ok, {Cause: "pool", SpeechEndToPost: f(1), NotSent: f(0), PoolResets: n(2)}}, false, "NO  pool_reset at 0: highest tally 2"},
		"not sent shown":   {[]Turn{ok, {Cause: "none", SpeechEndToPost: f(1), NotSent: f(4.5), PoolResets: n(0)}}, false, "NO  no \"not sent\" wait: 1 turn, longest 4.50 s"},
		"no turns":         {nil, false, "0 turns by cause: none"},
		"a turn, no cause": {[]Turn{{SpeechEndToPost: f(1)}}, false, "no verdict 1"},
		"nothing reported": {[]Turn{{Cause: "none", SpeechEndToPost: f(1)}}, false, "NO  pool_reset at 0: no turn reported it"},
	} {
		t.Run(name, func(t *testing.T) {
			d := &Day{Turns: tc.turns}
			s := d.Summarize(3.0)
			if s.Done.Done != tc.done {
				t.Errorf("done %v, want %v (%+v)", s.Done.Done, tc.done, s.Done)
			}
			var b bytes.Buffer
			if err := WriteSummary(&b, s); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.say) {
				t.Errorf("summary\n%s\nwant it to say %q", b.String(), tc.say)
			}
		})
	}
}

// TestReadVerdictsAlone: a file of verdict spans alone (the verdict
// exporter's) reads as a day: the verdict carries the turn's time and the
// done reading's readings.
func TestReadVerdictsAlone(t *testing.T) {
	td := ptrace.NewTraces()
	for i, post := range []float64{0.8, 9.5} {
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName(semconv.SpanVerdict)
		s.SetTraceID(pcommon.TraceID{byte(i + 1)})
		a := s.Attributes()
		a.PutStr(semconv.VerdictCause, semconv.CauseNone)
		a.PutInt(semconv.TurnIndex, int64(i+1))
		a.PutInt(semconv.VerdictTurnTime, int64(2-i)*1e9) // the second turn happened first
		a.PutDouble(semconv.TurnSpeechEndPost, post)
		a.PutDouble(semconv.TurnNotSent, 0)
		a.PutInt(semconv.PoolResets, 0)
	}
	line, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	day, err := Read(bytes.NewReader(append(line, '\n')))
	if err != nil {
		t.Fatal(err)
	}
	if len(day.Turns) != 2 || day.Turns[0].Turn != 2 || day.Turns[1].Turn != 1 {
		t.Fatalf("turns %+v, want turn 2 then turn 1 (by their time)", day.Turns)
	}
	got := day.Turns[0]
	if got.SpeechEndToPost == nil || *got.SpeechEndToPost != 9.5 || got.NotSent == nil || got.PoolResets == nil {
		t.Fatalf("turn 2 read %+v: want its post, not-sent and pool readings from the verdict", got)
	}
}

// TestTurnFromVerdict: a verdict span alone gives the page everything it
// shows of a turn: the phone's resource, the route, the readings and each
// unit that underran with its take's need against the cushion.
func TestTurnFromVerdict(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.AppInstallationID, "install-1")
	rs.Resource().Attributes().PutStr(semconv.ServiceInstanceID, "launch-1")
	rs.Resource().Attributes().PutStr(semconv.ServiceVersion, "1.2.3")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName(semconv.SpanVerdict)
	s.SetTraceID(pcommon.TraceID{1})
	s.SetEndTimestamp(pcommon.Timestamp(7e9))
	a := s.Attributes()
	a.PutStr(semconv.VerdictCause, semconv.CauseSynthesis)
	c := a.PutEmptySlice(semconv.VerdictCauses)
	c.AppendEmpty().SetStr(semconv.CauseSynthesis)
	c.AppendEmpty().SetStr(semconv.CauseNetwork)
	a.PutStr(semconv.VerdictEvidence, "unit 2: …")
	a.PutStr(semconv.VerdictRulesVersion, "1")
	a.PutInt(semconv.VerdictUnderruns, 3)
	a.PutDouble(semconv.VerdictSilent, 1.5)
	a.PutBool(semconv.RouteBluetooth, true)
	a.PutEmptySlice(semconv.RouteOutputs).AppendEmpty().SetStr(semconv.PortBluetoothA2DP)
	a.PutInt(semconv.PoolResets, 1)
	a.PutInt(semconv.PoolResetsBefore, 0)
	for i, need := range []float64{2.1, -1} {
		ev := s.Events().AppendEmpty()
		ev.SetName(semconv.EventUnderrun)
		ea := ev.Attributes()
		ea.PutInt(semconv.UnitIndex, int64(i+1))
		ea.PutStr(semconv.TakeID, "t")
		ea.PutInt(semconv.UnitUnderruns, 1)
		ea.PutDouble(semconv.UnitSilent, 0.5)
		ea.PutDouble(semconv.UnitCushion, 1.5)
		if need >= 0 {
			ea.PutDouble(semconv.TakeNeed, need)
		}
		ea.PutStr(semconv.VerdictCause, semconv.CauseSynthesis)
	}
	s.Events().AppendEmpty().SetName(semconv.EventImplicated)

	got := TurnFromVerdict(rs.Resource(), s)
	if got.Start != 7e9 {
		t.Errorf("a verdict without the turn's time is placed at its decision: %d", got.Start)
	}
	if got.Installation != "install-1" || got.Launch != "launch-1" || got.Version != "1.2.3" || got.Rules != "1" {
		t.Errorf("resource and rules read %+v", got)
	}
	if got.Bluetooth == nil || !*got.Bluetooth || len(got.Outputs) != 1 || got.PoolResetsBefore == nil || *got.PoolResetsBefore != 0 {
		t.Errorf("route and pool read %+v", got)
	}
	if len(got.Underran) != 2 || got.Underran[0].Need == nil || *got.Underran[0].Need != 2.1 || got.Underran[1].Need != nil ||
		got.Underran[1].Unit != 2 || got.Underran[0].Cushion != 1.5 {
		t.Errorf("underruns read %+v", got.Underran)
	}

	l := ptrace.NewSpan()
	l.SetName(semconv.SpanLinkStatus)
	l.SetStartTimestamp(5)
	l.Attributes().PutStr(semconv.LinkStatus, semconv.LinkStatusEngineRestarting)
	l.Attributes().PutStr(semconv.LinkPrevious, semconv.LinkStatusOK)
	l.Attributes().PutDouble(semconv.LinkQuietFor, 2)
	lc := LinkFromSpan(rs.Resource(), l)
	if lc.Status != semconv.LinkStatusEngineRestarting || lc.Previous != semconv.LinkStatusOK || lc.Installation != "install-1" ||
		lc.QuietFor == nil || lc.FailingFor != nil || lc.Time != 5 {
		t.Errorf("link change read %+v", lc)
	}
}
