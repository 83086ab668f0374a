package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/phone"
	"github.com/percause/percause/lab/scenario"
)

// The whole scenario table runs once, through a real `percause collector`
// child process; each scenario's test then reads its turns. One run keeps
// the suite's wall time near a minute.
//
// testScale is half the demo's: tests share the machine with other
// packages' tests and builds, and a person-second of 400 ms keeps their
// scheduling noise well clear of the thresholds the rules read.
const testScale = DefaultScale / 2

var (
	runOnce sync.Once
	runRes  *Result
	runErr  error
)

func results(t *testing.T) *Result {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end: starts the collector and runs every scenario")
	}
	bin := testenv.PercauseBin(t)
	runOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		runRes, runErr = Run(ctx, scenario.All, WithCollectorBinary(bin), WithScale(testScale), WithTextLogs(textLogs))
	})
	if runErr != nil {
		t.Fatalf("lab run: %v", runErr)
	}
	return runRes
}

func turnsOf(t *testing.T, name string) []TurnResult {
	t.Helper()
	var out []TurnResult
	for _, tr := range results(t).Turns {
		if tr.Scenario == name {
			out = append(out, tr)
		}
	}
	ss, err := scenario.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(ss[0].Turns) {
		t.Fatalf("%s: %d turns ran, the table has %d", name, len(out), len(ss[0].Turns))
	}
	for _, tr := range out {
		t.Logf("%s", tr.Line())
	}
	return out
}

// verdictsAsExpected: the verdict from the real collector equals the
// scenario's expectation on every turn.
func verdictsAsExpected(t *testing.T, turns []TurnResult) {
	t.Helper()
	for _, tr := range turns {
		if !tr.OK {
			t.Errorf("%s turn %d: %s (readings %+v)", tr.Scenario, tr.Turn, tr.Mismatch, tr.Readings)
		}
		if tr.expect.Cause != "" && tr.Evidence == "" {
			t.Errorf("%s turn %d: verdict without evidence", tr.Scenario, tr.Turn)
		}
	}
}

// noFault asserts a turn carries none of the injected causes' readings.
func noFault(t *testing.T, tr TurnResult) {
	t.Helper()
	r := tr.Readings
	if r.Underruns != 0 || r.Silent != 0 {
		t.Errorf("turn %d: %d underruns, %.2f s silent", tr.Turn, r.Underruns, r.Silent)
	}
	if r.MinLead < -0.10 {
		t.Errorf("turn %d: a unit queued late (lead %.2f s)", tr.Turn, r.MinLead)
	}
	if r.RouteChanges != 0 || r.Stutter {
		t.Errorf("turn %d: %d route changes, stutter %v", tr.Turn, r.RouteChanges, r.Stutter)
	}
	if r.PoolResets != r.PoolResetsBefore {
		t.Errorf("turn %d: pool tally moved %d→%d", tr.Turn, r.PoolResetsBefore, r.PoolResets)
	}
	if r.ChecksFailed != 0 {
		t.Errorf("turn %d: %d checks failed", tr.Turn, r.ChecksFailed)
	}
	if r.ListenTotal > 1.5 {
		t.Errorf("turn %d: microphone open took %.2f s", tr.Turn, r.ListenTotal)
	}
	for _, s := range r.LinkStatuses {
		if s != semconv.LinkStatusOK {
			t.Errorf("turn %d: status line %s", tr.Turn, s)
		}
	}
	if r.Units == 0 || r.Takes != r.Units {
		t.Errorf("turn %d: %d units, %d takes", tr.Turn, r.Units, r.Takes)
	}
}

// phoneEndOfSpeech is the phone's end-of-speech window, seconds.
const phoneEndOfSpeech = phone.DefaultEndOfSpeech

