package linesconnector

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/components/linesconnector/internal/metadata"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

const (
	trA = "4bf92f3577b34da6a3ce929d0e0e4736"
	// a turn whose unit 2 underran on take t2
	turnA = "[voice-turn] turn=1 trace=" + trA + " link=wifi units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2"
	takeA = "[tts-take] take=t2 trace=" + trA + " need=0.20"
)

type stateHarness struct {
	t    testing.TB
	c    *linesConnector
	sink *consumertest.TracesSink
	now  time.Time
}

func newHarness(t testing.TB, mut func(*Config)) *stateHarness {
	cfg := createDefaultConfig().(*Config)
	if mut != nil {
		mut(cfg)
	}
	h := &stateHarness{t: t, sink: new(consumertest.TracesSink), now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	c, err := newConnector(connectortest.NewNopSettings(metadata.Type), cfg, h.sink, withClock(func() time.Time { return h.now }))
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

func (h *stateHarness) feed(lines ...string) {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, l := range lines {
		lrs.AppendEmpty().Body().SetStr(l)
	}
	if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
		h.t.Fatal(err)
	}
}

// spans counts the spans emitted so far by name.
func (h *stateHarness) spans() map[string]int {
	n := map[string]int{}
	for _, td := range h.sink.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				sss.At(j).Spans().RemoveIf(func(s ptrace.Span) bool { n[s.Name()]++; return false })
			}
		}
	}
	return n
}

func (h *stateHarness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.c.sweep(context.Background())
}

func TestTurnWaitsForItsTakeThenGoesWithout(t *testing.T) {
	h := newHarness(t, nil)
	h.feed(turnA)
	if n := h.spans()[semconv.SpanVoiceTurn]; n != 0 {
		t.Fatalf("turn emitted before its take or its wait: %d", n)
	}
	h.advance(DefaultWait - time.Millisecond)
	if n := h.spans()[semconv.SpanVoiceTurn]; n != 0 {
		t.Fatal("turn emitted before its wait was over")
	}
	h.advance(time.Millisecond)
	if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanVoiceUnit] != 2 || got[semconv.SpanTTSTake] != 0 {
		t.Fatalf("after the wait: %v", got)
	}
	// The take after its turn joins its trace at once.
	h.feed(takeA)
	if got := h.spans(); got[semconv.SpanTTSTake] != 1 {
		t.Fatalf("late take: %v", got)
	}
	// The turn line read again is a duplicate.
	h.feed(turnA)
	h.advance(DefaultWait)
	if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 {
		t.Fatalf("turn read twice emitted twice: %v", got)
	}
}

func TestTakeFirstThenTurnGoTogether(t *testing.T) {
	h := newHarness(t, nil)
	h.feed(takeA)
	h.feed(turnA)
	if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != 1 || len(h.sink.AllTraces()) != 1 {
		t.Fatalf("%v in %d batches, want the turn and its take in one", got, len(h.sink.AllTraces()))
	}
}

func TestTakesWithoutTheirTurn(t *testing.T) {
	h := newHarness(t, nil)
	h.feed(takeA, "[tts-take] take=t7 need=0.10")
	h.advance(DefaultWait)
	if got := h.spans(); got[semconv.SpanTTSTake] != 1 {
		t.Fatalf("a take with a trace ID goes alone after the wait, one without is dropped: %v", got)
	}
	if h.c.st.held != 0 || len(h.c.st.takesByID) != 0 || len(h.c.st.takesByTrace) != 0 {
		t.Fatalf("state left: held %d, %d by id, %d by trace", h.c.st.held, len(h.c.st.takesByID), len(h.c.st.takesByTrace))
	}
}

func TestTracelessTakeJoinsWithinTheWindow(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TakeWindow = time.Minute })
	h.feed("2026-11-30T08:00:00Z [voice-turn] turn=3 units=1 gaps=0.10 broke=1:1/0.50/1.50@t5")
	h.feed("2026-11-30T08:02:00Z [tts-take] take=t5 need=2.00") // two minutes apart: not this turn's
	h.feed("2026-11-30T07:59:30Z [tts-take] take=t5 need=0.30")
	got := h.spans()
	if got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != 1 {
		t.Fatalf("%v", got)
	}
	var need float64
	for _, td := range h.sink.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			s := rss.At(i).ScopeSpans().At(0).Spans().At(0)
			if s.Name() == semconv.SpanTTSTake {
				v, _ := s.Attributes().Get(semconv.TakeNeed)
				need = v.Double()
			}
		}
	}
	if need != 0.3 {
		t.Fatalf("joined the take with need %v, want the one within the window (0.30)", need)
	}
}

