package verdict

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
)

// attrReader reads typed attributes and collects what is wrong with them.
type attrReader struct {
	attrs    pcommon.Map
	idx      attrIndex // the span's keys the rules read, found in one pass
	what     string    // "unit", "take", "voice.turn", …
	id       string    // the take's id, when what is "take"
	index    int64     // the unit's index, when what is "unit" (-1: unknown)
	problems []string
	// carried counts the problems at the head of problems that a joined
	// span carried (carry): a problem found again is not noted twice.
	carried int
}

// get finds an attribute: in the index when the reader has one (a span's
// attributes are scanned once, not once per key), else in the map.
func (r *attrReader) get(key string) (pcommon.Value, bool) {
	if r.idx.kind != 0 {
		if slot := r.idx.slot(key); slot >= 0 {
			return r.idx.vals[slot], r.idx.has&(1<<slot) != 0
		}
	}
	return r.attrs.Get(key)
}

// getJoined finds one of the joined form's attributes: every unit and
// take asks, and almost none has one, which the index says.
func (r *attrReader) getJoined(key string) (pcommon.Value, bool) {
	if r.idx.kind != 0 && !r.idx.joined {
		return pcommon.Value{}, false
	}
	return r.attrs.Get(key)
}

// where names what is read, built only when something is wrong with it (the
// readers run for every span; the names are for the evidence).
func (r *attrReader) where() string {
	switch r.what {
	case "unit":
		if r.index < 0 {
			return "unit ?"
		}
		return "unit " + strconv.FormatInt(r.index, 10)
	case "take":
		return "take " + r.id
	}
	return r.what
}

func (r *attrReader) note(format string, args ...any) {
	if len(r.problems) >= MaxProblems {
		return
	}
	p := r.where() + ": " + fmt.Sprintf(format, args...)
	if r.carried > 0 && slices.Contains(r.problems[:r.carried], p) {
		return
	}
	r.problems = append(r.problems, p)
}

// unreadable reads AttrJoinedUnderrunUnreadable, as a bool.
func (r *attrReader) unreadable() bool {
	v, ok := r.getJoined(AttrJoinedUnderrunUnreadable)
	if !ok {
		return false
	}
	if v.Type() != pcommon.ValueTypeBool {
		r.note("%s %s", AttrJoinedUnderrunUnreadable, mistyped(v, "a bool"))
		return true
	}
	return v.Bool()
}

// carry takes as the span's own the problems a joined span carries
// (AttrJoinedProblems: what the first stage found reading the spans it
// joined), first and in their order; a reading that finds one of them
// again does not note it twice. A carrier that is not an array of
// strings of at most maxProblemBytes is bad input, carrying nothing.
func (r *attrReader) carry() {
	v, ok := r.getJoined(AttrJoinedProblems)
	if !ok {
		return
	}
	if v.Type() != pcommon.ValueTypeSlice {
		r.note("%s %s", AttrJoinedProblems, mistyped(v, "a string array"))
		return
	}
	s := v.Slice()
	n := min(s.Len(), MaxProblems-len(r.problems))
	for i := 0; i < n; i++ {
		if e := s.At(i); e.Type() != pcommon.ValueTypeStr || len(e.Str()) > maxProblemBytes {
			r.note("%s[%d] is not a string of at most %d bytes", AttrJoinedProblems, i, maxProblemBytes)
			return
		}
	}
	for i := 0; i < n; i++ {
		r.problems = append(r.problems, s.At(i).Str())
	}
	r.carried = len(r.problems)
}

// integer reads an int attribute; a double holding a whole number is taken as
// is (clients in other languages may send counts as doubles).
func (r *attrReader) integer(key string) (int64, bool) {
	v, ok := r.get(key)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		if n, ok := wholeNumber(v.Double()); ok {
			return n, true
		}
		r.note("%s %s", key, notWhole(v.Double()))
	default:
		r.note("%s %s", key, mistyped(v, "an integer"))
	}
	return 0, false
}

// wholeNumber reads a double holding a whole number (within the integers a
// double holds exactly) as an int.
func wholeNumber(d float64) (int64, bool) {
	if d != math.Trunc(d) || math.IsInf(d, 0) || math.Abs(d) >= 1<<53 {
		return 0, false
	}
	return int64(d), true
}

