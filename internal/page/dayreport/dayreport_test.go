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
	ok := JudgedTurn{Cause: "none", Link: semconv.LinkWifi, SpeechEndToPost: f(1.2), NotSent: f(0), PoolResets: n(0)}
	lte := ok
	lte.Link, lte.SpeechEndToPost = semconv.LinkCell, f(0.9)
	on := func(t JudgedTurn, link string) JudgedTurn { t.Link = link; return t }
	undictated := lte
	undictated.SpeechEndToPost = nil
	for name, tc := range map[string]struct {
		turns []JudgedTurn
		done  bool
		say   []string
	}{
		"clean day on both links": {[]JudgedTurn{ok, lte}, true, []string{"yes dictated turns on Wi-Fi and LTE: Wi-Fi 1 dictated, LTE 1 dictated",
			"yes speech-end-to-post within 3.00 s: 2 of 2 turns, slowest 1.20 s (Wi-Fi 1 of 1, slowest 1.20 s; LTE 1 of 1, slowest 0.90 s)"}},
		"Wi-Fi only":         {[]JudgedTurn{ok, ok}, false, []string{"NO  dictated turns on Wi-Fi and LTE: Wi-Fi 2 dictated, LTE none", "yes speech-end-to-post within 3.00 s: 2 of 2 turns, slowest 1.20 s"}},
		"LTE never dictated": {[]JudgedTurn{ok, undictated}, false, []string{"NO  dictated turns on Wi-Fi and LTE: Wi-Fi 1 dictated, LTE 0 dictated of 1 turn", "1 did not report it"}},
		"other links named":  {[]JudgedTurn{ok, lte, on(ok, semconv.LinkWired), on(ok, "")}, true, []string{"Wi-Fi 1 dictated, LTE 1 dictated; also wired 1, link unknown 1"}},
		"slow post on LTE":   {[]JudgedTurn{ok, {Cause: "wait", Link: semconv.LinkCell, SpeechEndToPost: f(3.5), NotSent: f(0), PoolResets: n(0)}}, false, []string{"NO  speech-end-to-post within 3.00 s: 1 of 2 turns, slowest 3.50 s (Wi-Fi 1 of 1, slowest 1.20 s; LTE 0 of 1, slowest 3.50 s)"}},
		"post at budget":     {[]JudgedTurn{lte, {Cause: "none", Link: semconv.LinkWifi, SpeechEndToPost: f(3.0), NotSent: f(0), PoolResets: n(0)}}, true, []string{"2 of 2 turns"}},
		"post missing":       {[]JudgedTurn{ok, lte, {Cause: "none", NotSent: f(0), PoolResets: n(0)}}, false, []string{"1 did not report it"}},
		"pool moved":         {[]JudgedTurn{ok, lte, {Cause: "pool", SpeechEndToPost: f(1), NotSent: f(0), PoolResets: n(2)}}, false, []string{"NO  pool_reset at 0: highest tally 2"}},
		"not sent shown":     {[]JudgedTurn{ok, lte, {Cause: "none", SpeechEndToPost: f(1), NotSent: f(4.5), PoolResets: n(0)}}, false, []string{"NO  no \"not sent\" wait: 1 turn, longest 4.50 s"}},
		"no turns":           {nil, false, []string{"0 turns by cause: none", "NO  dictated turns on Wi-Fi and LTE: Wi-Fi none, LTE none"}},
		"a turn, no cause":   {[]JudgedTurn{{SpeechEndToPost: f(1)}}, false, []string{"no verdict 1"}},
		"nothing reported":   {[]JudgedTurn{ok, lte, {Cause: "none", SpeechEndToPost: f(1)}}, false, []string{`NO  no "not sent" wait: none shown, 1 did not report it`}},
		"no tally at all":    {[]JudgedTurn{{Cause: "none", Link: semconv.LinkWifi, SpeechEndToPost: f(1)}}, false, []string{"NO  pool_reset at 0: no turn reported it"}},
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
			for _, say := range tc.say {
				if !strings.Contains(b.String(), say) {
					t.Errorf("summary\n%s\nwant it to say %q", b.String(), say)
				}
			}
		})
	}
}

// TestDoneReadPerLink: the reading of each link is its own turns', in
// semconv.Links order, whatever order the turns came in.
func TestDoneReadPerLink(t *testing.T) {
	turns := []JudgedTurn{
		{Link: semconv.LinkCell, SpeechEndToPost: f(4)},
		{Link: semconv.LinkWifi, SpeechEndToPost: f(1)},
		{Link: semconv.LinkCell},
		{Link: semconv.LinkWifi, SpeechEndToPost: f(2)},
	}
	got := (&Day{Turns: turns}).Summarize(3).Done.Links
	want := []LinkDone{{Link: semconv.LinkWifi, Turns: 2, Dictated: 2, SlowestPost: 2}, {Link: semconv.LinkCell, Turns: 2, Dictated: 1, PostOver: 1, SlowestPost: 4}}
	if len(got) != len(want) {
		t.Fatalf("links %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("link %d: %+v, want %+v", i, got[i], want[i])
		}
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
