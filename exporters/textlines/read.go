package textlines

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The reader: Read takes one line as it sits in a log (any prefix before the
// tag, CRLF, fields in any order, fields this version does not know) in the
// canonical spelling this package writes or in the app's own spellings of the
// same readings, and returns its readings. Each key=value is read by its
// field of the table (fields.go); docs/lines.md is the grammar.

// Kind is what a line reports.
type Kind uint8

// Kinds of line.
const (
	KindTurn Kind = iota + 1 // [voice-turn]
	KindTake                 // [tts-take]
)

func (k Kind) String() string {
	switch k {
	case KindTurn:
		return PrefixTurn
	case KindTake:
		return PrefixTake
	}
	return "?"
}

// Limits of one line: past them the line is refused as too long, so a
// corrupt log cannot make a reader hold unbounded state.
const (
	MaxLineBytes   = 64 << 10
	MaxUnits       = 512
	MaxChanges     = 64
	MaxLiveKinds   = 32
	MaxUnknownKeys = 8 // unknown keys kept by name (all are counted)
	MaxFaults      = 8 // faults of a refused line kept (all are counted)
)

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

// Field bits: which readings a line carried.
type Fields uint64

// Fields of a [voice-turn] line.
const (
	FTurn Fields = 1 << iota
	FTrace
	FLink
	FUnits
	FUnderruns // the canonical total
	FSilent    // the canonical total
	FStutter
	FRoute
	FBluetooth
	FSampleRate
	FRouteChanges // the count
	FChanges      // each change: at, reason, outputs
	FListenGrant
	FListenSession
	FListenTotal
	FRPM
	FPost
	FNotSent
	FPool
	FLive
	FDeviceUptime
	FAppUptime
	FActivations
	FMemory
	FGaps
	FBroke
	FUnitUnderruns // the app's per-unit list
	// Fields of a [tts-take] line.
	FTake
	FFirstByte
	FTotal
	FAudio
	FRate
	FNeed
	FBeside
)

// Has reports whether every bit of f is set.
func (fs Fields) Has(f Fields) bool { return fs&f == f }

// RouteChange is one change of the audio route while she read.
type RouteChange struct {
	At      float64 // seconds since she began reading
	Reason  string
	Outputs []string
}

// UnitReading is one unit as a line reports it. A canonical line gives every
// unit its gap (and lead when negative) and the units that underran their
// underruns, silence, cushion and take.
type UnitReading struct {
	Index           int
	TakeID          string
	Gap, Lead       float64
	HasGap, HasLead bool
	Underruns       int
	HasUnderruns    bool
	Silent, Cushion float64
	HasBrokenUnit   bool // silent, cushion and take (from the broke= list of units that underran)
}

// TurnReading is a [voice-turn] line's readings; Present says which were given.
type TurnReading struct {
	Index                       int
	LinkType, LinkSubtype       string
	Stutter, Bluetooth          bool
	Inputs, Outputs             []string
	SampleRate                  float64
	RouteChanges                int // the count the line gives (or len(Changes))
	Changes                     []RouteChange
	ListenGrant, ListenSession  float64
	ListenTotal                 float64
	RPMLoaded, RPMFresh         float64
	SpeechEndToPost, NotSent    float64
	PoolResets                  int
	PoolResetsBefore            int
	HasPoolResets, HasPoolPrior bool
	Live                        []Live
	DeviceUptime, AppUptime     float64
	Activations                 int
	Memory                      int64
	// DeclaredUnits is units= (-1 when absent); Units are the units read.
	DeclaredUnits int
	Units         []UnitReading
	// Underruns and Silent are the canonical totals as given.
	Underruns int
	Silent    float64
}

// Record is one line read.
type Record struct {
	Kind    Kind
	TraceID string    // 32 lowercase hex digits, "" when the line has none
	Time    time.Time // a timestamp found in the prefix; zero when none
	// PID is the process ID an os_log or syslog prefix names (0: none).
	PID     int
	Present Fields
	Turn    TurnReading // Kind == KindTurn
	Take    Take        // Kind == KindTake (TraceID also here)
	// App is set when at least one reading was in the app's spelling.
	App bool
	// Unknown counts the fields this version does not know (ignored);
	// UnknownKeys names the first MaxUnknownKeys of them.
	Unknown     int
	UnknownKeys []string
}

// Read reads one log line. A line without either tag returns ErrNotALine;
// a tagged line that cannot be read returns a *LineError with every fault
// it has.
func Read(line string) (Record, error) {
	line = strings.TrimRight(line, "\r\n")
	kind, at := findTag(line)
	if kind == 0 {
		return Record{}, ErrNotALine
	}
	if len(line) > MaxLineBytes {
		return Record{}, &LineError{Kind: kind, Reason: ReasonTooLong,
			Faults: []Fault{{Reason: ReasonTooLong, Problem: fmt.Sprintf("the line has %d bytes, at most %d", len(line), MaxLineBytes)}}}
	}
	r := readers.Get().(*reader)
	defer readers.Put(r)
	r.reset(kind)
	prefix := line[:at]
	r.rec.Time = prefixTime(prefix)
	r.rec.PID = prefixPID(prefix)
	body := line[at+len(kind.String()):]
	if kind == KindTurn {
		for tok := range strings.FieldsSeq(body) {
			r.turnToken(tok)
		}
	} else {
		for tok := range strings.FieldsSeq(body) {
			r.takeToken(tok)
		}
	}
	switch {
	case r.rec.Present&^FTrace == 0 && len(r.faults) == 0:
		r.fail(Fault{Reason: ReasonNoReadings, Problem: fmt.Sprintf("no reading this version knows (%d unknown fields)", r.rec.Unknown)})
	case kind == KindTurn:
		r.finishTurn()
	default:
		r.finishTake()
	}
	if len(r.faults) > 0 {
		faults := r.faults
		r.faults = nil // the error keeps them
		return Record{}, &LineError{Kind: kind, Reason: faults[0].Reason, Faults: faults, More: r.more}
	}
	return r.rec, nil
}

// readers are reused: the table's read functions take the reader through
// function values, so it would otherwise be allocated for every line. What
// a Record returns is never reused; the per-unit lists merged into it are.
var readers = sync.Pool{New: func() any { return new(reader) }}

// reset makes r ready for a line of kind, keeping its lists' storage.
func (r *reader) reset(kind Kind) {
	*r = reader{rec: Record{Kind: kind, Turn: TurnReading{DeclaredUnits: -1}},
		gaps: r.gaps[:0], brokenUnits: r.brokenUnits[:0], perUnit: r.perUnit[:0]}
}

// findTag finds the first tag followed by a space or the end of the line.
func findTag(line string) (Kind, int) {
	from := 0
	for {
		i := strings.IndexByte(line[from:], '[')
		if i < 0 {
			return 0, -1
		}
		i += from
		rest := line[i:]
		for _, t := range []struct {
			k   Kind
			tag string
		}{{KindTurn, PrefixTurn}, {KindTake, PrefixTake}} {
			if strings.HasPrefix(rest, t.tag) && (len(rest) == len(t.tag) || rest[len(t.tag)] == ' ' || rest[len(t.tag)] == '\t') {
				return t.k, i
			}
		}
		from = i + 1
	}
}

type reader struct {
	rec Record
	// per-unit lists as given, merged in finishTurn
	gaps        []UnitReading
	brokenUnits []UnitReading
	perUnit     []int
	seen        uint64 // a bit per once-only key given (onceBit)
	// btKey and uptimeKey: bt= and uptime= were given (the canonical
	// spelling, which prints zeros for what the SDK was not given).
	btKey, uptimeKey bool
	faults           []Fault
	more             int
}

// fault is what a field's read finds wrong with its value; the reader
// makes it a Fault with the field's key and form.
type fault struct{ reason, problem string }

func badValue(problem string) *fault { return &fault{reason: ReasonBadValue, problem: problem} }

// in is the Fault of key=v, whose value takes form.
func (f *fault) in(key, v, form string) Fault {
	out := Fault{Reason: f.reason, Field: key, Value: clip(v), Problem: f.problem}
	if f.reason == ReasonBadValue || f.reason == ReasonBadTrace {
		out.Form = form
	}
	return out
}

func (r *reader) fail(f Fault) {
	if len(r.faults) < MaxFaults {
		r.faults = append(r.faults, f)
		return
	}
	r.more++
}

// faulted says whether a fault names the field.
func (r *reader) faulted(key string) bool {
	for _, f := range r.faults {
		if f.Field == key {
			return true
		}
	}
	return false
}

// once marks a once-only key as given; a second one is a fault.
func (r *reader) once(bit uint, key string) bool {
	if r.seen&(1<<bit) != 0 {
		r.fail(Fault{Reason: ReasonDuplicate, Field: key, Problem: "given twice"})
		return false
	}
	r.seen |= 1 << bit
	return true
}

func (r *reader) unknown(key string) {
	r.rec.Unknown++
	if len(r.rec.UnknownKeys) < MaxUnknownKeys {
		if len(key) > 64 {
			key = key[:64]
		}
		r.rec.UnknownKeys = append(r.rec.UnknownKeys, key)
	}
}

func (r *reader) set(f Fields) { r.rec.Present |= f }

// readField reads key=v by its field of the table.
func readField[T any](r *reader, fields []field[T], i uint8, v string) {
	f := &fields[i]
	if v == "" {
		r.fail(Fault{Reason: ReasonSyntax, Field: f.key, Problem: "has no value", Form: f.form})
		return
	}
	if !r.once(uint(i), f.key) {
		return
	}
	if ft := f.read(r, v); ft != nil {
		r.fail(ft.in(f.key, v, f.form))
	}
}

// turnToken reads one token of a [voice-turn] line: a field of the table,
// else one of the app's spellings, else an unknown field.
func (r *reader) turnToken(tok string) {
	key, v, eq := strings.Cut(tok, "=")
	if eq {
		if i, ok := turnIndex[key]; ok {
			readField(r, turnFields, i, v)
			return
		}
	}
	if tok[0] == '+' {
		r.flag(tok)
		return
	}
	if at, ok := strings.CutPrefix(tok, routeChangePrefix); ok {
		r.appRouteChange(at)
		return
	}
	for gi := range turnGroups {
		if rest, ok := strings.CutPrefix(tok, turnGroups[gi].prefix); ok {
			r.group(gi, rest)
			return
		}
	}
	r.otherToken(tok, key, v, eq, "key=value, a +flag, a group or a route change")
}

// takeToken reads one token of a [tts-take] line.
func (r *reader) takeToken(tok string) {
	key, v, eq := strings.Cut(tok, "=")
	if eq {
		if i, ok := takeIndex[key]; ok {
			readField(r, takeFields, i, v)
			return
		}
	}
	if tok[0] == '+' {
		r.unknown(tok)
		return
	}
	r.otherToken(tok, key, v, eq, "key=value")
}

// otherToken is a token no field or spelling of this version reads: an
// unknown key=value is ignored and counted, anything else is refused.
func (r *reader) otherToken(tok, key, v string, eq bool, shapes string) {
	switch {
	case !eq || key == "":
		r.fail(Fault{Reason: ReasonSyntax, Problem: fmt.Sprintf("%q is not %s", clip(tok), shapes)})
	case v == "":
		r.fail(Fault{Reason: ReasonSyntax, Field: clip(key), Problem: "has no value"})
	default:
		r.unknown(key)
	}
}

// flag reads the app's +flag.
func (r *reader) flag(tok string) {
	name := tok[1:]
	for i := range turnFlags {
		f := &turnFlags[i]
		if f.name != name {
			continue
		}
		if r.once(uint(turnIndex[f.countsAs]), f.countsAs) {
			f.set(r)
			r.rec.App = true
		}
		return
	}
	r.unknown(tok)
}

// group reads the app's prefix:k=v,k=v groups (listen_open:…, health:…).
func (r *reader) group(gi int, v string) {
	g := &turnGroups[gi]
	name := strings.TrimSuffix(g.prefix, ":")
	bit, onceKey := uint(len(turnFields)+gi), name
	if g.countsAs != "" {
		bit, onceKey = uint(turnIndex[g.countsAs]), g.countsAs
	}
	if !r.once(bit, onceKey) {
		return
	}
	r.rec.App = true
	if v == "" {
		r.fail(Fault{Reason: ReasonSyntax, Field: name, Problem: "has no readings", Form: g.form})
		return
	}
	var seen uint32 // a bit per key of the group given
	for part := range strings.SplitSeq(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if !ok || k == "" || val == "" {
			r.fail(Fault{Reason: ReasonSyntax, Field: name, Problem: fmt.Sprintf("%q is not key=value", clip(part)), Form: g.form})
			continue
		}
		ki := -1
		for i := range g.keys {
			if g.keys[i].key == k {
				ki = i
				break
			}
		}
		if ki < 0 {
			r.unknown(name + ":" + k)
			continue
		}
		if seen&(1<<ki) != 0 {
			r.fail(Fault{Reason: ReasonDuplicate, Field: name + ":" + k, Problem: "given twice"})
			continue
		}
		seen |= 1 << ki
		if f := g.keys[ki].read(r, val); f != nil {
			r.fail(f.in(name+":"+k, val, g.keys[ki].form))
		}
	}
}

// The readers of values: each sets its reading and its field bit only when
// the whole value reads, so a refused value leaves nothing half read.

func (r *reader) intTo(dst *int, f Fields, v string) *fault {
	n, ok := parseCount(v)
	if !ok {
		return badValue("")
	}
	*dst = n
	r.set(f)
	return nil
}

func (r *reader) int64To(dst *int64, f Fields, v string) *fault {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return badValue("")
	}
	*dst = n
	r.set(f)
	return nil
}

