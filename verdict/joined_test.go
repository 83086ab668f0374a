package verdict

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// jspan is one span of a test trace: a name, the last byte of its span ID,
// its attributes (raw values, put as given) and, for a voice.turn, its
// route-change events.
type jspan struct {
	name   string
	id     byte
	attrs  map[string]any
	events []map[string]any
}

var joinedTraceID = pcommon.TraceID{0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xA, 0xB, 0xC, 0xD, 0xE, 0xF, 0x10}

// buildJoinedTest writes the spans as a phone and an engine send them: the
// phone's under its resource, the takes under the engine's.
func buildJoinedTest(spans []jspan) ptrace.Traces {
	td := ptrace.NewTraces()
	phone, engine := td.ResourceSpans().AppendEmpty(), td.ResourceSpans().AppendEmpty()
	phone.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
	phone.Resource().Attributes().PutStr(semconv.ServiceInstanceID, "launch-1")
	phone.Resource().Attributes().PutStr(semconv.AppInstallationID, "install-1")
	engine.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServiceEngine)
	ps, es := phone.ScopeSpans().AppendEmpty().Spans(), engine.ScopeSpans().AppendEmpty().Spans()
	for i, js := range spans {
		out := ps
		if js.name == semconv.SpanTTSTake {
			out = es
		}
		s := out.AppendEmpty()
		s.SetTraceID(joinedTraceID)
		s.SetSpanID(pcommon.SpanID{0xCC, 0, 0, 0, 0, 0, 0, js.id})
		s.SetName(js.name)
		s.SetStartTimestamp(pcommon.Timestamp(1000 + i))
		s.SetEndTimestamp(pcommon.Timestamp(2000 + i))
		putRaw(s.Attributes(), js.attrs)
		for _, e := range js.events {
			ev := s.Events().AppendEmpty()
			ev.SetName(semconv.EventRouteChange)
			putRaw(ev.Attributes(), e)
		}
	}
	return td
}

func putRaw(m pcommon.Map, attrs map[string]any) {
	for k, v := range attrs {
		if err := m.PutEmpty(k).FromRaw(v); err != nil {
			panic(err)
		}
	}
}

// readTrace reads every span the rules read of td into one trace, as the
// verdict processor does.
func readTrace(td ptrace.Traces, c *Rules) *Trace {
	t := &Trace{ID: joinedTraceID}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				switch s.Name() {
				case semconv.SpanVoiceTurn:
					t.AddTurn(ReadTurn(rs.Resource(), s))
				case semconv.SpanVoiceUnit:
					u := ReadUnit(s)
					t.AddUnit(&u, c)
				case semconv.SpanTTSTake:
					if k, ok := ReadTake(s); ok {
						t.AddTake(k)
					}
				}
			}
		}
	}
	return t
}

// checkRoundTrip writes t's readings as its joined spans, reads them back
// and fails unless they are the same readings, and decide the same.
func checkRoundTrip(t *testing.T, first *Trace, c *Rules) {
	t.Helper()
	td := ptrace.NewTraces()
	AppendTrace(td, first)
	if first.Turn == nil {
		if td.ResourceSpans().Len() != 0 {
			t.Fatalf("a trace without its turn wrote %d resources", td.ResourceSpans().Len())
		}
		return
	}
	again := readTrace(td, c)
	if again.Turn == nil {
		t.Fatalf("the joined spans read back without their turn")
	}
	if a, b := first.Turn.Resource.Attributes().AsRaw(), again.Turn.Resource.Attributes().AsRaw(); !reflect.DeepEqual(a, b) {
		t.Errorf("resource %v, read back %v", a, b)
	}
	x, y := *first, *again
	xt, yt := *x.Turn, *y.Turn
	xt.Resource, yt.Resource = pcommon.Resource{}, pcommon.Resource{}
	x.Turn, y.Turn = &xt, &yt
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("read back differs\nfirst %+v\n      %+v\nagain %+v\n      %+v", x, xt, y, yt)
	}
	if v, w := Decide(first, nil, c, Forced{}), Decide(again, nil, c, Forced{}); !reflect.DeepEqual(v, w) {
		t.Fatalf("decided %+v, read back %+v", v, w)
	}
}

