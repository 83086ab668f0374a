package linkstatus

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// Defaults of the Reconnecting rule (docs/domain.md), in person-time.
const (
	// DefaultFailures is how many check failures in a row the verdict needs:
	// one missed check is never enough.
	DefaultFailures = semconv.DefaultReconnectFailures
	// DefaultFailingFor is how long the check must have been failing, counted
	// from the first failure of the current run.
	DefaultFailingFor = semconv.DefaultReconnectFailingFor
	// DefaultQuiet is how long nothing may have been heard from the engine
	// (streamed words and other answers count as hearing from it).
	DefaultQuiet = semconv.DefaultReconnectQuiet
	// DefaultCheck names the check whose failures the verdict reads.
	DefaultCheck = "progress check"
)

// Thresholds configure the Reconnecting rule.
type Thresholds struct {
	Failures   int
	FailingFor time.Duration
	Quiet      time.Duration
}

// DefaultThresholds returns the rule's thresholds as docs/domain.md fixes them.
func DefaultThresholds() Thresholds {
	return Thresholds{Failures: DefaultFailures, FailingFor: DefaultFailingFor, Quiet: DefaultQuiet}
}

// Validate reports thresholds that would make the verdict meaningless.
func (t Thresholds) Validate() error {
	var errs []error
	if t.Failures < 1 {
		errs = append(errs, fmt.Errorf("linkstatus: Failures must be at least 1, got %d", t.Failures))
	}
	if t.FailingFor < 0 {
		errs = append(errs, fmt.Errorf("linkstatus: FailingFor must not be negative, got %s", t.FailingFor))
	}
	if t.Quiet < 0 {
		errs = append(errs, fmt.Errorf("linkstatus: Quiet must not be negative, got %s", t.Quiet))
	}
	return errors.Join(errs...)
}

// Readings are what the Reconnecting verdict reads at one instant. Durations
// are person-time (wall time multiplied by the time scale).
type Readings struct {
	// Check names the failing check ("progress check").
	Check string
	// Failures is how many times in a row the check has failed (0: its last
	// ask was answered).
	Failures int
	// FailingFor is the time since the first failure of the current run.
	FailingFor time.Duration
	// QuietFor is the time since anything was last heard from the engine.
	QuietFor time.Duration
}

// Verdict is the outcome of the Reconnecting rule.
type Verdict struct {
	// Show is true when "Reconnecting" may be shown.
	Show bool
	// Message names the failing check and how long it has failed (empty when
	// Show is false).
	Message string
	// Why says which condition held the verdict back (empty when Show).
	Why      string
	Readings Readings
}

// Reconnecting is the verdict as a pure function: it shows only when the
// check has failed th.Failures times in a row, has been failing for at least
// th.FailingFor and nothing has been heard from the engine for th.Quiet. One
// missed check, a check that failed only briefly, or an engine whose words are
// still arriving never reads as the engine's absence.
func Reconnecting(r Readings, th Thresholds) Verdict {
	v := Verdict{Readings: r}
	switch {
	case r.Failures < th.Failures:
		v.Why = fmt.Sprintf("%d failure(s) in a row, fewer than %d", r.Failures, th.Failures)
	case r.FailingFor < th.FailingFor:
		v.Why = fmt.Sprintf("failing for %s, under %s", Seconds(r.FailingFor), Seconds(th.FailingFor))
	case r.QuietFor < th.Quiet:
		v.Why = fmt.Sprintf("heard from the engine %s ago, under %s", Seconds(r.QuietFor), Seconds(th.Quiet))
	default:
		v.Show = true
		check := r.Check
		if check == "" {
			check = DefaultCheck
		}
		v.Message = fmt.Sprintf("Reconnecting: the %s has failed for %s (%d times in a row).", check, Seconds(r.FailingFor), r.Failures)
	}
	return v
}

// Seconds renders a duration the way status lines speak: whole seconds,
// rounded down ("16 s").
func Seconds(d time.Duration) string {
	return fmt.Sprintf("%d s", int64(math.Floor(d.Seconds())))
}