func (r *reader) secondsTo(dst *float64, f Fields, v string) *fault {
	d, ok := parseSeconds(v)
	if !ok {
		return badValue("")
	}
	*dst = d
	r.set(f)
	return nil
}

func (r *reader) boolTo(dst *bool, f Fields, v string) *fault {
	switch v {
	case "yes", "true", "1":
		*dst = true
	case "no", "false", "0":
		*dst = false
	default:
		return badValue("")
	}
	r.set(f)
	return nil
}

func (r *reader) trace(v string) *fault {
	if v == "-" {
		return nil
	}
	id, ok := ParseTraceID(v)
	if !ok {
		return &fault{reason: ReasonBadTrace}
	}
	r.rec.TraceID = id
	r.set(FTrace)
	return nil
}

// ParseTraceID reads a trace ID of 32 hex digits that are not all zeros and
// returns it in lowercase.
func ParseTraceID(v string) (string, bool) {
	if len(v) != 32 {
		return "", false
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], []byte(v)); err != nil || b == [16]byte{} {
		return "", false
	}
	return hex.EncodeToString(b[:]), true
}

// slashed reads a/b[/c] seconds into dst, all or none.
func slashed(v string, dst ...*float64) *fault {
	var vals [3]float64
	i := 0
	for p := range strings.SplitSeq(v, "/") {
		if i == len(dst) {
			return badValue(fmt.Sprintf("more than %d parts", len(dst)))
		}
		d, ok := parseSeconds(p)
		if !ok {
			return badValue(fmt.Sprintf("%q is not seconds", clip(p)))
		}
		vals[i] = d
		i++
	}
	if i != len(dst) {
		return badValue(fmt.Sprintf("%d parts, want %d", i, len(dst)))
	}
	for i, d := range dst {
		*d = vals[i]
	}
	return nil
}

