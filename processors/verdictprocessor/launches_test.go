package verdictprocessor

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// plainTurn is turn index of launch, one unit, sent as a client without
// the Go SDK's history sends it: the pool tally and the players count as
// they stand now, no .before.
func plainTurn(launch string, index, pool, players int64) sp {
	s := turn(map[string]any{
		semconv.TurnIndex:                     index,
		semconv.PoolResets:                    pool,
		semconv.LiveAttr(semconv.LivePlayers): players,
	})
	s.launch = launch
	return s
}

func plainUnit(launch string) sp {
	u := unit(1, nil)
	u.launch = launch
	return u
}

// causeOf is the verdict trace n got (fails when it got none or several).
func (h *harness) causeOf(n byte) (string, string) {
	h.t.Helper()
	var cause, evidence string
	found := 0
	for _, v := range h.verdicts() {
		if v.TraceID() == traceID(n) {
			r := verdict.FromSpan(pcommon.NewResource(), v)
			cause, evidence = r.Cause, r.Evidence
			found++
		}
	}
	if found != 1 {
		h.t.Fatalf("trace %d got %d verdicts, want 1", n, found)
	}
	return cause, evidence
}

// launchTurns is one launch as the app's lines and most clients report it:
// pool_reset 0, 0, 2, 2 and players 1, 2, 3, 4 over four turns.
var launchTurns = []struct {
	index, pool, players int64
	cause                string
	evidence             string
}{
	{1, 0, 1, semconv.CauseNone, ""},
	{2, 0, 2, semconv.CauseNone, ""},
	{3, 2, 3, semconv.CausePool, "pool_reset moved 0→2 since the previous turn"},
	{4, 2, 4, semconv.CauseState, "players 1→2→3→4 rose on each of the last 3 turns"},
}

func checkLaunch(t *testing.T, h *harness, first byte) {
	t.Helper()
	for i, lt := range launchTurns {
		cause, ev := h.causeOf(first + byte(i))
		if cause != lt.cause || !strings.Contains(ev, lt.evidence) {
			t.Errorf("turn %d: %s (%s), want %s (%s)", lt.index, cause, ev, lt.cause, lt.evidence)
		}
	}
}

