package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// The readings are the only part of a span the processor keeps: what the rules
// read, already typed and checked, so a pending turn holds a few hundred bytes
// instead of its spans.

// MaxProblems bounds how many bad-input notes a turn keeps (the evidence names
// the first ones; a hostile trace cannot grow the state).
const MaxProblems = 8

// MaxUnits bounds how many units a turn keeps; a real turn reads tens.
const MaxUnits = 512

// MaxValueBytes bounds a string reading (a link, a take ID, a reason, a
// port kind): a longer one is bad input, so what a pending turn keeps, and
// stores, stays small and can always be read back.
const MaxValueBytes = 256

// MaxListLen bounds how many elements of a string array are read.
const MaxListLen = 64

// MaxLiveKinds bounds the live-count kinds a turn keeps (six are known).
const MaxLiveKinds = 32

// MaxRouteChanges bounds the route changes a turn keeps.
const MaxRouteChanges = 16

// Turn is what the rules need from a voice.turn span.
type Turn struct {
	SpanID   pcommon.SpanID
	Resource pcommon.Resource
	Index    int64
	Link     string

	Stutter      bool
	Bluetooth    bool
	BTOutput     string // the first Bluetooth output, for the evidence
	RouteChanges []RouteChange

	Live []LiveSeries

	PoolResets, PoolBefore       int64
	HasPoolResets, HasPoolBefore bool

	ListenGrant, ListenSession, ListenTotal float64
	HasGrant, HasSession, HasTotal          bool

	Units    int64 // how many units the turn says it read; -1 when not said
	Problems []string

	// Carried onto the verdict for a reader of verdicts alone (the done
	// reading, the route, when the turn happened); no rule reads them, but
	// a negative or wrong-typed speech_end_to_post or not_sent is bad
	// input all the same (the done reading would count it), and left out.
	EndTime                        pcommon.Timestamp
	Outputs                        []string
	SpeechEndToPost, NotSent       float64
	HasSpeechEndToPost, HasNotSent bool

	// AppUptime and DeviceUptime (seconds, at the turn): a holder of the
	// launch's turns reads a relaunch or a reboot in them dropping
	// (docs/decisions/0249). No rule reads them; a negative one is bad
	// input, as percause check says.
	AppUptime, DeviceUptime Opt[float64]
}

// MaxOutputs bounds the route outputs a turn carries to its verdict.
const MaxOutputs = 8

type RouteChange struct {
	At     float64
	Reason string
}

// LiveSeries is one live-object count: the earlier turns' values, oldest
// first, then this turn's.
type LiveSeries struct {
	Kind   string
	Series []int64
}

// Unit is what the rules need from a voice.unit span.
type Unit struct {
	SpanID    pcommon.SpanID
	Index     int64
	TakeID    string
	Underruns int64
	Silent    float64
	Cushion   float64
	Lead      float64
	HasLead   bool
	Problems  []string
	// UnderrunBad: a reading rule 1 needs (index, take, underruns, silent,
	// cushion) is bad, so the unit's underrun cannot be read. A bad lead
	// alone leaves the underrun readable.
	UnderrunBad bool
}

// Take is what the rules need from a tts.take span.
type Take struct {
	SpanID  pcommon.SpanID
	ID      string
	Need    float64
	Problem string // why need cannot be read ("" when it can)
}

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

// Kinds of attribute index.
const (
	indexUnit = iota + 1
	indexTake
)

// attrIndex holds the values of the few keys the rules read from a unit or
// a take, found in a single pass over its attributes.
type attrIndex struct {
	kind uint8
	has  uint8
	vals [6]pcommon.Value
	// joined: a key of the joined form (joinedPrefix) is among them.
	joined bool
}

func (x *attrIndex) slot(k string) int {
	if x.kind == indexUnit {
		return unitKey(k)
	}
	return takeKey(k)
}

// index scans m once (the first of a key sent twice wins, as with Map.Get),
// and notes whether a key of the joined form is there (its second byte
// tells it from pippa.*, before the prefix is compared).
func (x *attrIndex) index(kind uint8, m pcommon.Map) {
	x.kind = kind
	for k, v := range m.All() {
		if i := x.slot(k); i >= 0 {
			if x.has&(1<<i) == 0 {
				x.vals[i], x.has = v, x.has|1<<i
			}
		} else if len(k) > len(joinedPrefix) && k[1] == joinedPrefix[1] && k[:len(joinedPrefix)] == joinedPrefix {
			x.joined = true
		}
	}
}

// unitKey numbers the voice.unit keys the rules read.
func unitKey(k string) int {
	switch k {
	case semconv.UnitIndex:
		return 0
	case semconv.TakeID:
		return 1
	case semconv.UnitUnderruns:
		return 2
	case semconv.UnitSilent:
		return 3
	case semconv.UnitCushion:
		return 4
	case semconv.UnitLead:
		return 5
	}
	return -1
}