func (r *reader) underruns(v string) *fault {
	if !strings.Contains(v, ",") {
		return r.intTo(&r.rec.Turn.Underruns, FUnderruns, v)
	}
	// The app's spelling: one count per unit.
	n := strings.Count(v, ",") + 1
	if n > MaxUnits {
		return &fault{reason: ReasonTooLong, problem: fmt.Sprintf("%d units, at most %d", n, MaxUnits)}
	}
	per := slices.Grow(r.perUnit[:0], n)
	for p := range strings.SplitSeq(v, ",") {
		c, ok := parseCount(p)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's %q is not an int", len(per)+1, clip(p)))
		}
		per = append(per, c)
	}
	r.perUnit = per
	r.rec.App = true
	r.set(FUnitUnderruns)
	return nil
}

func (r *reader) pool(v string) *fault {
	if v == "-" {
		return nil
	}
	now, prior, hasPrior := v, "", false
	if i := strings.IndexByte(v, '('); i >= 0 {
		if !strings.HasSuffix(v, ")") {
			return badValue("no closing parenthesis")
		}
		now, prior, hasPrior = v[:i], v[i+1:len(v)-1], true
	}
	n, ok := parseCount(now)
	if !ok {
		return badValue(fmt.Sprintf("%q is not an int", clip(now)))
	}
	p := 0
	if hasPrior {
		if p, ok = parseCount(prior); !ok {
			return badValue(fmt.Sprintf("%q is not an int", clip(prior)))
		}
	}
	t := &r.rec.Turn
	t.PoolResets, t.HasPoolResets = n, true
	t.PoolResetsBefore, t.HasPoolPrior = p, hasPrior
	r.set(FPool)
	return nil
}