// count reads a non-negative int attribute.
func (r *attrReader) count(key string) (int64, bool) {
	n, ok := r.integer(key)
	if ok && n < 0 {
		r.note("%s %s", key, negativeCount(n))
		return 0, false
	}
	return n, ok
}

// number reads a finite double attribute; an int is taken as its value.
func (r *attrReader) number(key string) (float64, bool) {
	v, ok := r.get(key)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		d := v.Double()
		if math.IsNaN(d) || math.IsInf(d, 0) {
			r.note("%s %s", key, notFinite(d))
			return 0, false
		}
		return d, true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	default:
		r.note("%s %s", key, mistyped(v, "a number"))
		return 0, false
	}
}

// seconds reads a duration in seconds, which must not be negative.
func (r *attrReader) seconds(key string) (float64, bool) {
	d, ok := r.number(key)
	if ok && d < 0 {
		r.note("%s %s", key, negativeDuration(d))
		return 0, false
	}
	return d, ok
}

func (r *attrReader) boolean(key string) (bool, bool) {
	v, ok := r.get(key)
	if !ok {
		return false, false
	}
	if v.Type() != pcommon.ValueTypeBool {
		r.note("%s %s", key, mistyped(v, "a bool"))
		return false, false
	}
	return v.Bool(), true
}

func (r *attrReader) str(key string) (string, bool) {
	v, ok := r.get(key)
	if !ok {
		return "", false
	}
	if v.Type() != pcommon.ValueTypeStr {
		r.note("%s %s", key, mistyped(v, "a string"))
		return "", false
	}
	if n := len(v.Str()); n > MaxValueBytes {
		r.note("%s is %d bytes long, more than %d", key, n, MaxValueBytes)
		return "", false
	}
	return v.Str(), true
}

func (r *attrReader) strings(key string) []string {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	if v.Type() != pcommon.ValueTypeSlice {
		r.note("%s %s", key, mistyped(v, "a string array"))
		return nil
	}
	s := v.Slice()
	if s.Len() > MaxListLen {
		r.note("%s has %d elements, more than %d", key, s.Len(), MaxListLen)
		return nil
	}
	out := make([]string, 0, s.Len())
	for i := 0; i < s.Len(); i++ {
		e := s.At(i)
		if e.Type() != pcommon.ValueTypeStr {
			r.note("%s[%d] %s", key, i, mistyped(e, "a string"))
			return nil
		}
		if n := len(e.Str()); n > MaxValueBytes {
			r.note("%s[%d] is %d bytes long, more than %d", key, i, n, MaxValueBytes)
			return nil
		}
		out = append(out, e.Str())
	}
	return out
}

// counts reads an int array of non-negative counts.
func (r *attrReader) counts(key string) ([]int64, bool) {
	v, ok := r.get(key)
	if !ok {
		return nil, false
	}
	if v.Type() != pcommon.ValueTypeSlice {
		r.note("%s %s", key, mistyped(v, "an int array"))
		return nil, false
	}
	s := v.Slice()
	// Only the most recent history matters: the tail is read, and its
	// elements are named by their place in it.
	from := max(s.Len()-semconv.LiveHistory, 0)
	out := make([]int64, 0, s.Len()-from+1)
	for i := from; i < s.Len(); i++ {
		e := s.At(i)
		var n int64
		switch e.Type() {
		case pcommon.ValueTypeInt:
			n = e.Int()
		case pcommon.ValueTypeDouble:
			var ok bool
			if n, ok = wholeNumber(e.Double()); !ok {
				r.note("%s[%d] %s", key, i-from, notWhole(e.Double()))
				return nil, false
			}
		default:
			r.note("%s[%d] %s", key, i-from, mistyped(e, "an integer"))
			return nil, false
		}
		if n < 0 {
			r.note("%s[%d] %s", key, i-from, negativeCount(n))
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// appendUpTo appends src to dst while dst holds fewer than limit.
func appendUpTo(dst, src []string, limit int) []string {
	return append(dst, src[:max(min(len(src), limit-len(dst)), 0)]...)
}