func joinedCases() map[string][]jspan {
	turn := func(attrs map[string]any, events ...map[string]any) jspan {
		return jspan{name: semconv.SpanVoiceTurn, id: 1, attrs: attrs, events: events}
	}
	unit := func(id byte, attrs map[string]any) jspan {
		return jspan{name: semconv.SpanVoiceUnit, id: id, attrs: attrs}
	}
	take := func(id byte, attrs map[string]any) jspan {
		return jspan{name: semconv.SpanTTSTake, id: id, attrs: attrs}
	}
	long := strings.Repeat("x", MaxValueBytes+1)
	return map[string][]jspan{
		// Every reading set: TestAppendTraceCoversEveryReading holds this
		// case to it.
		"every_reading": {
			take(0x81, map[string]any{semconv.TakeID: "t1", semconv.TakeNeed: 2.5}),
			take(0x82, map[string]any{semconv.TakeID: "t2", semconv.TakeNeed: -1.0}),
			turn(map[string]any{
				semconv.TurnIndex: int64(4), semconv.NetworkConnectionType: semconv.LinkWifi,
				semconv.TurnStutter: true, semconv.RouteOutputs: []any{"builtin_speaker", "bluetooth_a2dp"},
				semconv.LiveAttr(semconv.LivePlayers): int64(5), semconv.LiveBeforeAttr(semconv.LivePlayers): []any{int64(2), int64(3), int64(4)},
				semconv.LiveAttr("widgets"): int64(1),
				semconv.PoolResets:          int64(3), semconv.PoolResetsBefore: int64(2),
				semconv.ListenGrant: 0.4, semconv.ListenSession: 0.7, semconv.ListenTotal: 1.6,
				semconv.TurnUnits: int64(3), semconv.TurnSpeechEndPost: 0.3, semconv.TurnNotSent: 1.25,
				semconv.HealthAppUptime: 312.5, semconv.HealthDeviceUptime: 90210.25,
				semconv.RouteInputs: []any{"builtin_mic"},
			}, map[string]any{semconv.RouteChangeAt: 3.5, semconv.RouteChangeReason: "new_device_available"},
				map[string]any{semconv.RouteChangeAt: int64(4), semconv.RouteChangeReason: int64(7)}),
			unit(11, map[string]any{semconv.UnitIndex: int64(1), semconv.TakeID: "t1", semconv.UnitUnderruns: int64(2),
				semconv.UnitSilent: 1.4, semconv.UnitCushion: 1.5, semconv.UnitLead: -0.3}),
			unit(12, map[string]any{semconv.UnitIndex: int64(2), semconv.TakeID: "t2", semconv.UnitUnderruns: int64(1),
				semconv.UnitSilent: 0.5, semconv.UnitCushion: -1.0, semconv.UnitLead: math.NaN()}),
			unit(13, map[string]any{semconv.UnitIndex: int64(3), semconv.TakeID: "t3", semconv.UnitUnderruns: int64(0), semconv.UnitLead: 0.2}),
		},
		"pool_went_down": {turn(map[string]any{semconv.PoolResets: int64(1), semconv.PoolResetsBefore: int64(3), semconv.TurnIndex: int64(2)})},
		"bad_lead_alone": {
			turn(map[string]any{semconv.TurnUnits: int64(1)}),
			unit(11, map[string]any{semconv.UnitIndex: int64(1), semconv.UnitUnderruns: int64(0), semconv.UnitLead: "late"}),
		},
		"underran_naming_no_take": {
			turn(map[string]any{semconv.TurnUnits: int64(1)}),
			unit(11, map[string]any{semconv.UnitIndex: int64(1), semconv.UnitUnderruns: int64(2), semconv.UnitSilent: 0.4, semconv.UnitCushion: 1.0}),
		},
		"unit_without_index_or_underruns": {
			turn(nil),
			unit(11, map[string]any{semconv.UnitIndex: 1.5, semconv.TakeID: long}),
		},
		"bluetooth_past_the_outputs_kept": {turn(map[string]any{semconv.RouteOutputs: []any{
			"a", "b", "c", "d", "e", "f", "g", "h", "bluetooth_le", "bluetooth_hfp"}})},
		"bluetooth_said_without_its_port": {turn(map[string]any{semconv.RouteBluetooth: true, semconv.RouteOutputs: []any{"usb"}})},
		"bluetooth_port_said_off":         {turn(map[string]any{semconv.RouteBluetooth: false, semconv.RouteOutputs: []any{"bluetooth_a2dp"}})},
		"more_problems_than_kept": {turn(map[string]any{
			semconv.TurnIndex: "two", semconv.TurnStutter: "yes", semconv.PoolResets: int64(-1),
			semconv.ListenGrant: -0.5, semconv.TurnUnits: 2.5, semconv.NetworkConnectionType: int64(3),
		})},
		"live_history_bad_and_kinds": {turn(map[string]any{
			semconv.LiveAttr(semconv.LivePlayers): int64(3), semconv.LiveBeforeAttr(semconv.LivePlayers): []any{"a"},
			semconv.LiveAttr(semconv.LiveTakes): int64(2), semconv.LiveBeforeAttr(semconv.LiveTakes): []any{int64(1), int64(1), int64(1), int64(1), int64(2)},
		})},
		"extra_turns_and_a_duplicate": {
			turn(map[string]any{semconv.TurnUnits: int64(1)}),
			{name: semconv.SpanVoiceTurn, id: 2},
			{name: semconv.SpanVoiceTurn, id: 3},
			turn(map[string]any{semconv.TurnIndex: int64(9)}), // the same span again
			unit(11, map[string]any{semconv.UnitUnderruns: int64(0)}),
			unit(11, map[string]any{semconv.UnitUnderruns: int64(0)}),
		},
		"takes_that_cannot_be_read": {
			turn(nil),
			take(0x81, map[string]any{semconv.TakeID: "t1"}),
			take(0x82, map[string]any{semconv.TakeID: "t2", semconv.TakeNeed: "slow"}),
			take(0x83, map[string]any{semconv.TakeNeed: 1.0}), // no take ID: not read
			take(0x84, map[string]any{semconv.TakeID: "t1", semconv.TakeNeed: 1.0}),
		},
		"a_clients_own_carrier": {
			turn(map[string]any{AttrJoinedProblems: int64(3)}),
			unit(11, map[string]any{semconv.UnitUnderruns: int64(0), AttrJoinedProblems: []any{"said by the client"}, AttrJoinedUnderrunUnreadable: "no"}),
			take(0x81, map[string]any{semconv.TakeID: "t1", semconv.TakeNeed: 1.0, AttrJoinedProblems: []any{strings.Repeat("y", maxProblemBytes+1)}}),
		},
		"unsized_and_at_zero": {turn(map[string]any{semconv.TurnIndex: int64(0), semconv.PoolResets: int64(0)})},
	}
}

