package textlines

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// What is wrong with a refused line: a Fault for each thing, a LineError
// for the line; and, inside the reader, the fault a field's read returns
// before the reader names the field.

// Reasons a line is refused. The set is bounded: they label a metric.
const (
	ReasonSyntax       = "syntax"       // a token is not key=value, +flag, a group or a route change
	ReasonBadValue     = "bad_value"    // a value is not what its field holds (a number, an int, yes/no, …)
	ReasonBadTrace     = "bad_trace"    // the trace ID is not 32 hex digits (or is all zeros)
	ReasonDuplicate    = "duplicate"    // a field given twice
	ReasonInconsistent = "inconsistent" // the line contradicts itself (units=3 with 2 gaps, underruns that broke does not add up to)
	ReasonTooLong      = "too_long"     // past MaxLineBytes, MaxUnits, MaxChanges or MaxLiveKinds
	ReasonNoReadings   = "no_readings"  // the tag and nothing the reader knows
)

// Reasons lists every refusal reason, in a fixed order.
var Reasons = []string{ReasonSyntax, ReasonBadValue, ReasonBadTrace, ReasonDuplicate, ReasonInconsistent, ReasonTooLong, ReasonNoReadings}

// ErrNotALine is returned by Read for a line that carries neither tag: other
// log lines, which a reader skips without counting them as malformed.
var ErrNotALine = errors.New("textlines: no [voice-turn] or [tts-take] tag")

// Fault is one thing wrong with a refused line.
type Fault struct {
	Reason string // one of Reasons
	// Field is the key as the line spells it ("live", "health:app_uptime",
	// "route_change@1.20"); "" when the fault is the line's as a whole.
	Field string
	Value string // the value as given (clipped), "" when it is not the fault
	// Problem says what is wrong when the form alone does not.
	Problem string
	// Form is the form the field's value takes, for a value it could not
	// read.
	Form string
}

func (f Fault) String() string {
	var b strings.Builder
	if f.Field != "" {
		b.WriteString(f.Field)
		if f.Value != "" {
			b.WriteByte('=')
			b.WriteString(strconv.Quote(f.Value))
		}
		b.WriteString(": ")
	}
	switch {
	case f.Problem != "" && f.Form != "":
		b.WriteString(f.Problem)
		b.WriteString(" — want ")
		b.WriteString(f.Form)
	case f.Form != "":
		b.WriteString("want ")
		b.WriteString(f.Form)
	default:
		b.WriteString(f.Problem)
	}
	return b.String()
}

// LineError is why a tagged line was refused: every fault it has.
type LineError struct {
	Kind   Kind
	Reason string  // the first fault's reason: the line's, as counted
	Faults []Fault // in the order they were found, at most MaxFaults
	More   int     // faults found past MaxFaults
}

// Detail lists every fault, separated by "; ".
func (e *LineError) Detail() string {
	parts := make([]string, 0, len(e.Faults)+1)
	for _, f := range e.Faults {
		parts = append(parts, f.String())
	}
	if e.More > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", e.More))
	}
	return strings.Join(parts, "; ")
}

func (e *LineError) Error() string {
	return fmt.Sprintf("textlines: %s line refused (%s): %s", e.Kind, e.Reason, e.Detail())
}

// Unwrap makes every LineError an ErrSyntax.
func (e *LineError) Unwrap() error { return ErrSyntax }

// valueFault is what a field's read finds wrong with its value; the reader
// makes it a Fault with the field's key and form.
type valueFault struct{ reason, problem string }

func badValue(problem string) *valueFault {
	return &valueFault{reason: ReasonBadValue, problem: problem}
}

// in is the Fault of key=v, whose value takes form.
func (f *valueFault) in(key, v, form string) Fault {
	out := Fault{Reason: f.reason, Field: key, Value: clip(v), Problem: f.problem}
	if f.reason == ReasonBadValue || f.reason == ReasonBadTrace {
		out.Form = form
	}
	return out
}
