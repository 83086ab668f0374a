package verdict

import (
	"fmt"
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
)

// What is bad in a reading, in one place and in one set of words: the
// readers (attrReader) note it so in a verdict's evidence, and the live
// check (`percause check`, ValueFault) reports it so against the registry.

// Kinds of fault ValueFault finds.
const (
	FaultMistyped = "mistyped" // a value of the wrong type
	FaultRange    = "range"    // a number out of range: negative, NaN, infinite
)

func mistyped(v pcommon.Value, want string) string {
	return "is a " + strings.ToLower(v.Type().String()) + ", want " + want
}

func notWhole(d float64) string { return fmt.Sprintf("is %v, want an integer", d) }

func notFinite(d float64) string { return fmt.Sprintf("is %v", d) }

func negativeCount(n int64) string { return fmt.Sprintf("is negative (%d)", n) }

func negativeNumber(d float64) string { return fmt.Sprintf("is negative (%v)", d) }

func negativeDuration(d float64) string { return fmt.Sprintf("is a negative duration (%.2f s)", d) }

// isDuration says whether a registered number is seconds (a duration),
// which the words of a negative one name.
func isDuration(n semconv.Name) bool {
	return n.Type == "double" && strings.Contains(n.Meaning, "seconds") && !strings.Contains(n.Meaning, "per second")
}

// ValueFault judges a value against its registry entry as the readers
// judge the same value (its type, whole, finite, not negative unless the
// registry says it may be), in the same words: the kind of fault and what
// is wrong after the name ("" when nothing is). A value out of a bounded
// set is the check's alone: no rule decides it bad input.
func ValueFault(n semconv.Name, v pcommon.Value) (kind, detail string) {
	switch n.Type {
	case "int":
		var x int64
		switch v.Type() {
		case pcommon.ValueTypeInt:
			x = v.Int()
		case pcommon.ValueTypeDouble:
			w, ok := wholeNumber(v.Double())
			if !ok {
				return FaultMistyped, notWhole(v.Double())
			}
			x = w
		default:
			return FaultMistyped, mistyped(v, "an integer")
		}
		if x < 0 && !n.Signed {
			return FaultRange, negativeCount(x)
		}
	case "double":
		var d float64
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			d = v.Double()
		case pcommon.ValueTypeInt:
			d = float64(v.Int())
		default:
			return FaultMistyped, mistyped(v, "a number")
		}
		switch {
		case math.IsNaN(d) || math.IsInf(d, 0):
			return FaultRange, notFinite(d)
		case d < 0 && !n.Signed && isDuration(n):
			return FaultRange, negativeDuration(d)
		case d < 0 && !n.Signed:
			return FaultRange, negativeNumber(d)
		}
	case "bool":
		if v.Type() != pcommon.ValueTypeBool {
			return FaultMistyped, mistyped(v, "a bool")
		}
	case "string":
		if v.Type() != pcommon.ValueTypeStr {
			return FaultMistyped, mistyped(v, "a string")
		}
	case "string[]":
		if v.Type() != pcommon.ValueTypeSlice {
			return FaultMistyped, mistyped(v, "a string array")
		}
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if e := s.At(i); e.Type() != pcommon.ValueTypeStr {
				return FaultMistyped, fmt.Sprintf("[%d] %s", i, mistyped(e, "a string"))
			}
		}
	case "int[]":
		if v.Type() != pcommon.ValueTypeSlice {
			return FaultMistyped, mistyped(v, "an int array")
		}
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			e := s.At(i)
			var x int64
			switch e.Type() {
			case pcommon.ValueTypeInt:
				x = e.Int()
			case pcommon.ValueTypeDouble:
				w, ok := wholeNumber(e.Double())
				if !ok {
					return FaultMistyped, fmt.Sprintf("[%d] %s", i, notWhole(e.Double()))
				}
				x = w
			default:
				return FaultMistyped, fmt.Sprintf("[%d] %s", i, mistyped(e, "an integer"))
			}
			if x < 0 {
				return FaultRange, fmt.Sprintf("[%d] %s", i, negativeCount(x))
			}
		}
	}
	return "", ""
}