func TestHealthy(t *testing.T) {
	turns := turnsOf(t, "healthy")
	verdictsAsExpected(t, turns)
	for i, want := range []string{semconv.LinkWifi, semconv.LinkCell + "/" + semconv.LinkSubtypeLTE} {
		r := turns[i].Readings
		if r.Link != want || r.SpeechEndToPost < phoneEndOfSpeech || r.SpeechEndToPost > budget {
			t.Errorf("turn %d: link %q, speech end to post %.2f s; want %s within %.0f s", i+1, r.Link, r.SpeechEndToPost, want, budget)
		}
	}
	for _, tr := range turns {
		noFault(t, tr)
		if tr.Readings.Cushion != 1.5 {
			t.Errorf("cushion %.2f", tr.Readings.Cushion)
		}
	}
	// No live count rises turn after turn.
	for k, v := range turns[1].Readings.Live {
		if b := turns[1].Readings.LiveBefore[k]; len(b) > 0 && v > b[len(b)-1] {
			t.Errorf("live %s rose %v→%d", k, b, v)
		}
	}
}

func TestNetwork(t *testing.T) {
	turns := turnsOf(t, "network")
	verdictsAsExpected(t, turns)
	for _, tr := range turns {
		r := tr.Readings
		if r.Underruns == 0 || r.Silent <= 0 {
			t.Errorf("turn %d: no underrun on a link slower than the audio", tr.Turn)
		}
		if r.NeedUnderrun < 0 || r.NeedUnderrun > r.Cushion {
			t.Errorf("turn %d: need %.2f s of a take that underran, want 0..cushion %.2f", tr.Turn, r.NeedUnderrun, r.Cushion)
		}
	}
}

func TestSynthesis(t *testing.T) {
	turns := turnsOf(t, "synthesis")
	verdictsAsExpected(t, turns)
	for _, tr := range turns {
		r := tr.Readings
		if r.Underruns == 0 {
			t.Errorf("turn %d: no underrun at half real time", tr.Turn)
		}
		if r.NeedUnderrun <= r.Cushion {
			t.Errorf("turn %d: need %.2f s, want above the cushion %.2f s", tr.Turn, r.NeedUnderrun, r.Cushion)
		}
	}
}

func TestBluetooth(t *testing.T) {
	turns := turnsOf(t, "bluetooth")
	verdictsAsExpected(t, turns)
	noFault(t, turns[0])
	r := turns[1].Readings
	if r.Underruns != 0 || !r.Bluetooth || r.RouteChanges != 2 || !r.Stutter {
		t.Errorf("flap turn: %d underruns, bluetooth %v, %d route changes, stutter %v (want 0, true, 2, true)",
			r.Underruns, r.Bluetooth, r.RouteChanges, r.Stutter)
	}
}

func TestLeak(t *testing.T) {
	turns := turnsOf(t, "leak")
	verdictsAsExpected(t, turns)
	for i, tr := range turns {
		r := tr.Readings
		if got := r.Live[semconv.LivePlayers]; got != i+1 {
			t.Errorf("turn %d: %d players live, want %d", tr.Turn, got, i+1)
		}
		var want []int
		for j := max(0, i-semconv.LiveHistory); j < i; j++ {
			want = append(want, j+1)
		}
		if got := r.LiveBefore[semconv.LivePlayers]; !slices.Equal(got, want) {
			t.Errorf("turn %d: players before %v, want %v", tr.Turn, got, want)
		}
	}
}

func TestStalePool(t *testing.T) {
	turns := turnsOf(t, "stale-pool")
	verdictsAsExpected(t, turns)
	noFault(t, turns[0])
	if r := turns[1].Readings; r.PoolResets <= r.PoolResetsBefore || r.ChecksFailed == 0 {
		t.Errorf("stale turn: tally %d→%d, %d checks failed: want the tally to move after failed checks",
			r.PoolResetsBefore, r.PoolResets, r.ChecksFailed)
	}
	// The lost link's last cause says so while the pool heals, instead of
	// "Checking why…", and the line clears once a check answers again.
	r := turns[1].Readings
	i := slices.Index(r.LinkStatuses, semconv.LinkStatusStaleConnection)
	if i < 0 || !strings.HasPrefix(r.LinkMessages[i], "Pippa is answering on a fresh connection") {
		t.Errorf("stale turn: status lines %v %q, want the stale connection named", r.LinkStatuses, r.LinkMessages)
	}
	if last := r.LinkStatuses[len(r.LinkStatuses)-1]; last != semconv.LinkStatusOK {
		t.Errorf("the stale connection's line did not clear after the heal: %v", r.LinkStatuses)
	}
	// Healed: the next turn finds fresh connections and the tally stays.
	noFault(t, turns[2])
	if r := turns[2].Readings; r.PoolResets == 0 {
		t.Errorf("the tally went back to 0 within the launch")
	}
}