// live reads kind:now[(b,b,b)],… (commas also separate the history inside
// the parentheses).
func (r *reader) live(v string) *fault {
	if v == "-" {
		return nil
	}
	var kinds []Live
	for v != "" {
		kind, rest, ok := strings.Cut(v, ":")
		if !ok || kind == "" {
			return badValue(fmt.Sprintf("%q is not kind:count", clip(v)))
		}
		end := strings.IndexAny(rest, ",(")
		if end < 0 {
			end = len(rest)
		}
		now, ok := parseCount(rest[:end])
		if !ok {
			return badValue(fmt.Sprintf("the count of %s %q is not an int", clip(kind), clip(rest[:end])))
		}
		l := Live{Kind: kind, Now: now}
		rest = rest[end:]
		if strings.HasPrefix(rest, "(") {
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return badValue(fmt.Sprintf("the history of %s has no closing parenthesis", clip(kind)))
			}
			for p := range strings.SplitSeq(rest[1:end], ",") {
				n, ok := parseCount(p)
				if !ok {
					return badValue(fmt.Sprintf("the history of %s: %q is not an int", clip(kind), clip(p)))
				}
				l.Before = append(l.Before, n)
			}
			rest = rest[end+1:]
		}
		for _, o := range kinds {
			if o.Kind == kind {
				return &fault{reason: ReasonDuplicate, problem: clip(kind) + " given twice"}
			}
		}
		if len(kinds) >= MaxLiveKinds {
			return &fault{reason: ReasonTooLong, problem: fmt.Sprintf("more than %d live kinds", MaxLiveKinds)}
		}
		kinds = append(kinds, l)
		if rest != "" {
			if rest[0] != ',' {
				return badValue(fmt.Sprintf("%q after %s", clip(rest), clip(kind)))
			}
			rest = rest[1:]
			if rest == "" {
				return badValue("ends with a comma")
			}
		}
		v = rest
	}
	r.rec.Turn.Live = kinds
	r.set(FLive)
	return nil
}

