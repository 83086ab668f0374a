package linesconnector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// launchesOf reads, from what the connector emitted, each turn's launch by
// the link its line names (the cases below name the launch a turn must
// belong to in its link= field).
func launchesOf(t *testing.T, sink *consumertest.TracesSink) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, td := range sink.AllTraces() {
		for res, s := range verdict.Spans(td) {
			if s.Name() != semconv.SpanVoiceTurn {
				continue
			}
			link, _ := s.Attributes().Get(semconv.NetworkConnectionType)
			inst, _ := res.Attributes().Get(semconv.ServiceInstanceID)
			if out[link.AsString()] == nil {
				out[link.AsString()] = map[string]bool{}
			}
			out[link.AsString()][inst.AsString()] = true
		}
	}
	return out
}

// TestLinesFindTheirLaunch: turn lines that carry no launch get one; a new
// launch begins where the turn index goes back, app_uptime drops,
// device_uptime drops or the prefix names another process, and nowhere
// else: two timed turns that place the launch's start apart (a phone
// asleep between them) are one launch. The lines are fed in their order, reversed, and
// shuffled (rotated files read in any order), one line a delivery: each
// order gives every launch one ID of its own.
func TestLinesFindTheirLaunch(t *testing.T) {
	at := func(min int) string { return fmt.Sprintf("2026-11-30T08:%02d:00.000Z app: ", min) }
	osLog := func(min, pid int) string {
		return fmt.Sprintf("2026-11-30 08:%02d:00.000000+0000 Pippa[%d:7001] <Notice> ", min, pid)
	}
	for name, tc := range map[string]struct {
		lines   []string
		ordered bool // untimed: only their order tells the launches apart
	}{
		"the index goes back": {ordered: true, lines: []string{
			"[voice-turn] turn=1 link=a units=0", "[voice-turn] turn=2 link=a units=0", "[voice-turn] turn=3 link=a units=0",
			"[voice-turn] turn=1 link=b units=0", "[voice-turn] turn=2 link=b units=0",
			"[voice-turn] turn=1 link=c units=0",
		}},
		"app_uptime drops": {ordered: true, lines: []string{
			"[voice-turn] turn=4 link=a units=0 health:app_uptime=100", "[voice-turn] turn=5 link=a units=0 health:app_uptime=200",
			"[voice-turn] turn=6 link=b units=0 health:app_uptime=10", "[voice-turn] turn=7 link=b units=0 health:app_uptime=70",
		}},
		// Read in any order, each pair of turns the connector sees side by
		// side tells its launches apart: launch a's turns all have a higher
		// index and uptime than b's and c's. (Were a's turns 1 to 4, a1 and
		// b2 seen alone, one minute of uptime in six of the log's, would be
		// a phone asleep as well as a relaunch: the lines could not say.)
		"timed, in any order": {lines: []string{
			at(0) + "[voice-turn] turn=5 link=a units=0 health:app_uptime=300", at(1) + "[voice-turn] turn=6 link=a units=0 health:app_uptime=360",
			at(2) + "[voice-turn] turn=7 link=a units=0 health:app_uptime=420", at(3) + "[voice-turn] turn=8 link=a units=0 health:app_uptime=480",
			at(5) + "[voice-turn] turn=1 link=b units=0 health:app_uptime=20", at(6) + "[voice-turn] turn=2 link=b units=0 health:app_uptime=80",
			at(7) + "[voice-turn] turn=3 link=b units=0 health:app_uptime=140",
			at(9) + "[voice-turn] turn=1 link=c units=0 health:app_uptime=5",
		}},
		"timed, without uptime, in any order": {lines: []string{
			at(0) + "[voice-turn] turn=1 link=a units=0", at(1) + "[voice-turn] turn=2 link=a units=0", at(2) + "[voice-turn] turn=3 link=a units=0",
			at(5) + "[voice-turn] turn=1 link=b units=0", at(6) + "[voice-turn] turn=2 link=b units=0",
		}},
		// An iOS phone asleep between turns: its uptime does not count the
		// sleep, so each turn places the launch's start later. Nothing that
		// holds says a new launch began: one launch.
		"asleep between turns, in any order": {lines: []string{
			at(0) + "[voice-turn] turn=1 link=a units=0 health:device_uptime=5000,app_uptime=30",
			at(2) + "[voice-turn] turn=2 link=a units=0 health:device_uptime=5060,app_uptime=90",
			at(4) + "[voice-turn] turn=3 link=a units=0 health:device_uptime=5120,app_uptime=150",
			at(40) + "[voice-turn] turn=4 link=a units=0 health:device_uptime=5400,app_uptime=430",
		}},
		// device_uptime drops: the phone rebooted, whatever the index and
		// app_uptime say.
		"device_uptime drops": {ordered: true, lines: []string{
			"[voice-turn] turn=4 link=a units=0 health:device_uptime=9000,app_uptime=100",
			"[voice-turn] turn=5 link=b units=0 health:device_uptime=200,app_uptime=160",
		}},
		// os_log names the process: two processes are two launches, even
		// when neither the index nor the uptime says so.
		"the process ID": {lines: []string{
			osLog(0, 311) + "[voice-turn] turn=1 link=a units=0", osLog(1, 311) + "[voice-turn] turn=2 link=a units=0",
			osLog(2, 312) + "[voice-turn] turn=3 link=b units=0", osLog(3, 312) + "[voice-turn] turn=4 link=b units=0",
		}},
	} {
		orders := map[string][]string{"in order": tc.lines}
		if !tc.ordered {
			rev := make([]string, len(tc.lines))
			for i, l := range tc.lines {
				rev[len(rev)-1-i] = l
			}
			orders["reversed"] = rev
			for seed := uint64(1); seed <= 3; seed++ {
				sh := append([]string(nil), tc.lines...)
				rand.New(rand.NewPCG(seed, seed)).Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
				orders[fmt.Sprintf("shuffled %d", seed)] = sh
			}
		}
		for order, lines := range orders {
			t.Run(name+"/"+order, func(t *testing.T) {
				h := newHarness(t, nil)
				for _, l := range lines {
					h.feed(l)
				}
				got := launchesOf(t, h.sink)
				ids := map[string]string{}
				for link, set := range got {
					if len(set) != 1 {
						t.Errorf("launch %s: %d launch IDs %v, want one", link, len(set), set)
					}
					for id := range set {
						if id == "" {
							t.Errorf("launch %s: no service.instance.id", link)
						}
						if other, ok := ids[id]; ok {
							t.Errorf("launches %s and %s share the ID %s", link, other, id)
						}
						ids[id] = link
					}
				}
				want := map[string]bool{}
				for _, l := range tc.lines {
					want[strings.Fields(l[strings.Index(l, "link="):])[0][5:]] = true
				}
				if len(got) != len(want) {
					t.Errorf("launches %v, want %d", got, len(want))
				}
			})
		}
	}
}