func TestPendingLimitLetsTheOldestGo(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxPending = 2 })
	for i := 0; i < 5; i++ {
		h.feed("[tts-take] take=t" + string(rune('a'+i)) + " trace=" + trA + " need=0.1")
	}
	if h.c.st.held != 2 {
		t.Fatalf("held %d, want 2", h.c.st.held)
	}
	if got := h.spans(); got[semconv.SpanTTSTake] != 3 {
		t.Fatalf("%v, want the 3 oldest let go", got)
	}
	if err := h.c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.spans(); got[semconv.SpanTTSTake] != 5 || h.c.st.held != 0 {
		t.Fatalf("after shutdown %v, held %d", got, h.c.st.held)
	}
}

// TestRecordTraceIDStandsInForTheLines: an app sending its lines as OTLP log
// records with their trace context gets the record's trace ID on lines that
// print none, and its resource on the spans.
func TestRecordTraceIDStandsInForTheLines(t *testing.T) {
	h := newHarness(t, nil)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
	rl.Resource().Attributes().PutStr(semconv.AppInstallationID, "install-1")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("[voice-turn] turn=1 link=wifi units=1 gaps=0.10 broke=-")
	lr.SetTraceID(traceIDOf(trA))
	if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	got := h.sink.AllTraces()
	if len(got) != 1 {
		t.Fatalf("%d batches", len(got))
	}
	rs := got[0].ResourceSpans().At(0)
	s := rs.ScopeSpans().At(0).Spans().At(0)
	inst, _ := rs.Resource().Attributes().Get(semconv.AppInstallationID)
	if s.TraceID().String() != trA || inst.AsString() != "install-1" {
		t.Fatalf("trace %s, installation %q", s.TraceID(), inst.AsString())
	}
}

// TestARefusedTurnIsEmittedWhenDeliveredAgain: the next consumer refuses a
// batch once; the receiver (or an OTLP client) delivers the same logs again
// and gets the turn, with its take. A turn counts as emitted only once the
// next consumer has accepted it, so the second delivery is no duplicate.
func TestARefusedTurnIsEmittedWhenDeliveredAgain(t *testing.T) {
	for name, lines := range map[string][]string{
		"a turn alone":             {"[voice-turn] turn=1 trace=" + trA + " link=wifi units=1 gaps=0.10 broke=-"},
		"a turn with its take":     {takeA, turnA},
		"a turn without its trace": {"2026-11-30T08:00:00Z [voice-turn] turn=3 units=1 gaps=0.10 broke=1:1/0.50/1.50@t5", "2026-11-30T08:00:01Z [tts-take] take=t5 need=0.30"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.c.next = consumertest.NewErr(errors.New("the next consumer refuses"))
			ld := plog.NewLogs()
			lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
			for _, l := range lines {
				lrs.AppendEmpty().Body().SetStr(l)
			}
			if err := h.c.ConsumeLogs(context.Background(), ld); err == nil {
				t.Fatal("the refusal did not go back to the receiver")
			}
			h.c.next = h.sink
			if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
				t.Fatal(err)
			}
			takes := len(lines) - 1
			if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != takes {
				t.Fatalf("after the delivery again: %v, want the turn and %d take", got, takes)
			}
			// Accepted now, a third delivery is a duplicate.
			if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
				t.Fatal(err)
			}
			if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 {
				t.Fatalf("delivered a third time: %v, want the turn once", got)
			}
		})
	}
}

// TestAnUntimedTakeJoinsATimedTurnReadAtOnce: `percause lines` reads a
// day's files at once; the phone's lines have timestamps, the engine's
// take lines none. A take without a time of its own is placed by when it
// came, so it joins the turn naming it by take ID, in either order.
func TestAnUntimedTakeJoinsATimedTurnReadAtOnce(t *testing.T) {
	turn := "2026-05-03T09:14:22Z [voice-turn] turn=2 units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2"
	take := "[tts-take] take=t2 need=2.00"
	for name, lines := range map[string][]string{"turn first": {turn, take}, "take first": {take, turn}} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil) // its clock is months after the turn's timestamp
			h.feed(lines[0])
			h.feed(lines[1])
			if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != 1 || len(h.sink.AllTraces()) != 1 {
				t.Fatalf("%v in %d batches, want the turn with its take at once", got, len(h.sink.AllTraces()))
			}
		})
	}
	// Read apart by more than the take window, they do not join.
	h := newHarness(t, nil)
	h.feed(turn)
	h.advance(DefaultTakeWindow + time.Second) // the turn goes alone after its wait
	h.feed(take)
	h.advance(DefaultWait)
	if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != 0 {
		t.Fatalf("read %s apart: %v, want the turn alone", DefaultTakeWindow, got)
	}
}