// units bounds a per-unit list (gaps, broke) before it is split.
func units(v string) (int, *fault) {
	n := strings.Count(v, ",") + 1
	if n > MaxUnits {
		return n, &fault{reason: ReasonTooLong, problem: fmt.Sprintf("%d units, at most %d", n, MaxUnits)}
	}
	return n, nil
}

// gapList reads gap[a(lead)],… one per unit.
func (r *reader) gapList(v string) *fault {
	if v == "-" {
		r.set(FGaps)
		return nil
	}
	n, f := units(v)
	if f != nil {
		return f
	}
	gaps := slices.Grow(r.gaps[:0], n)
	app := false
	for p := range strings.SplitSeq(v, ",") {
		u := UnitReading{Index: len(gaps) + 1}
		g := p
		if j := strings.Index(p, "a("); j >= 0 {
			if !strings.HasSuffix(p, ")") {
				return badValue(fmt.Sprintf("unit %d's %q is not gap or gap a(lead)", u.Index, clip(p)))
			}
			lead, ok := parseNumber(strings.TrimSuffix(p[j+2:len(p)-1], "s"))
			if !ok {
				return badValue(fmt.Sprintf("unit %d's lead %q is not seconds", u.Index, clip(p[j+2:len(p)-1])))
			}
			u.Lead, u.HasLead, g = lead, true, p[:j]
			if lead >= 0 {
				app = true // the canonical line shows a lead only when it is negative
			}
		}
		gap, ok := parseSeconds(g)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's gap %q is not seconds", u.Index, clip(g)))
		}
		u.Gap, u.HasGap = gap, true
		gaps = append(gaps, u)
	}
	r.gaps = gaps
	r.rec.App = r.rec.App || app
	r.set(FGaps)
	return nil
}

