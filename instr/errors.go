package instr

import (
	"errors"
	"fmt"
	"math"
)

// Errors returned by recording calls. Use errors.Is.
var (
	// ErrInvalid is wrapped by every bad-input error (see InputError).
	ErrInvalid = errors.New("invalid input")
	// ErrEnded is returned when a turn or take is used after End.
	ErrEnded = errors.New("already ended")
)

// InputError says which value of which call was refused and why.
type InputError struct {
	Call   string // e.g. "Turn.Unit"
	Field  string // e.g. "Gap"
	Value  any
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("instr: %s: %s = %v: %s", e.Call, e.Field, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *InputError) Unwrap() error { return ErrInvalid }

func endedError(call string) error { return fmt.Errorf("instr: %s: %w", call, ErrEnded) }

// checkSeconds refuses NaN, infinities and negative durations.
func checkSeconds(call, field string, v float64) error {
	switch {
	case math.IsNaN(v):
		return &InputError{call, field, v, "not a number"}
	case math.IsInf(v, 0):
		return &InputError{call, field, v, "infinite"}
	case v < 0:
		return &InputError{call, field, v, "negative duration"}
	}
	return nil
}

// checkFinite refuses NaN and infinities (for values that may be negative).
func checkFinite(call, field string, v float64) error {
	switch {
	case math.IsNaN(v):
		return &InputError{call, field, v, "not a number"}
	case math.IsInf(v, 0):
		return &InputError{call, field, v, "infinite"}
	}
	return nil
}

func checkCount(call, field string, v int) error {
	if v < 0 {
		return &InputError{call, field, v, "negative count"}
	}
	return nil
}