// TestALaunchGivenIsKept: lines whose resource names the launch keep it,
// and a turn read again (a delivery again after a refusal) gets the launch
// it got the first time.
func TestALaunchGivenIsKept(t *testing.T) {
	h := newHarness(t, nil)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(semconv.ServiceInstanceID, "the-app-s-own")
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("[voice-turn] turn=1 link=a units=0")
	if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	if got := launchesOf(t, h.sink)["a"]; len(got) != 1 || !got["the-app-s-own"] {
		t.Fatalf("launch %v, want the resource's", got)
	}

	h = newHarness(t, nil)
	h.c.next = consumertest.NewErr(context.Canceled)
	line := "[voice-turn] turn=3 link=b units=0"
	ld = plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(line)
	if err := h.c.ConsumeLogs(context.Background(), ld); err == nil {
		t.Fatal("no refusal")
	}
	h.c.next = h.sink
	h.feed("[voice-turn] turn=1 link=c units=0") // another launch began meanwhile
	if err := h.c.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	got := launchesOf(t, h.sink)
	if len(got["b"]) != 1 || len(got["c"]) != 1 {
		t.Fatalf("launches %v", got)
	}
	for id := range got["b"] {
		if got["c"][id] {
			t.Fatalf("the turn delivered again joined the launch begun meanwhile: %v", got)
		}
	}
}

// assumedOf reads, from what the connector emitted, what it assumed of
// each turn's launch (percause.lines.assumed, on the turn's resource),
// by turn index.
func assumedOf(sink *consumertest.TracesSink) map[int64][]string {
	out := map[int64][]string{}
	for _, td := range sink.AllTraces() {
		for res, s := range verdict.Spans(td) {
			if s.Name() != semconv.SpanVoiceTurn {
				continue
			}
			idx, _ := s.Attributes().Get(semconv.TurnIndex)
			v, ok := res.Attributes().Get(semconv.LinesAssumed)
			if !ok {
				out[idx.Int()] = nil
				continue
			}
			for _, e := range v.Slice().AsRaw() {
				out[idx.Int()] = append(out[idx.Int()], e.(string))
			}
		}
	}
	return out
}

// TestAnAmbiguousLaunchSaysWhatWasAssumed: a launch's start moving later
// (app_uptime grew by less than the log's time) with the next turn index
// is a phone asleep: one launch, nothing assumed. With turns missing
// between, the lines cannot tell a relaunch from a phone asleep: a new
// launch is assumed, and the turn says so, with the figures.
func TestAnAmbiguousLaunchSaysWhatWasAssumed(t *testing.T) {
	at := func(min int) string { return fmt.Sprintf("2026-11-30T08:%02d:00.000Z app: ", min) }
	h := newHarness(t, nil)
	h.feed(at(0)+"[voice-turn] turn=1 link=a units=0 health:app_uptime=30",
		at(2)+"[voice-turn] turn=2 link=a units=0 health:app_uptime=90",
		at(4)+"[voice-turn] turn=3 link=a units=0 health:app_uptime=150",
		at(20)+"[voice-turn] turn=6 link=b units=0 health:app_uptime=300")
	got := assumedOf(h.sink)
	for _, i := range []int64{1, 2, 3} {
		if len(got[i]) != 0 {
			t.Errorf("turn %d assumed %q, want nothing", i, got[i])
		}
	}
	want := "assumed a new launch between turn 3 and turn 6: app_uptime grew 150.00 s in 960.00 s of the log's time with turns 4 to 5 not in the lines (a relaunch, or asleep?)"
	if len(got[6]) != 1 || got[6][0] != want {
		t.Errorf("turn 6 assumed %q, want %q", got[6], want)
	}
	launches := launchesOf(t, h.sink)
	if len(launches["a"]) != 1 || len(launches["b"]) != 1 {
		t.Errorf("launches %v, want one for turns 1 to 3 and another for turn 6", launches)
	}
}