// TestLaunchHistoryWithoutBefore: turns that carry no history of their own
// are read against what the processor kept of their launch: a tally that
// did not move since the previous turn is not pool, a count that rose on
// each of the last 3 turns is state.
func TestLaunchHistoryWithoutBefore(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config))
	for i, lt := range launchTurns {
		h.deliver(sdk(byte(10+i), plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
	}
	checkLaunch(t, h, 10)
}

// TestLaunchHistoryOutOfOrder: a turn whose previous turn has not arrived
// waits for it (within the wait) and is decided when it comes, ordered by
// turn index, not by arrival.
func TestLaunchHistoryOutOfOrder(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config))
	order := []int{0, 1, 3, 2} // turn 4 before turn 3
	for _, i := range order {
		lt := launchTurns[i]
		h.deliver(sdk(byte(10+i), plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
		if i == 3 {
			if n := len(h.verdicts()); n != 2 {
				t.Fatalf("turn 4 arrived before turn 3: %d verdicts so far, want 2 (turn 4 waits)", n)
			}
		}
	}
	checkLaunch(t, h, 10)
}

// TestLaunchPreviousTurnNeverCame: a turn whose previous turn never comes
// waits for it for history_wait, then is decided with what is known (not
// forced: everything of its own trace came), and the evidence says so.
func TestLaunchPreviousTurnNeverCame(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	h := newHarness(t, cfg)
	h.deliver(sdk(10, plainUnit("launch-A"), plainTurn("launch-A", 1, 0, 1)))
	h.deliver(sdk(12, plainUnit("launch-A"), plainTurn("launch-A", 3, 2, 3))) // turn 2 never comes
	for waited := time.Duration(0); waited < cfg.HistoryWait-100*time.Millisecond; waited += 100 * time.Millisecond {
		h.advance(100 * time.Millisecond)
	}
	if n := len(h.verdicts()); n != 1 {
		t.Fatalf("%d verdicts within history_wait, want 1 (turn 3 waits for turn 2)", n)
	}
	h.advance(100 * time.Millisecond)
	cause, ev := h.causeOf(12)
	if cause != semconv.CauseNone || !strings.HasPrefix(ev, "turn 2 of this launch not seen") {
		t.Fatalf("turn 3 without turn 2: %s (%s), want none saying turn 2 was not seen", cause, ev)
	}
	if got := h.counter("otelcol_processor_verdict_forced"); len(got) != 0 {
		t.Fatalf("forced %v, want none", got)
	}
}

// TestLaunchPreviousTurnLate: a phone retrying a refused batch, or a spool
// draining after a tunnel, sends a turn behind the next one; the next turn
// waits for it (history_wait, sized from the spool's backoff) and is read
// with it, at each delay a retry gives. The sweep runs every 100 ms
// between, as its ticker would.
func TestLaunchPreviousTurnLate(t *testing.T) {
	for _, late := range []time.Duration{700 * time.Millisecond, 1400 * time.Millisecond, 2500 * time.Millisecond, 4 * time.Second, 7500 * time.Millisecond} {
		t.Run(late.String(), func(t *testing.T) {
			h := newHarness(t, createDefaultConfig().(*Config))
			for _, i := range []int{0, 1, 3} { // turn 4 before turn 3
				lt := launchTurns[i]
				h.deliver(sdk(byte(10+i), plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
			}
			for waited := time.Duration(0); waited < late; waited += 100 * time.Millisecond {
				h.advance(100 * time.Millisecond)
			}
			lt := launchTurns[2]
			h.deliver(sdk(12, plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
			checkLaunch(t, h, 10)
		})
	}
}

// TestLaunchHeldForHistoryBounded: a turn held for its previous turn is
// held like any turn: at max_pending it is evicted first (the oldest), and
// decided with what is known, the evidence saying which turn was not seen.
func TestLaunchHeldForHistoryBounded(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxPending = 2
	h := newHarness(t, cfg)
	h.deliver(sdk(10, plainUnit("launch-A"), plainTurn("launch-A", 1, 0, 1)))
	h.deliver(sdk(12, plainUnit("launch-A"), plainTurn("launch-A", 3, 2, 3))) // held for turn 2
	h.deliver(sdk(20, plainUnit("launch-B")))                                 // a trace without its turn yet
	if n := len(h.verdicts()); n != 1 {
		t.Fatalf("%d verdicts with max_pending 2 not reached, want 1 (turn 3 held)", n)
	}
	h.deliver(sdk(21, plainUnit("launch-C"))) // no room: the oldest held, turn 3, goes
	cause, ev := h.causeOf(12)
	if cause != semconv.CauseNone || !strings.Contains(ev, "turn 2 of this launch not seen") {
		t.Fatalf("turn 3 evicted: %s (%s), want none saying turn 2 was not seen", cause, ev)
	}
	if got := h.counter("otelcol_processor_verdict_forced")[verdict.ForcedPendingLimit]; got != 1 {
		t.Fatalf("forced{pending_limit} = %d, want 1", got)
	}
	if n := h.p.held.Len(); n != 2 {
		t.Fatalf("%d traces held, want max_pending (2)", n)
	}
}

// TestLaunchHeldForHistoryAcrossARestart: a turn held for its previous
// turn is stored like any held turn: after a restart it still waits, and
// the previous turn arriving late (after the restart) is read with it.
func TestLaunchHeldForHistoryAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	h, host := storedHarness(t, dir, EmitVerdicts)
	for _, i := range []int{0, 1, 3} { // turn 4 before turn 3
		lt := launchTurns[i]
		h.deliver(sdk(byte(10+i), plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
	}
	h.advance(time.Second)
	h.stop(host)
	h2, host2 := storedHarness(t, dir, EmitVerdicts)
	defer h2.stop(host2)
	h2.advance(1500 * time.Millisecond)
	lt := launchTurns[2]
	h2.deliver(sdk(12, plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
	for _, i := range []int{2, 3} {
		lt := launchTurns[i]
		cause, ev := h2.causeOf(byte(10 + i))
		if cause != lt.cause || !strings.Contains(ev, lt.evidence) {
			t.Errorf("after the restart, turn %d: %s (%s), want %s (%s)", lt.index, cause, ev, lt.cause, lt.evidence)
		}
	}
}

// TestEndOfInputWording: with a finite input (percause lines), a turn
// still missing a take when the input ends says so in those words.
func TestEndOfInputWording(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.EndOfInput = true
	h := newHarness(t, cfg)
	h.deliver(sdk(10, underrun(2, 1, 0.8, nil), turn(nil)))
	h.shutdown()
	_, ev := h.causeOf(10)
	if want := "the input ended before take t2 came; unit 2"; !strings.HasPrefix(ev, want) {
		t.Fatalf("evidence %q, want it to start %q", ev, want)
	}
}

// TestLaunchRelaunchAndFirstTurn: a relaunch whose tally starts at 0 is not
// movement; a tally above 0 on a launch's first turn is.
func TestLaunchRelaunchAndFirstTurn(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config))
	h.deliver(sdk(10, plainUnit("launch-A"), plainTurn("launch-A", 1, 0, 1)))
	h.deliver(sdk(11, plainUnit("launch-A"), plainTurn("launch-A", 2, 3, 1)))
	h.deliver(sdk(12, plainUnit("launch-B"), plainTurn("launch-B", 1, 0, 1)))
	h.deliver(sdk(13, plainUnit("launch-C"), plainTurn("launch-C", 1, 2, 1)))
	for _, c := range []struct {
		trace byte
		cause string
	}{{10, semconv.CauseNone}, {11, semconv.CausePool}, {12, semconv.CauseNone}, {13, semconv.CausePool}} {
		if cause, ev := h.causeOf(c.trace); cause != c.cause {
			t.Errorf("trace %d: %s (%s), want %s", c.trace, cause, ev, c.cause)
		}
	}
}

// TestOwnHistoryWins: a turn that carries its own history is read by it,
// and a disagreement with what the processor kept is counted.
func TestOwnHistoryWins(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config))
	h.deliver(sdk(10, plainUnit("launch-A"), plainTurn("launch-A", 1, 0, 1)))
	own := plainTurn("launch-A", 2, 1, 1)
	own.attrs[semconv.PoolResetsBefore] = int64(1) // the phone says the tally stood at 1
	h.deliver(sdk(11, plainUnit("launch-A"), own))
	if cause, ev := h.causeOf(11); cause != semconv.CauseNone {
		t.Fatalf("own history 1→1: %s (%s), want none (the turn's own history wins)", cause, ev)
	}
	if got := h.counter("otelcol_processor_verdict_history_disagreements")[""]; got != 1 {
		t.Fatalf("history_disagreements = %d, want 1", got)
	}
}

// TestLaunchesBounded: past launches.max the least recently seen launch is
// forgotten and counted; an idle one too.
func TestLaunchesBounded(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Launches = LaunchesConfig{Max: 2, Idle: time.Hour}
	h := newHarness(t, cfg)
	for i, l := range []string{"a", "b", "c"} {
		h.deliver(sdk(byte(10+i), plainUnit(l), plainTurn(l, 1, 0, 1)))
	}
	if n := h.p.launches.Len(); n != 2 {
		t.Fatalf("%d launches kept, max 2", n)
	}
	if got := h.counter("otelcol_processor_verdict_launches_forgotten")["limit"]; got != 1 {
		t.Fatalf("launches_forgotten{limit} = %d, want 1", got)
	}
	h.advance(time.Hour)
	if got := h.counter("otelcol_processor_verdict_launches_forgotten")["idle"]; got != 2 || h.p.launches.Len() != 0 {
		t.Fatalf("launches_forgotten{idle} = %d with %d kept, want 2 and 0", got, h.p.launches.Len())
	}
	if got := h.counter("otelcol_processor_verdict_launches")[""]; got != 0 {
		t.Fatalf("launches gauge %d after all were forgotten", got)
	}
}

// TestLaunchHistoryAcrossARestart: the launch's earlier turns are stored
// beside the held turns, so a restart does not forget the previous turn's
// tally.
func TestLaunchHistoryAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	h, host := storedHarness(t, dir, EmitVerdicts)
	for i, lt := range launchTurns[:2] {
		h.deliver(sdk(byte(10+i), plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
	}
	h.stop(host)
	h2, host2 := storedHarness(t, dir, EmitVerdicts)
	defer h2.stop(host2)
	for i, lt := range launchTurns[2:] {
		h2.deliver(sdk(byte(12+i), plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players)))
	}
	for i, lt := range launchTurns[2:] {
		cause, ev := h2.causeOf(byte(12 + i))
		if cause != lt.cause || !strings.Contains(ev, lt.evidence) {
			t.Errorf("after the restart, turn %d: %s (%s), want %s (%s)", lt.index, cause, ev, lt.cause, lt.evidence)
		}
	}
}

// TestLaunchBoundariesOverOTLP: a client that reuses its
// service.instance.id across a relaunch or a reboot has its launches told
// apart by evidence that holds, between turns next to each other in time:
// the turn index not going up, app_uptime dropping, device_uptime
// dropping. A phone asleep between turns (its uptime growing more slowly
// than its clock) stays one launch (docs/decisions/0249).
func TestLaunchBoundariesOverOTLP(t *testing.T) {
	type sent struct {
		index, pool, players int64
		ago                  time.Duration // before baseTime, on the phone's clock
		app, device          float64       // 0: not reported
		cause                string        // "": not checked
		evidence             string
	}
	const none, pool, state = semconv.CauseNone, semconv.CausePool, semconv.CauseState
	for _, c := range []struct {
		name  string
		turns []sent
	}{
		{"reused ID, the index goes back", []sent{
			{1, 2, 1, 10 * time.Minute, 10, 0, pool, ""},
			{2, 2, 1, 9 * time.Minute, 70, 0, none, ""},
			{1, 0, 1, 2 * time.Minute, 5, 0, none, "a new launch under the same service.instance.id: the turn index did not go up (turn 1 after turn 2)"},
			{2, 1, 1, time.Minute, 65, 0, pool, "pool_reset moved 0→1 since the previous turn"},
		}},
		{"reused ID, app_uptime drops", []sent{
			{1, 0, 1, 10 * time.Minute, 10, 0, "", ""},
			{2, 0, 2, 9 * time.Minute, 70, 0, "", ""},
			{3, 0, 3, 8 * time.Minute, 130, 0, "", ""},
			{4, 0, 4, time.Minute, 5, 0, none, "turn 3 of this launch not seen; a new launch under the same service.instance.id: app_uptime dropped (5.00 s after 130.00 s)"},
		}},
		{"reused ID, device_uptime drops (a reboot)", []sent{
			{1, 0, 1, 10 * time.Minute, 0, 5000, "", ""},
			{2, 0, 2, 9 * time.Minute, 0, 5060, "", ""},
			{3, 0, 3, 8 * time.Minute, 0, 5120, "", ""},
			{4, 0, 4, time.Minute, 0, 30, none, "turn 3 of this launch not seen; a new launch under the same service.instance.id: device_uptime dropped (30.00 s after 5120.00 s: a reboot)"},
		}},
		{"asleep between turns: one launch", []sent{
			{1, 0, 1, 8 * time.Minute, 10, 0, "", ""},
			{2, 0, 2, 6 * time.Minute, 70, 0, "", ""},
			{3, 2, 3, 4 * time.Minute, 130, 0, pool, "pool_reset moved 0→2 since the previous turn"},
			{4, 2, 4, 2 * time.Minute, 190, 0, state, "players 1→2→3→4 rose on each of the last 3 turns"},
		}},
		{"the old launch's late turn after the relaunch", []sent{
			{1, 2, 1, 10 * time.Minute, 10, 0, pool, ""},
			{1, 0, 1, 2 * time.Minute, 5, 0, none, ""},
			{2, 2, 1, 9 * time.Minute, 70, 0, none, "no rule fired"},
			{2, 1, 1, time.Minute, 65, 0, pool, "pool_reset moved 0→1 since the previous turn"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			h := newHarness(t, cfg)
			for i, s := range c.turns {
				tr := plainTurn("launch-A", s.index, s.pool, s.players)
				tr.ago = s.ago
				if s.app != 0 {
					tr.attrs[semconv.HealthAppUptime] = s.app
				}
				if s.device != 0 {
					tr.attrs[semconv.HealthDeviceUptime] = s.device
				}
				u := plainUnit("launch-A")
				u.ago = s.ago
				h.deliver(sdk(byte(10+i), u, tr))
			}
			h.advance(cfg.HistoryWait)
			for i, s := range c.turns {
				if s.cause == "" {
					continue
				}
				cause, ev := h.causeOf(byte(10 + i))
				if cause != s.cause || !strings.Contains(ev, s.evidence) {
					t.Errorf("arrival %d, turn %d: %s (%s), want %s (%s)", i+1, s.index, cause, ev, s.cause, s.evidence)
				}
			}
		})
	}
}