// TestAppendTraceRoundTrip: the joined spans of a trace read back into the
// same readings, bad input and all, and the rules decide them alike.
func TestAppendTraceRoundTrip(t *testing.T) {
	c := DefaultRules()
	for name, spans := range joinedCases() {
		t.Run(name, func(t *testing.T) {
			checkRoundTrip(t, readTrace(buildJoinedTest(spans), &c), &c)
		})
	}
}

// TestAppendTraceCoversEveryReading: the every_reading case sets every field
// of the readings (a field added to Turn, Unit or Take and not written by
// AppendTrace fails here until it is), and its joined spans are the turn's
// under the phone's resource, in the joined scope.
func TestAppendTraceCoversEveryReading(t *testing.T) {
	c := DefaultRules()
	tr := readTrace(buildJoinedTest(joinedCases()["every_reading"]), &c)
	if tr.Turn == nil {
		t.Fatal("no turn")
	}
	unset := func(what string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).IsZero() {
				t.Errorf("%s.%s is not set by the every_reading case", what, v.Type().Field(i).Name)
			}
		}
	}
	unset("Turn", reflect.ValueOf(*tr.Turn))
	var units Unit
	for _, u := range tr.Units {
		mergeSet(reflect.ValueOf(&units).Elem(), reflect.ValueOf(u))
	}
	unset("Unit", reflect.ValueOf(units))
	var takes Take
	for _, k := range tr.Takes {
		mergeSet(reflect.ValueOf(&takes).Elem(), reflect.ValueOf(k))
	}
	unset("Take", reflect.ValueOf(takes))

	td := ptrace.NewTraces()
	AppendTrace(td, tr)
	if n := td.ResourceSpans().Len(); n != 1 {
		t.Fatalf("%d resources, want the phone's alone", n)
	}
	rs := td.ResourceSpans().At(0)
	if s, _ := rs.Resource().Attributes().Get(semconv.ServiceInstanceID); s.Str() != "launch-1" {
		t.Errorf("resource %v, want the phone's (its launch names where a second stage routes it)", rs.Resource().Attributes().AsRaw())
	}
	ss := rs.ScopeSpans().At(0)
	if ss.Scope().Name() != JoinedScope {
		t.Errorf("scope %q", ss.Scope().Name())
	}
	names := map[string]int{}
	for i := 0; i < ss.Spans().Len(); i++ {
		names[ss.Spans().At(i).Name()]++
	}
	if want := map[string]int{semconv.SpanVoiceTurn: 1, semconv.SpanVoiceUnit: 3, semconv.SpanTTSTake: 2}; !reflect.DeepEqual(names, want) {
		t.Errorf("spans %v, want %v", names, want)
	}
	checkRoundTrip(t, tr, &c)
}