// takeKey numbers the tts.take keys the rules read.
func takeKey(k string) int {
	switch k {
	case semconv.TakeID:
		return 0
	case semconv.TakeNeed:
		return 1
	}
	return -1
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

// ReadTurn extracts a voice.turn span's readings. The resource is cloned
// because the verdict span is emitted under the phone's resource later, when
// the batch that carried the turn is long gone.
func ReadTurn(res pcommon.Resource, span ptrace.Span) *Turn {
	own := pcommon.NewResource()
	res.CopyTo(own)
	return ReadTurnUnder(own, span)
}

// ReadTurnUnder is ReadTurn with the resource already the caller's own
// copy, which the turn keeps as it is: the turns of one batch read under
// one resource share one copy. Nothing changes a turn's resource once
// read.
func ReadTurnUnder(own pcommon.Resource, span ptrace.Span) *Turn {
	attrs := span.Attributes()
	r := attrReader{attrs: attrs, what: semconv.SpanVoiceTurn}
	r.carry()
	t := &Turn{SpanID: span.SpanID(), Units: -1, Resource: own}

	t.EndTime = span.EndTimestamp()
	// No rule reads them, but a negative or impossible one is bad input
	// all the same (docs/domain.md): the done reading would count it.
	t.SpeechEndToPost, t.HasSpeechEndToPost = r.seconds(semconv.TurnSpeechEndPost)
	t.NotSent, t.HasNotSent = r.seconds(semconv.TurnNotSent)
	t.Index, _ = r.count(semconv.TurnIndex)
	t.AppUptime.V, t.AppUptime.OK = r.seconds(semconv.HealthAppUptime)
	t.DeviceUptime.V, t.DeviceUptime.OK = r.seconds(semconv.HealthDeviceUptime)
	if link, ok := r.str(semconv.NetworkConnectionType); ok && link != "" {
		t.Link = link
	}
	t.Stutter, _ = r.boolean(semconv.TurnStutter)
	t.readRoute(&r, span)
	t.Live = readLive(&r, attrs)
	t.readPool(&r)

	t.ListenGrant, t.HasGrant = r.seconds(semconv.ListenGrant)
	t.ListenSession, t.HasSession = r.seconds(semconv.ListenSession)
	t.ListenTotal, t.HasTotal = r.seconds(semconv.ListenTotal)
	if n, ok := r.count(semconv.TurnUnits); ok {
		t.Units = n
	}
	t.Problems = r.problems
	return t
}

// readRoute reads the turn's audio route: its outputs, whether one is
// Bluetooth (said, or known from an output's port), and its route change
// events, each list bounded.
func (t *Turn) readRoute(r *attrReader, span ptrace.Span) {
	bt, hasBT := r.boolean(semconv.RouteBluetooth)
	for _, o := range r.strings(semconv.RouteOutputs) {
		if len(t.Outputs) < MaxOutputs {
			t.Outputs = append(t.Outputs, o)
		}
		if semconv.IsBluetoothPort(o) {
			if t.BTOutput == "" {
				t.BTOutput = o
			}
			if !hasBT {
				bt = true
			}
		}
	}
	t.Bluetooth = bt
	if t.Bluetooth && t.BTOutput == "" {
		t.BTOutput = "a Bluetooth output"
	}

	events := span.Events()
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		if ev.Name() != semconv.EventRouteChange || len(t.RouteChanges) >= MaxRouteChanges {
			continue
		}
		er := attrReader{attrs: ev.Attributes(), what: semconv.EventRouteChange}
		at, ok := er.number(semconv.RouteChangeAt)
		reason, _ := er.str(semconv.RouteChangeReason)
		r.problems = appendUpTo(r.problems, er.problems, MaxProblems)
		if ok {
			t.RouteChanges = append(t.RouteChanges, RouteChange{At: at, Reason: reason})
		}
	}
}

// readPool reads the pool's tally since launch and the history the turn
// carries of it, if any.
func (t *Turn) readPool(r *attrReader) {
	t.PoolResets, t.HasPoolResets = r.count(semconv.PoolResets)
	t.PoolBefore, t.HasPoolBefore = r.count(semconv.PoolResetsBefore)
	if t.HasPoolResets && t.HasPoolBefore && t.PoolResets < t.PoolBefore {
		// The tally of one launch never counts down; a report that says so
		// cannot be read.
		r.note("%s went down within a launch (%d → %d)", semconv.PoolResets, t.PoolBefore, t.PoolResets)
		t.HasPoolResets = false
	}
}

// liveBeforeKeys are the known kinds' history keys, made once: a turn's
// live counts were a key built for each.
var liveBeforeKeys = func() (keys [semconv.NumLiveKinds]string) {
	for i, k := range semconv.LiveKinds {
		keys[i] = semconv.LiveBeforeAttr(k)
	}
	return keys
}()