func TestLateWords(t *testing.T) {
	turns := turnsOf(t, "late-words")
	verdictsAsExpected(t, turns)
	for _, tr := range turns {
		if r := tr.Readings; r.MinLead >= -0.10 || r.Underruns != 0 {
			t.Errorf("turn %d: lowest lead %.2f s, %d underruns: want a lead below -0.10 s and no underrun",
				tr.Turn, r.MinLead, r.Underruns)
		}
	}
}

func TestEngineRestart(t *testing.T) {
	turns := turnsOf(t, "engine-restart")
	verdictsAsExpected(t, turns)
	r := turns[0].Readings
	if i := slices.Index(r.LinkStatuses, semconv.LinkStatusEngineRestarting); i < 0 ||
		r.LinkMessages[i] != "Pippa is restarting, back in a few seconds." {
		t.Errorf("status lines %v %q", r.LinkStatuses, r.LinkMessages)
	}
	if slices.Contains(r.LinkStatuses, semconv.LinkStatusUnreachable) || slices.Contains(r.LinkStatuses, semconv.LinkStatusDeviceOffline) {
		t.Errorf("a restarting engine read as another loss: %v", r.LinkStatuses)
	}
	if last := r.LinkStatuses[len(r.LinkStatuses)-1]; last != semconv.LinkStatusOK {
		t.Errorf("the status line did not clear after the restart: %v", r.LinkStatuses)
	}
}

func TestOffline(t *testing.T) {
	turns := turnsOf(t, "offline")
	verdictsAsExpected(t, turns)
	r := turns[0].Readings
	if i := slices.Index(r.LinkStatuses, semconv.LinkStatusDeviceOffline); i < 0 || r.LinkMessages[i] != "This device is offline." {
		t.Errorf("status lines %v %q", r.LinkStatuses, r.LinkMessages)
	}
	if slices.Contains(r.LinkStatuses, semconv.LinkStatusUnreachable) || slices.Contains(r.LinkStatuses, semconv.LinkStatusEngineRestarting) {
		t.Errorf("an offline device read as the engine's fault: %v", r.LinkStatuses)
	}
}

