package verdict

import (
	"slices"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Trace is everything the rules read of one trace: the readings of its
// voice.turn, voice.unit and tts.take spans, gathered as they arrive, in
// any order and over any number of batches. It holds readings, never
// spans.
type Trace struct {
	ID   pcommon.TraceID
	Turn *TurnReadings
	// ExtraTurns counts further voice.turn spans (other span IDs) in the
	// trace: bad input, reported as such.
	ExtraTurns int
	// UnitSpans is every voice.unit that arrived (to count them and to
	// recognise a duplicate); Units keeps the readings of only those a rule
	// can fire on (an underrun, a late lead, bad input), which keeps a
	// held turn small.
	UnitSpans []pcommon.SpanID
	Units     []Unit
	Takes     []Take
}

// Why a span's readings were not added to a trace (the reason attribute
// of the processor's dropped counter).
const (
	DropDuplicateSpan = "duplicate_span" // the same span twice in a trace
	DropDuplicateTake = "duplicate_take" // a second tts.take span with the same take id
	DropUnitLimit     = "unit_limit"     // more units or takes than a turn can hold
)

// AddTurn adds a voice.turn span's readings. It returns "" when the trace
// changed, else why not (a drop reason).
func (t *Trace) AddTurn(r *TurnReadings) string {
	switch {
	case t.Turn == nil:
		if t.HasSpan(r.SpanID) {
			return DropDuplicateSpan
		}
		t.Turn = r
	case t.Turn.SpanID == r.SpanID:
		return DropDuplicateSpan
	default:
		t.ExtraTurns++
	}
	return ""
}

// AddUnit adds a voice.unit span's readings, keeping them only when a rule
// reads the unit (c's thresholds say which). u is read, not kept: its
// readings are copied when kept.
func (t *Trace) AddUnit(u *Unit, c *Rules) string {
	if t.HasSpan(u.SpanID) {
		return DropDuplicateSpan
	}
	if len(t.UnitSpans) >= MaxUnits {
		return DropUnitLimit
	}
	if t.UnitSpans == nil {
		t.UnitSpans = make([]pcommon.SpanID, 0, firstUnits)
	}
	t.UnitSpans = append(t.UnitSpans, u.SpanID)
	if !keepUnit(u, c) {
		return "" // a healthy turn keeps none, and makes no room for any
	}
	if t.Units == nil {
		// The units a rule reads are a few of a turn's (those that
		// underran): grown from one, four took three steps.
		t.Units = make([]Unit, 0, firstKeptUnits)
	}
	t.Units = append(t.Units, *u)
	return ""
}

// AddTake adds a tts.take span's readings.
func (t *Trace) AddTake(k Take) string {
	if t.HasSpan(k.SpanID) {
		return DropDuplicateSpan
	}
	if _, ok := t.Take(k.ID); ok {
		return DropDuplicateTake
	}
	if len(t.Takes) >= MaxUnits {
		return DropUnitLimit
	}
	if t.Takes == nil {
		t.Takes = make([]Take, 0, firstUnits)
	}
	t.Takes = append(t.Takes, k)
	return ""
}

// Reserve makes room for the units and takes a batch is about to add
// (within MaxUnits), so a turn whose spans come together grows each list
// once, not in steps from firstUnits: a 20-unit turn's takes grew several
// times, the largest share of what holding a batch allocated. Units, which
// keeps only the units a rule reads, grows as it did.
func (t *Trace) Reserve(units, takes int) {
	t.UnitSpans = reserve(t.UnitSpans, units)
	t.Takes = reserve(t.Takes, takes)
}

func reserve[E any](list []E, n int) []E {
	n = min(n, MaxUnits-len(list))
	if n <= 0 {
		return list
	}
	if list == nil {
		return make([]E, 0, max(n, firstUnits))
	}
	return slices.Grow(list, n)
}

// firstUnits is the room a trace's first unit or take makes for the rest:
// a reply is read aloud in a few units, and growing the lists from one
// allocated about twice what they end up holding, in four steps.
const firstUnits = 8

// firstKeptUnits is the room a trace's first kept unit makes in Units.
const firstKeptUnits = 4

// Take finds the take with the given id.
func (t *Trace) Take(id string) (Take, bool) {
	// A turn's take IDs share a length and a prefix, and differ at the
	// end: their last bytes tell most apart before the whole is compared
	// (this ran for every take against every take before it).
	n := len(id)
	for i := range t.Takes {
		k := &t.Takes[i]
		if len(k.ID) == n && (n == 0 || k.ID[n-1] == id[n-1]) && k.ID == id {
			return *k, true
		}
	}
	return Take{}, false
}

// HasSpan reports whether a span of the trace with this ID has arrived.
func (t *Trace) HasSpan(id pcommon.SpanID) bool {
	if t.Turn != nil && t.Turn.SpanID == id {
		return true
	}
	if slices.Contains(t.UnitSpans, id) {
		return true
	}
	for i := range t.Takes {
		if t.Takes[i].SpanID == id {
			return true
		}
	}
	return false
}

// MissingTakes lists, sorted, the takes the rules read (the takes of the
// units that underran) that have not arrived.
func (t *Trace) MissingTakes(c *Rules) []string {
	var out []string
	for i := range t.Units {
		u := &t.Units[i]
		if !needsTake(u, c) {
			continue
		}
		if _, ok := t.Take(u.TakeID); !ok && !slices.Contains(out, u.TakeID) {
			out = append(out, u.TakeID)
		}
	}
	sort.Strings(out)
	return out
}

// WaitsForTake reports whether a take the rules read has not arrived
// (what MissingTakes lists, without listing it: asked of every held turn
// on every request and sweep).
func (t *Trace) WaitsForTake(c *Rules) bool {
	for i := range t.Units {
		if u := &t.Units[i]; needsTake(u, c) {
			if _, ok := t.Take(u.TakeID); !ok {
				return true
			}
		}
	}
	return false
}

// Sized reports whether the turn says how many units it read.
func (t *Trace) Sized() bool { return t.Turn != nil && t.Turn.Units >= 0 }

// UnitsArrived reports whether every unit the turn says it read has
// arrived (false for a turn that does not say).
func (t *Trace) UnitsArrived() bool {
	return t.Sized() && int64(len(t.UnitSpans)) >= t.Turn.Units
}

// Complete reports whether the turn can be decided the moment its last
// reading arrives: its voice.turn has arrived, it says how many units it
// read and all of them have arrived, and every take an underrun is read
// against has arrived. (Whether its launch's previous turn is known is
// the holder's to ask: see NeedsEarlier.)
func (t *Trace) Complete(c *Rules) bool {
	return t.UnitsArrived() && !t.WaitsForTake(c)
}