// liveBeforeKey is the attribute holding the earlier turns' counts of kind.
func liveBeforeKey(kind string) string {
	if i := slices.Index(semconv.LiveKinds, kind); i >= 0 {
		return liveBeforeKeys[i]
	}
	return semconv.LiveBeforeAttr(kind)
}

// readLive collects every live count (any kind: pippa.live.<kind> holding an
// int) with its history, in semconv.LiveKinds order and then by name.
func readLive(r *attrReader, attrs pcommon.Map) []LiveSeries {
	var out []LiveSeries
	attrs.Range(func(k string, v pcommon.Value) bool {
		if !strings.HasPrefix(k, semconv.LivePrefix) || strings.HasSuffix(k, semconv.LiveBeforeSuffix) {
			return true
		}
		if k == semconv.LiveKind || k == semconv.MetricLiveObjects {
			// Names of the live-objects metric and its attribute, under
			// the same prefix but no count: never read as a kind.
			return true
		}
		kind := strings.TrimPrefix(k, semconv.LivePrefix)
		if kind == "" || strings.Contains(kind, ".") {
			return true
		}
		if len(kind) > MaxValueBytes || len(out) >= MaxLiveKinds {
			r.note("live counts: more than %d kinds, or a kind name over %d bytes", MaxLiveKinds, MaxValueBytes)
			return true
		}
		now, ok := r.count(k)
		if !ok {
			return true
		}
		series, _ := r.counts(liveBeforeKey(kind))
		out = append(out, LiveSeries{Kind: kind, Series: append(series, now)})
		return true
	})
	rank := func(kind string) int {
		if i := slices.Index(semconv.LiveKinds, kind); i >= 0 {
			return i
		}
		return len(semconv.LiveKinds)
	}
	// slices.SortFunc, not sort.Slice: read for every turn, and sort.Slice
	// allocates its swapper even for the one kind a turn usually has.
	slices.SortFunc(out, func(a, b LiveSeries) int {
		return cmp.Or(cmp.Compare(rank(a.Kind), rank(b.Kind)), strings.Compare(a.Kind, b.Kind))
	})
	return out
}

// ReadUnit extracts a voice.unit span's readings.
func ReadUnit(span ptrace.Span) Unit {
	attrs := span.Attributes()
	r := attrReader{attrs: attrs, what: "unit", index: -1}
	r.idx.index(indexUnit, attrs)
	if r.idx.joined {
		r.carry()
	}
	u := Unit{SpanID: span.SpanID(), Index: -1}
	if idx, ok := r.integer(semconv.UnitIndex); ok {
		u.Index, r.index = idx, idx
	}
	u.TakeID, _ = r.str(semconv.TakeID)
	if n, ok := r.count(semconv.UnitUnderruns); ok {
		u.Underruns = n
	} else if _, present := r.get(semconv.UnitUnderruns); !present {
		r.note("%s missing", semconv.UnitUnderruns)
	}
	if u.Underruns > 0 {
		// What rule 1 needs to read an underrun.
		var ok bool
		if u.Silent, ok = r.seconds(semconv.UnitSilent); !ok {
			if _, present := r.get(semconv.UnitSilent); !present {
				r.note("%s missing", semconv.UnitSilent)
			}
		}
		if u.Cushion, ok = r.seconds(semconv.UnitCushion); !ok {
			if _, present := r.get(semconv.UnitCushion); !present {
				r.note("%s missing", semconv.UnitCushion)
			}
		}
		if u.TakeID == "" {
			r.note("underran but names no take (%s)", semconv.TakeID)
		}
	}
	// A problem carried alone says nothing of the underrun (it may be the
	// lead's): a joined unit says whether its underrun was readable.
	u.UnderrunBad = len(r.problems) > r.carried || r.idx.joined && r.unreadable()
	u.Lead, u.HasLead = r.number(semconv.UnitLead)
	u.Problems = r.problems
	return u
}

// ReadTake extracts a tts.take span's readings; ok is false when it names no
// take (it cannot be matched to a unit, so it is dropped and counted).
func ReadTake(span ptrace.Span) (Take, bool) {
	attrs := span.Attributes()
	r := attrReader{attrs: attrs}
	r.idx.index(indexTake, attrs)
	id, ok := r.str(semconv.TakeID)
	if !ok || id == "" {
		return Take{}, false
	}
	r.what, r.id = "take", id
	if r.idx.joined {
		r.carry()
	}
	t := Take{SpanID: span.SpanID(), ID: id}
	need, ok := r.seconds(semconv.TakeNeed)
	switch {
	case ok:
		t.Need = need
	case len(r.problems) > 0:
		t.Problem = r.problems[0]
	default:
		t.Problem = r.where() + ": " + semconv.TakeNeed + " missing"
	}
	return t, true
}

// appendUpTo appends src to dst while dst holds fewer than limit.
func appendUpTo(dst, src []string, limit int) []string {
	return append(dst, src[:max(min(len(src), limit-len(dst)), 0)]...)
}