func TestBurst(t *testing.T) {
	turns := turnsOf(t, "burst")
	verdictsAsExpected(t, turns)
	shared, split := turns[0].Readings, turns[1].Readings
	if shared.ChecksFailed == 0 {
		t.Errorf("one shared pool: all %d checks answered; want the check starved", shared.Checks)
	}
	if split.ChecksFailed != 0 {
		t.Errorf("lanes split: %d of %d checks failed; want none", split.ChecksFailed, split.Checks)
	}
	if turns[0].LaunchTurn != 1 || turns[1].LaunchTurn != 1 {
		t.Errorf("each arrangement is a launch of its own: launch turns %d, %d", turns[0].LaunchTurn, turns[1].LaunchTurn)
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	ctx := context.Background()
	for _, opts := range [][]Option{
		{WithScale(0), WithCollectorBinary("x")},
		{WithCollector("http://127.0.0.1:1", "")},
		{},
		{WithCollectorBinary("x"), WithVerdictTimeout(0)},
		{WithCollectorBinary("x"), WithParallel(0)},
	} {
		if _, err := Run(ctx, scenario.All, opts...); err == nil {
			t.Errorf("options %d accepted", len(opts))
		}
	}
	if _, err := Run(ctx, []scenario.Scenario{{Name: "x"}}, WithCollectorBinary("x")); err == nil {
		t.Error("a scenario without turns accepted")
	}
}

// The engine's takes are made (the lab's copy of its spans has them) but
// never reach the collector: the verdict names the missing takes instead of
// guessing network or synthesis.
func TestLostTakes(t *testing.T) {
	turns := turnsOf(t, "lost-takes")
	verdictsAsExpected(t, turns)
	r := turns[0].Readings
	if r.Underruns == 0 || r.Takes == 0 {
		t.Errorf("%d underruns, %d takes made", r.Underruns, r.Takes)
	}
	if !strings.Contains(turns[0].Evidence, "never arrived") {
		t.Errorf("evidence %q does not say a take never arrived", turns[0].Evidence)
	}
}

// allTurns is every turn of the run.
func allTurns(t *testing.T) []TurnResult { return results(t).Turns }

// TestStrictLinesShowOnlyWhereInjected: each wait line, and the stale
// connection, shows on every turn whose scenario injects its fault, and on
// no other turn of the whole table. Each is expected somewhere, so both
// halves are exercised.
func TestStrictLinesShowOnlyWhereInjected(t *testing.T) {
	for _, line := range scenario.Strict {
		t.Run(line, func(t *testing.T) {
			var shownOn, expectedOn []string
			for _, tr := range allTurns(t) {
				name := fmt.Sprintf("%s %d", tr.Scenario, tr.Turn)
				expect, shown := tr.expect.Shows(line), slices.Contains(tr.Readings.LinkStatuses, line)
				if expect {
					expectedOn = append(expectedOn, name)
				}
				if shown {
					shownOn = append(shownOn, name)
				}
				switch {
				case expect && !shown:
					t.Errorf("%s: its fault is injected and %s never showed (lines %v)", name, line, tr.Readings.LinkStatuses)
				case !expect && shown && !tr.Disturbed:
					t.Errorf("%s: %s showed without its fault (lines %v %q)", name, line, tr.Readings.LinkStatuses, tr.Readings.LinkShown)
				}
			}
			if len(expectedOn) == 0 {
				t.Fatalf("no scenario injects the fault of %s: the line is never shown to be shown", line)
			}
			t.Logf("%s expected on %v, shown on %v", line, expectedOn, shownOn)
		})
	}
}

// firstReadOf returns the messages of status line s as they first read;
// shownOf as they last read.
func firstReadOf(r Readings, s string) []string { return linesOf(r, s, r.LinkMessages) }
func shownOf(r Readings, s string) []string     { return linesOf(r, s, r.LinkShown) }

// linesOf returns texts[i] of each status line i that is s.
func linesOf(r Readings, s string, texts []string) []string {
	var out []string
	for i, st := range r.LinkStatuses {
		if st == s {
			out = append(out, texts[i])
		}
	}
	return out
}

// TestSlowMic: each turn's slow stage is named by "Opening the
// microphone…", and the wait rule reads the same turn.
func TestSlowMic(t *testing.T) {
	turns := turnsOf(t, "slow-mic")
	verdictsAsExpected(t, turns)
	for i, want := range []string{
		"Opening the microphone… waiting for the audio session.",
		"Opening the microphone… waiting for Pippa's listening grant (2 s).",
		"Opening the microphone… waiting for the listening socket.",
	} {
		if got := shownOf(turns[i].Readings, semconv.LinkStatusMicOpening); !slices.Contains(got, want) {
			t.Errorf("turn %d: the microphone's line read %q, want %q among them", i+1, got, want)
		}
	}
	// The other stages, quick on that turn, were never shown with it.
	if got := shownOf(turns[1].Readings, semconv.LinkStatusMicOpening); slices.ContainsFunc(got, func(m string) bool { return strings.Contains(m, "audio session") }) {
		t.Errorf("the grant's turn named the audio session: %q", got)
	}
}

// TestVoiceLate: a slow first byte reads "Getting her voice ready…" with
// the bulk lane's own probe answering; on a bulk lane full of the phone's
// own downloads, the line says it is busy instead of probing.
func TestVoiceLate(t *testing.T) {
	turns := turnsOf(t, "voice-late")
	verdictsAsExpected(t, turns)
	if got := shownOf(turns[0].Readings, semconv.LinkStatusVoiceLate); !slices.ContainsFunc(got, func(m string) bool {
		return strings.HasPrefix(m, "Getting her voice ready… Pippa is still making it (her audio connection answered in ")
	}) {
		t.Errorf("voice-late: %q, want the bulk probe's answer named", got)
	}
	held := turnsOf(t, "held-post")[1]
	if got := shownOf(held.Readings, semconv.LinkStatusVoiceLate); !slices.Contains(got, "Getting her voice ready… This device's audio lane is busy; waiting for it to clear.") {
		t.Errorf("held-post on split lanes: %q, want the busy bulk lane named", got)
	}
}

// budget is the done reading's speech-end-to-post allowance, seconds.
var budget = semconv.DefaultPostBudget.Seconds()

// TestDictationPosts: the phone posts her recording at the microphone's
// rate (32 KB a second: a minute on LTE is about 2 MB), and the end of
// speech to the post leaving the phone is measured within the budget, on
// Wi-Fi and on LTE.
func TestDictationPosts(t *testing.T) {
	for _, c := range []struct {
		scenario, link string
		speech         float64
	}{{"dictation", semconv.LinkWifi, 30}, {"dictation-lte", semconv.LinkCell + "/" + semconv.LinkSubtypeLTE, 60}} {
		turns := turnsOf(t, c.scenario)
		verdictsAsExpected(t, turns)
		r := turns[0].Readings
		if want := int(c.speech * 32000); r.PostBytes != want {
			t.Errorf("%s: posted %d bytes, want %d (%g s of 16 kHz 16-bit mono)", c.scenario, r.PostBytes, want, c.speech)
		}
		if r.Link != c.link {
			t.Errorf("%s: link %q, want %q", c.scenario, r.Link, c.link)
		}
		if r.SpeechEndToPost < phoneEndOfSpeech || r.SpeechEndToPost > budget {
			t.Errorf("%s: speech end to post %.2f s, want the end-of-speech window (%.1f s) or more, within %.0f s", c.scenario, r.SpeechEndToPost, phoneEndOfSpeech, budget)
		}
		if r.NotSent != 0 || slices.Contains(r.LinkStatuses, semconv.LinkStatusNotSent) {
			t.Errorf("%s: not sent %.1f s, lines %v", c.scenario, r.NotSent, r.LinkStatuses)
		}
	}
}

// TestHeldPost: on one shared pool the phone's own downloads hold her post
// ("not sent for 4s (6 other calls open)"): its end of speech to post is
// over the budget. With the lanes split the post leaves at once.
func TestHeldPost(t *testing.T) {
	turns := turnsOf(t, "held-post")
	verdictsAsExpected(t, turns)
	shared, split := turns[0].Readings, turns[1].Readings
	if shared.SpeechEndToPost <= budget || shared.NotSent < 2 {
		t.Errorf("shared pool: speech end to post %.2f s, not sent %.2f s; want over %.0f s, and not sent 2 s or more", shared.SpeechEndToPost, shared.NotSent, budget)
	}
	// As the line first reads, about 4 s after her end of speech, the six
	// downloads run for 4 s more. As it last reads, just before the post
	// leaves, they are ending: one may have, on a busy machine.
	if got := firstReadOf(shared, semconv.LinkStatusNotSent); !slices.ContainsFunc(got, func(m string) bool { return strings.HasSuffix(m, "(6 other calls open).") }) {
		t.Errorf("shared pool: %q as first read, want the six downloads counted as the other calls open", got)
	}
	if split.SpeechEndToPost > budget || split.NotSent != 0 {
		t.Errorf("lanes split: speech end to post %.2f s, not sent %.2f s; want within %.0f s and 0", split.SpeechEndToPost, split.NotSent, budget)
	}
}

// TestStalePost: a post written into a kept-alive connection that went
// stale while she spoke is not sent until its timeout ("not sent for
// 19s …"), then leaves on a fresh connection: far over the budget.
func TestStalePost(t *testing.T) {
	turns := turnsOf(t, "stale-post")
	verdictsAsExpected(t, turns)
	r := turns[0].Readings
	timeout := lanes.DefaultPostTimeout.Seconds()
	if r.SpeechEndToPost < timeout || r.NotSent < timeout-2 {
		t.Errorf("speech end to post %.2f s, not sent %.2f s; want the post's %.0f s timeout and more", r.SpeechEndToPost, r.NotSent, timeout)
	}
	if len(r.Errors) == 0 || !strings.Contains(r.Errors[0], "post") {
		t.Errorf("errors %q, want the first post's timeout", r.Errors)
	}
}