// mergeSet copies into dst each field of src that dst has zero.
func mergeSet(dst, src reflect.Value) {
	for i := 0; i < dst.NumField(); i++ {
		if dst.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
}

// fuzzKeys are the keys the readers read, with the joined form's and a few
// they do not: a fuzzed span sets some of them to values of any type.
var fuzzKeys = []string{
	semconv.TurnIndex, semconv.NetworkConnectionType, semconv.TurnStutter, semconv.RouteBluetooth,
	semconv.RouteOutputs, semconv.LiveAttr(semconv.LivePlayers), semconv.LiveBeforeAttr(semconv.LivePlayers),
	semconv.LiveAttr("x.y"), semconv.LiveAttr("before"), semconv.LiveKind, semconv.LiveAttr(""),
	semconv.PoolResets, semconv.PoolResetsBefore, semconv.ListenGrant, semconv.ListenSession, semconv.ListenTotal,
	semconv.TurnUnits, semconv.TurnSpeechEndPost, semconv.TurnNotSent,
	semconv.UnitIndex, semconv.TakeID, semconv.UnitUnderruns, semconv.UnitSilent, semconv.UnitCushion, semconv.UnitLead,
	semconv.TakeNeed, AttrJoinedProblems, AttrJoinedUnderrunUnreadable, "http.method",
	semconv.HealthAppUptime, semconv.HealthDeviceUptime,
}

// fuzzStrings are string values worth trying.
var fuzzStrings = []string{"", "t1", "t2", "wifi", "bluetooth_a2dp", "builtin_speaker", strings.Repeat("z", MaxValueBytes+1), "a Bluetooth output"}

// fuzzBytes reads a fuzz input as a sequence of choices.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) next() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) pick(n int) int { return int(f.next()) % n }

// value is an attribute value of a type and size the input chooses.
func (f *fuzzBytes) value(depth int) any {
	switch f.pick(9) {
	case 0:
		return int64(int8(f.next()))
	case 1:
		return []float64{0, 1.5, -0.25, 3, math.NaN(), math.Inf(1), math.Inf(-1), 1 << 60, 0.1}[f.pick(9)]
	case 2:
		return fuzzStrings[f.pick(len(fuzzStrings))]
	case 3:
		return f.next()%2 == 0
	case 4, 5:
		if depth > 0 {
			return int64(1)
		}
		n := f.pick(12)
		s := make([]any, n)
		for i := range s {
			s[i] = f.value(depth + 1)
		}
		return s
	case 6:
		return map[string]any{"k": int64(1)}
	case 7:
		return []byte{1}
	}
	return nil
}

// FuzzReadersRoundTrip: whatever spans a trace's readings were read from,
// its joined spans read back into the same readings and the same
// decision. The input chooses the spans, their IDs, and the keys and
// values of their attributes.
func FuzzReadersRoundTrip(f *testing.F) {
	f.Add([]byte{0, 1, 3, 0, 4, 2, 1, 1, 11, 2, 21, 0, 5, 22, 1, 2})
	f.Add([]byte{0, 1, 6, 11, 0, 9, 12, 1, 13, 0, 3, 1, 1, 11, 4, 20, 0, 3, 21, 0, 4, 22, 1, 4, 2, 2, 0x81, 2, 25, 1, 2, 22, 2, 1})
	f.Add([]byte("a voice turn, its units and its takes, chosen byte by byte"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		var spans []jspan
		for n := in.pick(10) + 1; n > 0; n-- {
			js := jspan{name: []string{semconv.SpanVoiceTurn, semconv.SpanVoiceUnit, semconv.SpanTTSTake}[in.pick(3)],
				id: in.next() % 16, attrs: map[string]any{}}
			for k := in.pick(12); k > 0; k-- {
				js.attrs[fuzzKeys[in.pick(len(fuzzKeys))]] = in.value(0)
			}
			for e := in.pick(3); js.name == semconv.SpanVoiceTurn && e > 0; e-- {
				js.events = append(js.events, map[string]any{semconv.RouteChangeAt: in.value(1), semconv.RouteChangeReason: in.value(1)})
			}
			spans = append(spans, js)
		}
		c := DefaultRules()
		checkRoundTrip(t, readTrace(buildJoinedTest(spans), &c), &c)
	})
}
