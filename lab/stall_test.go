package lab

import (
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"testing"
	"time"
)

func TestWatchdogLongest(t *testing.T) {
	w := &watchdog{}
	t0 := time.Now()
	w.pauses = []pause{
		{at: t0.Add(2 * time.Second), dur: 300 * time.Millisecond},
		{at: t0.Add(5 * time.Second), dur: 900 * time.Millisecond},
	}
	for _, c := range []struct {
		from, to time.Duration
		want     time.Duration
	}{
		{0, time.Second, 0},
		{0, 3 * time.Second, 300 * time.Millisecond},
		{1900 * time.Millisecond, 10 * time.Second, 900 * time.Millisecond},
		{4500 * time.Millisecond, 4600 * time.Millisecond, 900 * time.Millisecond}, // inside the pause
		{6 * time.Second, 7 * time.Second, 0},
	} {
		if got := w.longest(t0.Add(c.from), t0.Add(c.to)); got != c.want {
			t.Errorf("[%v, %v]: %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// TestWatchdogStops: while it runs, the watchdog records a real pause of
// the process (stopped and continued from outside, by a child's SIGSTOP and
// SIGCONT); once closed, its goroutine has ended and a second pause is
// recorded by nothing.
func TestWatchdogStops(t *testing.T) {
	const stopped = 200 * time.Millisecond // 10 times what the watchdog calls a pause
	w := startWatchdog()
	pauseProcess(t, stopped)
	// The pause is seen at the first tick after the process continues. On
	// a busy machine a late tick can be recorded first, so the wait is for
	// the stop's own pause, and what was recorded is counted only once the
	// watchdog is closed.
	seen := false
	for deadline := time.Now().Add(2 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(watchTick) {
		for _, p := range pausesOf(w) {
			seen = seen || p.dur >= stopped/2
		}
	}
	w.close()
	if !seen {
		t.Fatalf("the process was stopped for %s and the watchdog recorded no such pause (%v): it was not watching", stopped, pausesOf(w))
	}
	select {
	case <-w.done:
	default:
		t.Fatal("close returned while the watchdog's goroutine still runs")
	}
	before := len(pausesOf(w))
	pauseProcess(t, stopped)
	time.Sleep(20 * watchTick) // ticks enough for a watchdog still running to record it
	if after := pausesOf(w); len(after) != before {
		t.Errorf("after close the watchdog recorded %d more pauses (%v): it did not stop", len(after)-before, after[before:])
	}
}

// pauseProcess stops this process for d and continues it, from a child
// shell: a pause ordered from outside, as another program holding the
// machine's cores would cause.
func pauseProcess(t *testing.T, d time.Duration) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `kill -STOP "$1" && sleep "$2"; kill -CONT "$1"`,
		"sh", strconv.Itoa(os.Getpid()), strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("stopping and continuing the test process: %v\n%s", err, out)
	}
}

func pausesOf(w *watchdog) []pause {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]pause(nil), w.pauses...)
}

func TestRetryOnlyDisturbedMismatches(t *testing.T) {
	turns := []TurnResult{
		{Scenario: "a", Turn: 1, OK: true},
		{Scenario: "a", Turn: 2, OK: false, Disturbed: true},
		{Scenario: "b", Turn: 1, OK: false},
		{Scenario: "c", Turn: 1, OK: true, Disturbed: true},
	}
	if !disturbedMismatch(turns, "a") || disturbedMismatch(turns, "b") || disturbedMismatch(turns, "c") {
		t.Error("only a disturbed turn that missed its expectation earns a second run")
	}
	got := replace(turns, []TurnResult{{Scenario: "a", Turn: 1, OK: true}, {Scenario: "a", Turn: 2, OK: true}})
	want := []TurnResult{
		{Scenario: "a", Turn: 1, OK: true, Attempt: 2},
		{Scenario: "a", Turn: 2, OK: true, Attempt: 2},
		{Scenario: "b", Turn: 1, OK: false},
		{Scenario: "c", Turn: 1, OK: true, Disturbed: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replace =\n %+v, want\n %+v", got, want)
	}
}
