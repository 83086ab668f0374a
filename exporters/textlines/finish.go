package textlines

import (
	"fmt"
	"math"
)

// Once a line's tokens are read: the per-unit lists merged into units, and
// what the line says checked against itself.

func (r *reader) inconsistent(format string, args ...any) {
	r.fail(Fault{Reason: ReasonInconsistent, Problem: fmt.Sprintf(format, args...)})
}

// finishTurn merges the per-unit lists and checks the line against itself.
func (r *reader) finishTurn() {
	t := &r.rec.Turn
	t.Units = r.mergeUnits(r.unitCount())
	r.checkTotals(t.Units)
	r.dropUnrecorded()
	r.countChanges()
}

// unitCount is how many units the line has: units= when given, else its
// per-unit lists, else the highest unit broke names; a list that disagrees
// is inconsistent.
func (r *reader) unitCount() int {
	t := &r.rec.Turn
	has := r.rec.Present.Has
	n := len(r.gaps)
	if has(FUnitUnderruns) {
		if n > 0 && len(r.perUnit) != n {
			r.inconsistent("underruns lists %d units, gaps %d", len(r.perUnit), n)
		}
		n = len(r.perUnit)
	}
	if t.DeclaredUnits >= 0 {
		if has(FGaps) && len(r.gaps) != t.DeclaredUnits || has(FUnitUnderruns) && len(r.perUnit) != t.DeclaredUnits {
			r.inconsistent("units=%d but the line lists %d", t.DeclaredUnits, n)
		}
		n = t.DeclaredUnits
	}
	listed := t.DeclaredUnits >= 0 || has(FGaps) || has(FUnitUnderruns)
	for _, b := range r.brokenUnits {
		if b.Index > n {
			if listed {
				r.inconsistent("broke names unit %d of %d", b.Index, n)
				continue
			}
			n = b.Index // units known only from broke
		}
	}
	return n
}

// underrunsKnown says whether the line tells every unit's underruns: a
// per-unit list does, and so does broke= (every unit not in it had none).
func (r *reader) underrunsKnown() bool {
	return r.rec.Present.Has(FBroke) || r.rec.Present.Has(FUnitUnderruns)
}

// mergeUnits makes the line's n units from its per-unit lists.
func (r *reader) mergeUnits(n int) []UnitReading {
	t := &r.rec.Turn
	has := r.rec.Present.Has
	units := make([]UnitReading, n)
	for i := range units {
		units[i] = UnitReading{Index: i + 1}
		if i < len(r.gaps) {
			units[i] = r.gaps[i]
		}
		if i < len(r.perUnit) {
			units[i].Underruns, units[i].HasUnderruns = r.perUnit[i], true
		}
	}
	// A canonical line (no per-unit list) says every unit not in broke had
	// no underrun.
	known := r.underrunsKnown()
	// So does a line whose total is 0.
	if known && !has(FUnitUnderruns) || !known && has(FUnderruns) && t.Underruns == 0 {
		for i := range units {
			units[i].HasUnderruns = true
		}
	}
	for _, b := range r.brokenUnits {
		if b.Index > n {
			continue // refused by unitCount
		}
		u := &units[b.Index-1]
		if u.HasUnderruns && has(FUnitUnderruns) && u.Underruns != b.Underruns {
			r.inconsistent("unit %d: underruns says %d, broke %d", b.Index, u.Underruns, b.Underruns)
		}
		u.Underruns, u.HasUnderruns = b.Underruns, true
		u.Silent, u.Cushion, u.TakeID, u.HasBrokenUnit = b.Silent, b.Cushion, b.TakeID, true
	}
	return units
}

// checkTotals checks the canonical totals against the units they sum.
func (r *reader) checkTotals(units []UnitReading) {
	t := &r.rec.Turn
	has := r.rec.Present.Has
	sum, silent := 0, 0.0
	for _, u := range units {
		sum += u.Underruns
		silent += u.Silent
	}
	if has(FUnderruns) && r.underrunsKnown() && sum != t.Underruns {
		r.inconsistent("underruns=%d but the units add up to %d", t.Underruns, sum)
	}
	if has(FSilent) && has(FBroke) && math.Abs(silent-t.Silent) > 0.005*float64(len(r.brokenUnits)+1) {
		r.inconsistent("silent=%.2f but broke adds up to %.2f", t.Silent, silent)
	}
}

// dropUnrecorded: the canonical line prints zeros for the groups the SDK
// was not given (and bt=no without a route): they read as not recorded.
func (r *reader) dropUnrecorded() {
	t := &r.rec.Turn
	if r.uptimeKey && t.DeviceUptime == 0 && t.AppUptime == 0 && t.Activations == 0 && t.Memory == 0 {
		r.rec.Present &^= FDeviceUptime | FAppUptime | FActivations | FMemory
	}
	if r.btKey && !t.Bluetooth && !r.rec.Present.Has(FRoute) {
		r.rec.Present &^= FBluetooth
	}
}

// countChanges: a line that lists its route changes counts them.
func (r *reader) countChanges() {
	t := &r.rec.Turn
	if r.rec.Present.Has(FChanges) {
		if r.rec.Present.Has(FRouteChanges) && t.RouteChanges != len(t.Changes) {
			r.inconsistent("route_changes=%d but %d changes listed", t.RouteChanges, len(t.Changes))
		}
		t.RouteChanges = len(t.Changes)
		r.set(FRouteChanges)
	}
}

func (r *reader) finishTake() {
	if !r.rec.Present.Has(FTake) && !r.faulted(takeFields[0].key) {
		r.fail(Fault{Reason: ReasonBadValue, Field: "take", Problem: "no take id given", Form: takeFields[0].form})
		return
	}
	r.rec.Take.TraceID = r.rec.TraceID
}