// brokenUnitList reads index:underruns/silent/cushion@take,…
func (r *reader) brokenUnitList(v string) *fault {
	if v == "-" {
		r.set(FBroke)
		return nil
	}
	if _, f := units(v); f != nil {
		return f
	}
	underran := r.brokenUnits[:0]
	for p := range strings.SplitSeq(v, ",") {
		idx, rest, ok := strings.Cut(p, ":")
		body, take, ok2 := strings.Cut(rest, "@")
		under, rest, ok3 := strings.Cut(body, "/")
		silentS, cushionS, ok4 := strings.Cut(rest, "/")
		if !ok || !ok2 || !ok3 || !ok4 || strings.Contains(cushionS, "/") {
			return badValue(fmt.Sprintf("%q is not index:underruns/silent/cushion@take", clip(p)))
		}
		i, ok := parseCount(idx)
		if !ok || i < 1 || i > MaxUnits {
			return badValue(fmt.Sprintf("%q: the unit index %q is not 1..%d", clip(p), clip(idx), MaxUnits))
		}
		n, ok := parseCount(under)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's underruns %q are not an int", i, clip(under)))
		}
		silent, ok := parseSeconds(silentS)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's silent %q is not seconds", i, clip(silentS)))
		}
		cushion, ok := parseSeconds(cushionS)
		if !ok {
			return badValue(fmt.Sprintf("unit %d's cushion %q is not seconds", i, clip(cushionS)))
		}
		for _, o := range underran {
			if o.Index == i {
				return &fault{reason: ReasonDuplicate, problem: fmt.Sprintf("names unit %d twice", i)}
			}
		}
		underran = append(underran, UnitReading{Index: i, Underruns: n, HasUnderruns: true, Silent: silent, Cushion: cushion,
			HasBrokenUnit: true, TakeID: undash(take)})
	}
	r.brokenUnits = underran
	r.set(FBroke)
	return nil
}

// changes reads the canonical changes=at@reason>out+out,…
func (r *reader) changes(v string) *fault {
	if v == "-" {
		r.set(FChanges)
		return nil
	}
	t := &r.rec.Turn
	kept := len(t.Changes)
	for p := range strings.SplitSeq(v, ",") {
		at, rest, ok := strings.Cut(p, "@")
		reason, outs, ok2 := strings.Cut(rest, ">")
		var f *fault
		if !ok || !ok2 {
			f = badValue(fmt.Sprintf("%q is not at@reason>outputs", clip(p)))
		} else {
			f = r.addChange(at, reason, list(outs, "+"))
		}
		if f != nil {
			t.Changes = t.Changes[:kept]
			return f
		}
	}
	r.set(FChanges)
	return nil
}

// appRouteChange reads the app's route_change@<s>=<reason>:<outputs>.
func (r *reader) appRouteChange(v string) {
	r.rec.App = true
	at, rest, ok := strings.Cut(v, "=")
	if !ok {
		r.fail(Fault{Reason: ReasonSyntax, Field: routeChangePrefix + clip(v), Problem: "has no =<reason>:<outputs>", Form: routeChangeForm})
		return
	}
	reason, outs, _ := strings.Cut(rest, ":")
	var outputs []string
	if strings.Contains(outs, ",") {
		outputs = list(outs, ",")
	} else {
		outputs = list(outs, "+")
	}
	if f := r.addChange(at, reason, outputs); f != nil {
		r.fail(f.in(routeChangePrefix+clip(at), rest, routeChangeForm))
		return
	}
	r.set(FChanges)
}