// TestIdenticalLinesOfTwoSourcesAreTwoTurns: a turn line without a trace ID
// gets one derived from its source and its prefix's own time as well as
// its readings, so the same readings written by two processes, by two
// phones (two resources) or at two times a BSD syslog prefix gives (no
// RFC 3339 time) are two turns, and the same line read twice is one.
func TestIdenticalLinesOfTwoSourcesAreTwoTurns(t *testing.T) {
	const turn1 = "[voice-turn] turn=1 link=wifi units=0"
	for name, tc := range map[string]struct {
		lines     []string
		resources []string // a resource per line (service.instance.id left out: the launch is the connector's), "" none
		want      int
	}{
		"two processes, BSD syslog": {want: 2, lines: []string{
			"Nov 30 08:00:30 studio pippa[311]: " + turn1, "Nov 30 08:00:30 studio pippa[312]: " + turn1}},
		"two processes, os_log": {want: 2, lines: []string{
			"2026-11-30 08:00:30.000000+0000 Pippa[311:7001] <Notice> " + turn1, "2026-11-30 08:00:30.000000+0000 Pippa[312:7001] <Notice> " + turn1}},
		"one process, two BSD syslog times": {want: 2, lines: []string{
			"Nov 30 08:00:30 studio pippa[311]: " + turn1, "Nov 30 08:04:30 studio pippa[311]: " + turn1}},
		"two phones, no prefix": {want: 2, lines: []string{turn1, turn1}, resources: []string{"phone-a", "phone-b"}},
		"one line read twice":   {want: 1, lines: []string{"Nov 30 08:00:30 studio pippa[311]: " + turn1, "Nov 30 08:00:30 studio pippa[311]: " + turn1}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			for i, l := range tc.lines {
				ld := plog.NewLogs()
				rl := ld.ResourceLogs().AppendEmpty()
				if tc.resources != nil {
					rl.Resource().Attributes().PutStr(semconv.AppInstallationID, tc.resources[i])
				}
				rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(l)
				if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
					t.Fatal(err)
				}
			}
			if n := h.spans()[semconv.SpanVoiceTurn]; n != tc.want {
				t.Errorf("%d voice.turn spans, want %d", n, tc.want)
			}
		})
	}
}

// TestATakeIDReusedJoinsTheNearestTake: when the engine reuses a take ID
// within the take window, a turn joins the take nearest it in time, not
// the earliest, and a take joins the nearest turn naming it; two
// candidates within the window make the join ambiguous, and the turn says
// which it took (percause.lines.assumed).
func TestATakeIDReusedJoinsTheNearestTake(t *testing.T) {
	const (
		early = "2026-11-30T08:00:00.000Z tts: [tts-take] take=t2 need=0.20"
		near  = "2026-11-30T08:02:50.000Z tts: [tts-take] take=t2 need=3.00"
		turn  = "2026-11-30T08:03:00.000Z app: [voice-turn] turn=2 link=wifi units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2"
		other = "2026-11-30T08:00:05.000Z app: [voice-turn] turn=1 link=cell units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2"
	)
	for name, tc := range map[string]struct {
		lines    [][]string // deliveries
		wantNeed map[string]float64
		assumed  string // what the turn on wifi says
	}{
		"the turn after both takes": {lines: [][]string{{early, near}, {turn}},
			wantNeed: map[string]float64{"wifi": 3.00},
			assumed:  "assumed take t2 of 2026-11-30T08:02:50Z, the nearest in time of 2 takes t2 within the take window"},
		"a take after both turns": {lines: [][]string{{other, turn}, {near}, {early}},
			wantNeed: map[string]float64{"wifi": 3.00, "cell": 0.20},
			assumed:  "assumed take t2 of 2026-11-30T08:02:50Z for the nearest in time of 2 turns naming it within the take window"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			for _, d := range tc.lines {
				h.feed(d...)
			}
			h.advance(time.Hour)
			linkOf := map[string]string{}  // trace → link
			needOf := map[string]float64{} // trace → need
			assumed := map[string][]string{}
			for _, td := range h.sink.AllTraces() {
				for res, s := range verdict.Spans(td) {
					tr := s.TraceID().String()
					switch s.Name() {
					case semconv.SpanVoiceTurn:
						l, _ := s.Attributes().Get(semconv.NetworkConnectionType)
						linkOf[tr] = l.AsString()
						if v, ok := res.Attributes().Get(semconv.LinesAssumed); ok {
							for _, e := range v.Slice().AsRaw() {
								assumed[l.AsString()] = append(assumed[l.AsString()], e.(string))
							}
						}
					case semconv.SpanTTSTake:
						n, _ := s.Attributes().Get(semconv.TakeNeed)
						needOf[tr] = n.Double()
					}
				}
			}
			got := map[string]float64{}
			for tr, link := range linkOf {
				if n, ok := needOf[tr]; ok {
					got[link] = n
				}
			}
			if !maps.Equal(got, tc.wantNeed) {
				t.Errorf("takes joined (need by turn's link) %v, want %v", got, tc.wantNeed)
			}
			if a := assumed["wifi"]; len(a) != 1 || a[0] != tc.assumed {
				t.Errorf("the turn says %q, want %q", a, tc.assumed)
			}
		})
	}
}
