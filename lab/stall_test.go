package lab

import (
	"reflect"
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

// The watchdog starts and stops cleanly (a real pause of the process cannot
// be ordered from inside it).
func TestWatchdogStops(t *testing.T) {
	w := startWatchdog()
	time.Sleep(30 * time.Millisecond)
	w.close()
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