func (r *reader) addChange(at, reason string, outputs []string) *fault {
	t := &r.rec.Turn
	if len(t.Changes) >= MaxChanges {
		return &fault{reason: ReasonTooLong, problem: fmt.Sprintf("more than %d route changes", MaxChanges)}
	}
	a, ok := parseNumber(strings.TrimSuffix(at, "s"))
	if !ok {
		return badValue(fmt.Sprintf("the time %q is not seconds", clip(at)))
	}
	t.Changes = append(t.Changes, RouteChange{At: a, Reason: undash(reason), Outputs: outputs})
	return nil
}

func (r *reader) inconsistent(format string, args ...any) {
	r.fail(Fault{Reason: ReasonInconsistent, Problem: fmt.Sprintf(format, args...)})
}

// finishTurn merges the per-unit lists and checks the line against itself.
func (r *reader) finishTurn() {
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
	known := has(FBroke) || has(FUnitUnderruns)
	// So does a line whose total is 0.
	if known && !has(FUnitUnderruns) || !known && has(FUnderruns) && t.Underruns == 0 {
		for i := range units {
			units[i].HasUnderruns = true
		}
	}
	for _, b := range r.brokenUnits {
		if b.Index > n {
			continue // refused above
		}
		u := &units[b.Index-1]
		if u.HasUnderruns && has(FUnitUnderruns) && u.Underruns != b.Underruns {
			r.inconsistent("unit %d: underruns says %d, broke %d", b.Index, u.Underruns, b.Underruns)
		}
		u.Underruns, u.HasUnderruns = b.Underruns, true
		u.Silent, u.Cushion, u.TakeID, u.HasBrokenUnit = b.Silent, b.Cushion, b.TakeID, true
	}
	sum, silent := 0, 0.0
	for _, u := range units {
		sum += u.Underruns
		silent += u.Silent
	}
	if has(FUnderruns) && known && sum != t.Underruns {
		r.inconsistent("underruns=%d but the units add up to %d", t.Underruns, sum)
	}
	if has(FSilent) && has(FBroke) && math.Abs(silent-t.Silent) > 0.005*float64(len(r.brokenUnits)+1) {
		r.inconsistent("silent=%.2f but broke adds up to %.2f", t.Silent, silent)
	}
	t.Units = units
	// The canonical line prints zeros for the groups the SDK was not given
	// (and bt=no without a route): they read as not recorded.
	if r.uptimeKey && t.DeviceUptime == 0 && t.AppUptime == 0 && t.Activations == 0 && t.Memory == 0 {
		r.rec.Present &^= FDeviceUptime | FAppUptime | FActivations | FMemory
	}
	if r.btKey && !t.Bluetooth && !has(FRoute) {
		r.rec.Present &^= FBluetooth
	}
	if has(FChanges) {
		if has(FRouteChanges) && t.RouteChanges != len(t.Changes) {
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

// parseSeconds reads a duration: a finite decimal number, optionally with
// the unit s or ms.
func parseSeconds(v string) (float64, bool) {
	scale := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		v, scale = v[:len(v)-2], 0.001
	case strings.HasSuffix(v, "s"):
		v = v[:len(v)-1]
	}
	d, ok := parseNumber(v)
	return d * scale, ok
}

// parseNumber reads a finite decimal number (no hex, no NaN, no
// infinities).
func parseNumber(v string) (float64, bool) {
	if v == "" || strings.ContainsAny(v, "xXpPnNiI_") {
		return 0, false
	}
	d, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(d) || math.IsInf(d, 0) {
		return 0, false
	}
	return d, true
}

// parseCount reads an int (negative ones are read: the rules say they are
// bad).
func parseCount(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, false
	}
	return n, true
}

// list splits a value list; "-" and "" are empty.
func list(v, sep string) []string {
	if v == "-" || v == "" {
		return nil
	}
	var out []string
	for p := range strings.SplitSeq(v, sep) {
		if p != "" && p != "-" {
			out = append(out, p)
		}
	}
	return out
}

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
