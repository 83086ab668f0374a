package verdict

import (
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// underranTurn is a turn of n units, each of which underran on a take that
// arrived, the units added in the order given.
func underranTurn(order []int64) *Trace {
	c := DefaultRules()
	p := &Trace{Turn: &TurnReadings{Index: 2, Units: int64(len(order)), Resource: pcommon.NewResource()}}
	for _, i := range order {
		id := fmt.Sprintf("t%d", i)
		p.AddUnit(&Unit{SpanID: pcommon.SpanID{byte(i)}, Index: i, TakeID: id, Underruns: 1, Silent: 0.2, Cushion: 1}, &c)
		p.AddTake(Take{SpanID: pcommon.SpanID{0x80 | byte(i)}, ID: id, Need: 0.5})
	}
	return p
}

// TestUnitsAreReadInIndexOrder: units that arrived out of order are read
// in index order, as units that arrived in order are, and deciding leaves
// the trace's units as they arrived.
func TestUnitsAreReadInIndexOrder(t *testing.T) {
	c := DefaultRules()
	inOrder := Decide(underranTurn([]int64{1, 2, 3, 4}), nil, &c, Forced{})
	shuffled := underranTurn([]int64{3, 1, 4, 2})
	got := Decide(shuffled, nil, &c, Forced{})
	if got.Evidence != inOrder.Evidence {
		t.Errorf("out of order: %q\nin order:     %q", got.Evidence, inOrder.Evidence)
	}
	var units []int64
	for _, u := range got.Underran {
		units = append(units, u.Unit)
	}
	if !slices.Equal(units, []int64{1, 2, 3, 4}) {
		t.Errorf("underrun events for units %v, want 1 to 4 in order", units)
	}
	var kept []int64
	for _, u := range shuffled.Units {
		kept = append(kept, u.Index)
	}
	if !slices.Equal(kept, []int64{3, 1, 4, 2}) {
		t.Errorf("deciding reordered the trace's units: %v", kept)
	}
}

// TestReserveGrowsEachListOnce: a turn whose units and takes come together
// makes room for them once, within MaxUnits.
func TestReserveGrowsEachListOnce(t *testing.T) {
	c := DefaultRules()
	units := make([]Unit, 20) // read by the caller, as a batch's are
	for i := range units {
		units[i] = Unit{SpanID: pcommon.SpanID{byte(i + 1)}, Index: int64(i + 1), TakeID: "t"}
	}
	allocs := testing.AllocsPerRun(100, func() {
		var p Trace
		p.Reserve(20, 20)
		for i := 0; i < 20; i++ {
			p.AddUnit(&units[i], &c)
			p.AddTake(Take{SpanID: pcommon.SpanID{0x80 | byte(i)}, ID: takeIDs[i]})
		}
	})
	// The unit spans' list and the takes' list (without Reserve: 6). No
	// rule reads a unit that did not underrun, so none is kept and Units
	// makes no room.
	if allocs != 2 {
		t.Errorf("20 units and 20 takes after Reserve allocated %v times, want 2 (one a list)", allocs)
	}
	var p Trace
	p.Reserve(MaxUnits+10, 1)
	if cap(p.UnitSpans) != MaxUnits {
		t.Errorf("reserved room for %d unit spans, want at most MaxUnits (%d)", cap(p.UnitSpans), MaxUnits)
	}
	if cap(p.Takes) != firstUnits {
		t.Errorf("one take made room for %d, want firstUnits (%d)", cap(p.Takes), firstUnits)
	}
	p.UnitSpans = p.UnitSpans[:MaxUnits]
	before := cap(p.UnitSpans)
	p.Reserve(5, 0)
	if cap(p.UnitSpans) != before {
		t.Errorf("a full list grew from %d to %d", before, cap(p.UnitSpans))
	}
}

var takeIDs = func() []string {
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = fmt.Sprintf("t%d", i+1)
	}
	return ids
}()
