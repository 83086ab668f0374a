package textlines

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The reader: Read takes one line as it sits in a log (any prefix before the
// tag, CRLF, fields in any order, fields this version does not know) in the
// canonical spelling this package writes or in the app's own spellings of the
// same readings, and returns its readings. docs/lines.md is the grammar.

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

// LineError is why a tagged line was refused.
type LineError struct {
	Kind   Kind
	Reason string // one of Reasons
	Detail string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("textlines: %s line refused (%s): %s", e.Kind, e.Reason, e.Detail)
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
	HasBroke        bool // silent, cushion and take (from broke)
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
// a tagged line that cannot be read returns a *LineError with its reason.
func Read(line string) (Record, error) {
	line = strings.TrimRight(line, "\r\n")
	kind, at := findTag(line)
	if kind == 0 {
		return Record{}, ErrNotALine
	}
	if len(line) > MaxLineBytes {
		return Record{}, &LineError{kind, ReasonTooLong, fmt.Sprintf("%d bytes, at most %d", len(line), MaxLineBytes)}
	}
	r := reader{rec: Record{Kind: kind, Turn: TurnReading{DeclaredUnits: -1}}}
	r.rec.Time = prefixTime(line[:at])
	for tok := range strings.FieldsSeq(line[at+len(kind.String()):]) {
		var err *LineError
		if kind == KindTurn {
			err = r.turnToken(tok)
		} else {
			err = r.takeToken(tok)
		}
		if err != nil {
			err.Kind = kind
			return Record{}, err
		}
	}
	var err *LineError
	switch {
	case r.rec.Present&^FTrace == 0:
		err = bad(ReasonNoReadings, "no reading this version knows (%d unknown fields)", r.rec.Unknown)
	case kind == KindTurn:
		err = r.finishTurn()
	default:
		err = r.finishTake()
	}
	if err != nil {
		err.Kind = kind
		return Record{}, err
	}
	return r.rec, nil
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
	gaps    []UnitReading
	broke   []UnitReading
	perUnit []int
	seen    uint64 // a bit per onceKeys key given
	// btKey and uptimeKey: bt= and uptime= were given (the canonical
	// spelling, which prints zeros for what the SDK was not given).
	btKey, uptimeKey bool
}

func bad(reason, format string, args ...any) *LineError {
	return &LineError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// onceKeys numbers the keys a line gives at most once: a turn line's fields
// (the app's flags and listen_open: count as bt, stutter and listen), the
// app's health: group, and a take line's fields.
var onceKeys = func() map[string]uint {
	m := map[string]uint{}
	for _, keys := range [][]string{TurnKeys, {TurnKeyChanges, "health"}, TakeKeys} {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				m[k] = uint(len(m))
			}
		}
	}
	if len(m) > 64 {
		panic("textlines: more keys than bits in reader.seen")
	}
	return m
}()

// once marks key as seen and refuses a second one.
func (r *reader) once(key string) *LineError {
	bit := uint64(1) << onceKeys[key]
	if r.seen&bit != 0 {
		return bad(ReasonDuplicate, "%s given twice", key)
	}
	r.seen |= bit
	return nil
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

func (r *reader) turnToken(tok string) *LineError {
	t := &r.rec.Turn
	switch {
	case strings.HasPrefix(tok, "+"):
		flag := tok[1:]
		switch flag {
		case "bluetooth", "bt":
			if err := r.once("bt"); err != nil {
				return err
			}
			t.Bluetooth = true
			r.set(FBluetooth)
		case "stutter":
			if err := r.once("stutter"); err != nil {
				return err
			}
			t.Stutter = true
			r.set(FStutter)
		default:
			r.unknown(tok)
			return nil
		}
		r.rec.App = true
		return nil
	case strings.HasPrefix(tok, "route_change@"):
		return r.appRouteChange(tok[len("route_change@"):])
	case strings.HasPrefix(tok, "listen_open:"):
		if err := r.once("listen"); err != nil {
			return err
		}
		r.rec.App = true
		return r.group(tok[len("listen_open:"):], "listen_open", r.listenOpen)
	case strings.HasPrefix(tok, "health:"):
		if err := r.once("health"); err != nil {
			return err
		}
		r.rec.App = true
		return r.group(tok[len("health:"):], "health", r.health)
	}
	key, v, ok := strings.Cut(tok, "=")
	if !ok || key == "" {
		return bad(ReasonSyntax, "%q is not key=value", clip(tok))
	}
	if v == "" {
		return bad(ReasonSyntax, "%s has no value", key)
	}
	switch key {
	case "turn", "trace", "link", "units", "underruns", "silent", "stutter", "route", "bt", "sample_rate",
		"route_changes", "listen", "rpm", "post", "not_sent", "pool_reset", "live", "uptime", "activations",
		"memory", "gaps", "broke", "changes":
		if err := r.once(key); err != nil {
			return err
		}
	default:
		r.unknown(key)
		return nil
	}
	switch key {
	case "turn":
		n, err := count(key, v)
		t.Index = n
		r.set(FTurn)
		return err
	case "trace":
		return r.trace(v)
	case "link":
		if v == "-" {
			return nil
		}
		t.LinkType, t.LinkSubtype, _ = strings.Cut(v, "/")
		r.set(FLink)
		return nil
	case "units":
		n, err := count(key, v)
		if err == nil && n > MaxUnits {
			return bad(ReasonTooLong, "units=%d, at most %d", n, MaxUnits)
		}
		t.DeclaredUnits = n
		r.set(FUnits)
		return err
	case "underruns":
		if strings.Contains(v, ",") {
			// The app's spelling: one count per unit.
			parts, err := unitList(key, v)
			if err != nil {
				return err
			}
			r.perUnit = slices.Grow(r.perUnit, len(parts))
			for _, p := range parts {
				n, err := count("underruns", p)
				if err != nil {
					return err
				}
				r.perUnit = append(r.perUnit, n)
			}
			r.rec.App = true
			r.set(FUnitUnderruns)
			return nil
		}
		n, err := count(key, v)
		t.Underruns = n
		r.set(FUnderruns)
		return err
	case "silent":
		d, err := seconds(key, v)
		t.Silent = d
		r.set(FSilent)
		return err
	case "stutter":
		b, err := yesNo(key, v)
		t.Stutter = b
		r.set(FStutter)
		return err
	case "bt":
		b, err := yesNo(key, v)
		t.Bluetooth = b
		r.set(FBluetooth)
		r.btKey = true
		return err
	case "route":
		in, out, ok := strings.Cut(v, ">")
		if !ok {
			return bad(ReasonBadValue, "route=%q is not inputs>outputs", clip(v))
		}
		t.Inputs, t.Outputs = list(in, "+"), list(out, "+")
		if len(t.Inputs) > 0 || len(t.Outputs) > 0 {
			r.set(FRoute)
		}
		return nil
	case "sample_rate":
		d, err := number(key, strings.TrimSuffix(v, "Hz"))
		t.SampleRate = d
		r.set(FSampleRate)
		return err
	case "route_changes":
		n, err := count(key, v)
		t.RouteChanges = n
		r.set(FRouteChanges)
		return err
	case "changes":
		return r.changes(v)
	case "listen":
		err := r.triple(key, v, []*float64{&t.ListenGrant, &t.ListenSession, &t.ListenTotal},
			[]Fields{FListenGrant, FListenSession, FListenTotal})
		if err == nil && t.ListenGrant == 0 && t.ListenSession == 0 && t.ListenTotal == 0 {
			r.rec.Present &^= FListenGrant | FListenSession | FListenTotal // not recorded
		}
		return err
	case "rpm":
		err := r.triple(key, v, []*float64{&t.RPMLoaded, &t.RPMFresh}, []Fields{FRPM, FRPM})
		if err == nil && t.RPMLoaded == 0 && t.RPMFresh == 0 {
			r.rec.Present &^= FRPM
		}
		return err
	case "post":
		d, err := seconds(key, v)
		t.SpeechEndToPost = d
		r.set(FPost)
		return err
	case "not_sent":
		d, err := seconds(key, v)
		t.NotSent = d
		r.set(FNotSent)
		return err
	case "pool_reset":
		return r.pool(v)
	case "live":
		return r.live(v)
	case "uptime":
		r.uptimeKey = true
		return r.triple(key, v, []*float64{&t.DeviceUptime, &t.AppUptime}, []Fields{FDeviceUptime, FAppUptime})
	case "activations":
		n, err := count(key, v)
		t.Activations = n
		r.set(FActivations)
		return err
	case "memory":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad(ReasonBadValue, "memory=%q is not an int", clip(v))
		}
		t.Memory = n
		r.set(FMemory)
		return nil
	case "gaps":
		return r.gapList(v)
	case "broke":
		return r.brokeList(v)
	}
	return nil
}

func (r *reader) trace(v string) *LineError {
	if v == "-" {
		return nil
	}
	id, ok := ParseTraceID(v)
	if !ok {
		return bad(ReasonBadTrace, "trace=%q is not 32 hex digits", clip(v))
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

// secondsTo sets a seconds reading of a group.
func (r *reader) secondsTo(dst *float64, f Fields, name, v string) *LineError {
	d, err := seconds(name, v)
	*dst = d
	r.set(f)
	return err
}

// group reads the app's k=v,k=v groups (listen_open:…, health:…): set sets
// one reading and reports whether it knows the key.
func (r *reader) group(v, name string, set func(k, v string) (bool, *LineError)) *LineError {
	if v == "" {
		return bad(ReasonSyntax, "%s: has no readings", name)
	}
	var buf [8]string
	seen := buf[:0] // the known keys given
	for part := range strings.SplitSeq(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if !ok || k == "" || val == "" {
			return bad(ReasonSyntax, "%s:%q is not key=value", name, clip(part))
		}
		if slices.Contains(seen, k) {
			return bad(ReasonDuplicate, "%s:%s given twice", name, k)
		}
		known, err := set(k, val)
		if !known {
			r.unknown(name + ":" + k)
			continue
		}
		if err != nil {
			return err
		}
		seen = append(seen, k)
	}
	return nil
}

// listenOpen sets a reading of the app's listen_open: group.
func (r *reader) listenOpen(k, v string) (bool, *LineError) {
	t := &r.rec.Turn
	switch k {
	case "grant":
		return true, r.secondsTo(&t.ListenGrant, FListenGrant, "listen_open:grant", v)
	case "session":
		return true, r.secondsTo(&t.ListenSession, FListenSession, "listen_open:session", v)
	case "total":
		return true, r.secondsTo(&t.ListenTotal, FListenTotal, "listen_open:total", v)
	}
	return false, nil
}

// health sets a reading of the app's health: group.
func (r *reader) health(k, v string) (bool, *LineError) {
	t := &r.rec.Turn
	switch k {
	case "device_uptime":
		return true, r.secondsTo(&t.DeviceUptime, FDeviceUptime, "health:device_uptime", v)
	case "app_uptime":
		return true, r.secondsTo(&t.AppUptime, FAppUptime, "health:app_uptime", v)
	case "uptime":
		d, a, ok := strings.Cut(v, "/")
		if !ok {
			return true, bad(ReasonBadValue, "health:uptime=%q is not device/app", v)
		}
		if err := r.secondsTo(&t.DeviceUptime, FDeviceUptime, "health:uptime", d); err != nil {
			return true, err
		}
		return true, r.secondsTo(&t.AppUptime, FAppUptime, "health:uptime", a)
	case "activations":
		n, err := count("health:activations", v)
		t.Activations = n
		r.set(FActivations)
		return true, err
	case "memory":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return true, bad(ReasonBadValue, "health:memory=%q is not an int", v)
		}
		t.Memory = n
		r.set(FMemory)
		return true, nil
	}
	return false, nil
}

// triple reads a/b[/c] seconds.
func (r *reader) triple(key, v string, dst []*float64, fs []Fields) *LineError {
	parts := strings.Split(v, "/")
	if len(parts) != len(dst) {
		return bad(ReasonBadValue, "%s=%q has %d parts, want %d", key, clip(v), len(parts), len(dst))
	}
	for i, p := range parts {
		d, err := seconds(key, p)
		if err != nil {
			return err
		}
		*dst[i] = d
		r.set(fs[i])
	}
	return nil
}

func (r *reader) pool(v string) *LineError {
	t := &r.rec.Turn
	if v == "-" {
		return nil
	}
	now, prior, hasPrior := v, "", false
	if i := strings.IndexByte(v, '('); i >= 0 {
		if !strings.HasSuffix(v, ")") {
			return bad(ReasonBadValue, "pool_reset=%q is not now(before)", clip(v))
		}
		now, prior, hasPrior = v[:i], v[i+1:len(v)-1], true
	}
	n, err := count("pool_reset", now)
	if err != nil {
		return err
	}
	t.PoolResets, t.HasPoolResets = n, true
	if hasPrior {
		p, err := count("pool_reset", prior)
		if err != nil {
			return err
		}
		t.PoolResetsBefore, t.HasPoolPrior = p, true
	}
	r.set(FPool)
	return nil
}

// live reads kind:now[(b,b,b)],… (commas also separate the history inside
// the parentheses).
func (r *reader) live(v string) *LineError {
	t := &r.rec.Turn
	if v == "-" {
		return nil
	}
	for v != "" {
		kind, rest, ok := strings.Cut(v, ":")
		if !ok || kind == "" {
			return bad(ReasonBadValue, "live: %q is not kind:count", clip(v))
		}
		end := strings.IndexAny(rest, ",(")
		if end < 0 {
			end = len(rest)
		}
		now, err := liveCount(kind, rest[:end])
		if err != nil {
			return err
		}
		l := Live{Kind: kind, Now: now}
		rest = rest[end:]
		if strings.HasPrefix(rest, "(") {
			close := strings.IndexByte(rest, ')')
			if close < 0 {
				return bad(ReasonBadValue, "live:%s history has no closing parenthesis", kind)
			}
			for p := range strings.SplitSeq(rest[1:close], ",") {
				n, err := liveCount(kind, p)
				if err != nil {
					return err
				}
				l.Before = append(l.Before, n)
			}
			rest = rest[close+1:]
		}
		for _, o := range t.Live {
			if o.Kind == kind {
				return bad(ReasonDuplicate, "live:%s given twice", kind)
			}
		}
		if len(t.Live) >= MaxLiveKinds {
			return bad(ReasonTooLong, "more than %d live kinds", MaxLiveKinds)
		}
		t.Live = append(t.Live, l)
		if rest != "" {
			if rest[0] != ',' {
				return bad(ReasonBadValue, "live: %q after %s", clip(rest), kind)
			}
			rest = rest[1:]
			if rest == "" {
				return bad(ReasonBadValue, "live ends with a comma")
			}
		}
		v = rest
	}
	r.set(FLive)
	return nil
}

// liveCount reads a count of kind; its key is spelled out only when the
// count is bad.
func liveCount(kind, v string) (int, *LineError) {
	n, err := count("live", v)
	if err != nil {
		_, err = count("live:"+kind, v)
	}
	return n, err
}

// unitList splits a per-unit list (gaps, broke, the app's underruns),
// refusing one of more than MaxUnits before it is split.
func unitList(key, v string) ([]string, *LineError) {
	if n := strings.Count(v, ",") + 1; n > MaxUnits {
		return nil, bad(ReasonTooLong, "%s lists %d units, at most %d", key, n, MaxUnits)
	}
	return strings.Split(v, ","), nil
}

// gapList reads gap[a(lead)],… one per unit.
func (r *reader) gapList(v string) *LineError {
	if v == "-" {
		r.set(FGaps)
		return nil
	}
	parts, err := unitList("gaps", v)
	if err != nil {
		return err
	}
	r.gaps = slices.Grow(r.gaps, len(parts))
	for i, p := range parts {
		u := UnitReading{Index: i + 1}
		g := p
		if j := strings.Index(p, "a("); j >= 0 {
			if !strings.HasSuffix(p, ")") {
				return bad(ReasonBadValue, "gap %q is not gap or gap a(lead)", clip(p))
			}
			lead, err := number("gaps lead", strings.TrimSuffix(p[j+2:len(p)-1], "s"))
			if err != nil {
				return err
			}
			u.Lead, u.HasLead, g = lead, true, p[:j]
			if lead >= 0 {
				r.rec.App = true // the canonical line shows a lead only when it is negative
			}
		}
		gap, err := seconds("gaps", g)
		if err != nil {
			return err
		}
		u.Gap, u.HasGap = gap, true
		r.gaps = append(r.gaps, u)
	}
	r.set(FGaps)
	return nil
}

// brokeList reads index:underruns/silent/cushion@take,…
func (r *reader) brokeList(v string) *LineError {
	if v == "-" {
		r.set(FBroke)
		return nil
	}
	parts, err := unitList("broke", v)
	if err != nil {
		return err
	}
	for _, p := range parts {
		idx, rest, ok := strings.Cut(p, ":")
		body, take, ok2 := strings.Cut(rest, "@")
		nums := strings.Split(body, "/")
		if !ok || !ok2 || len(nums) != 3 {
			return bad(ReasonBadValue, "broke %q is not index:underruns/silent/cushion@take", clip(p))
		}
		i, err := count("broke index", idx)
		if err != nil {
			return err
		}
		if i < 1 || i > MaxUnits {
			return bad(ReasonBadValue, "broke index %d is not 1..%d", i, MaxUnits)
		}
		n, err := count("broke underruns", nums[0])
		if err != nil {
			return err
		}
		silent, err := seconds("broke silent", nums[1])
		if err != nil {
			return err
		}
		cushion, err := seconds("broke cushion", nums[2])
		if err != nil {
			return err
		}
		for _, o := range r.broke {
			if o.Index == i {
				return bad(ReasonDuplicate, "broke names unit %d twice", i)
			}
		}
		r.broke = append(r.broke, UnitReading{Index: i, Underruns: n, HasUnderruns: true, Silent: silent, Cushion: cushion,
			HasBroke: true, TakeID: undash(take)})
	}
	r.set(FBroke)
	return nil
}

// changes reads the canonical changes=at@reason>out+out,…
func (r *reader) changes(v string) *LineError {
	if v == "-" {
		r.set(FChanges)
		return nil
	}
	for p := range strings.SplitSeq(v, ",") {
		at, rest, ok := strings.Cut(p, "@")
		reason, outs, ok2 := strings.Cut(rest, ">")
		if !ok || !ok2 {
			return bad(ReasonBadValue, "change %q is not at@reason>outputs", clip(p))
		}
		if err := r.addChange(at, reason, list(outs, "+")); err != nil {
			return err
		}
	}
	r.set(FChanges)
	return nil
}

// appRouteChange reads the app's route_change@<s>=<reason>:<outputs>.
func (r *reader) appRouteChange(v string) *LineError {
	at, rest, ok := strings.Cut(v, "=")
	if !ok {
		return bad(ReasonSyntax, "route_change@%q is not route_change@<s>=<reason>:<outputs>", clip(v))
	}
	reason, outs, _ := strings.Cut(rest, ":")
	var outputs []string
	if strings.Contains(outs, ",") {
		outputs = list(outs, ",")
	} else {
		outputs = list(outs, "+")
	}
	r.rec.App = true
	if err := r.addChange(at, reason, outputs); err != nil {
		return err
	}
	r.set(FChanges)
	return nil
}

func (r *reader) addChange(at, reason string, outputs []string) *LineError {
	t := &r.rec.Turn
	if len(t.Changes) >= MaxChanges {
		return bad(ReasonTooLong, "more than %d route changes", MaxChanges)
	}
	a, err := number("route change at", strings.TrimSuffix(at, "s"))
	if err != nil {
		return err
	}
	t.Changes = append(t.Changes, RouteChange{At: a, Reason: undash(reason), Outputs: outputs})
	return nil
}

// finishTurn merges the per-unit lists and checks the line against itself.
func (r *reader) finishTurn() *LineError {
	t := &r.rec.Turn
	n := len(r.gaps)
	if r.rec.Present.Has(FUnitUnderruns) {
		if n > 0 && len(r.perUnit) != n {
			return bad(ReasonInconsistent, "underruns lists %d units, gaps %d", len(r.perUnit), n)
		}
		n = len(r.perUnit)
	}
	if t.DeclaredUnits >= 0 {
		if r.rec.Present.Has(FGaps) && len(r.gaps) != t.DeclaredUnits || r.rec.Present.Has(FUnitUnderruns) && len(r.perUnit) != t.DeclaredUnits {
			return bad(ReasonInconsistent, "units=%d but the line lists %d", t.DeclaredUnits, n)
		}
		n = t.DeclaredUnits
	}
	for _, b := range r.broke {
		if b.Index > n {
			if t.DeclaredUnits >= 0 || r.rec.Present.Has(FGaps) || r.rec.Present.Has(FUnitUnderruns) {
				return bad(ReasonInconsistent, "broke names unit %d of %d", b.Index, n)
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
	known := r.rec.Present.Has(FBroke) || r.rec.Present.Has(FUnitUnderruns)
	// So does a line whose total is 0.
	if known && !r.rec.Present.Has(FUnitUnderruns) || !known && r.rec.Present.Has(FUnderruns) && t.Underruns == 0 {
		for i := range units {
			units[i].HasUnderruns = true
		}
	}
	for _, b := range r.broke {
		u := &units[b.Index-1]
		if u.HasUnderruns && r.rec.Present.Has(FUnitUnderruns) && u.Underruns != b.Underruns {
			return bad(ReasonInconsistent, "unit %d: underruns says %d, broke %d", b.Index, u.Underruns, b.Underruns)
		}
		u.Underruns, u.HasUnderruns = b.Underruns, true
		u.Silent, u.Cushion, u.TakeID, u.HasBroke = b.Silent, b.Cushion, b.TakeID, true
	}
	sum, silent := 0, 0.0
	for _, u := range units {
		sum += u.Underruns
		silent += u.Silent
	}
	if r.rec.Present.Has(FUnderruns) && known && sum != t.Underruns {
		return bad(ReasonInconsistent, "underruns=%d but the units add up to %d", t.Underruns, sum)
	}
	if r.rec.Present.Has(FSilent) && r.rec.Present.Has(FBroke) && math.Abs(silent-t.Silent) > 0.005*float64(len(r.broke)+1) {
		return bad(ReasonInconsistent, "silent=%.2f but broke adds up to %.2f", t.Silent, silent)
	}
	t.Units = units
	// The canonical line prints zeros for the groups the SDK was not given
	// (and bt=no without a route): they read as not recorded.
	if r.uptimeKey && t.DeviceUptime == 0 && t.AppUptime == 0 && t.Activations == 0 && t.Memory == 0 {
		r.rec.Present &^= FDeviceUptime | FAppUptime | FActivations | FMemory
	}
	if r.btKey && !t.Bluetooth && !r.rec.Present.Has(FRoute) {
		r.rec.Present &^= FBluetooth
	}
	if r.rec.Present.Has(FChanges) {
		if r.rec.Present.Has(FRouteChanges) && t.RouteChanges != len(t.Changes) {
			return bad(ReasonInconsistent, "route_changes=%d but %d changes listed", t.RouteChanges, len(t.Changes))
		}
		t.RouteChanges = len(t.Changes)
		r.set(FRouteChanges)
	}
	return nil
}

func (r *reader) takeToken(tok string) *LineError {
	t := &r.rec.Take
	key, v, ok := strings.Cut(tok, "=")
	if !ok || key == "" {
		if strings.HasPrefix(tok, "+") {
			r.unknown(tok)
			return nil
		}
		return bad(ReasonSyntax, "%q is not key=value", clip(tok))
	}
	if v == "" {
		return bad(ReasonSyntax, "%s has no value", key)
	}
	var dst *float64
	var f Fields
	switch key {
	case "take":
		f = FTake
	case "trace":
		f = FTrace
	case "first_byte":
		dst, f = &t.FirstByte, FFirstByte
	case "total":
		dst, f = &t.Total, FTotal
	case "audio":
		dst, f = &t.Audio, FAudio
	case "rate":
		dst, f = &t.Rate, FRate
	case "need":
		dst, f = &t.Need, FNeed
	case "beside":
		f = FBeside
	default:
		r.unknown(key)
		return nil
	}
	if err := r.once(key); err != nil {
		return err
	}
	switch key {
	case "take":
		if v != "-" {
			t.ID = v
			r.set(FTake)
		}
		return nil
	case "trace":
		return r.trace(v)
	case "beside":
		n, err := count(key, v)
		t.Beside = n
		r.set(FBeside)
		return err
	case "rate":
		d, err := number(key, strings.TrimSuffix(v, "x"))
		*dst = d
		r.set(f)
		return err
	}
	d, err := seconds(key, v)
	*dst = d
	r.set(f)
	return err
}

func (r *reader) finishTake() *LineError {
	if !r.rec.Present.Has(FTake) {
		return bad(ReasonBadValue, "take names no take id (take=)")
	}
	r.rec.Take.TraceID = r.rec.TraceID
	return nil
}

// seconds reads a duration: a finite decimal number, optionally with the
// unit s or ms.
func seconds(key, v string) (float64, *LineError) {
	scale := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		v, scale = v[:len(v)-2], 0.001
	case strings.HasSuffix(v, "s"):
		v = v[:len(v)-1]
	}
	d, err := number(key, v)
	return d * scale, err
}

// number reads a finite decimal number (no hex, no NaN, no infinities).
func number(key, v string) (float64, *LineError) {
	if v == "" || strings.ContainsAny(v, "xXpPnNiI_") {
		return 0, bad(ReasonBadValue, "%s=%q is not a number", key, clip(v))
	}
	d, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(d) || math.IsInf(d, 0) {
		return 0, bad(ReasonBadValue, "%s=%q is not a number", key, clip(v))
	}
	return d, nil
}

// count reads an int (negative ones are read: the rules say they are bad).
func count(key, v string) (int, *LineError) {
	n, err := strconv.Atoi(v)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, bad(ReasonBadValue, "%s=%q is not an int", key, clip(v))
	}
	return n, nil
}

func yesNo(key, v string) (bool, *LineError) {
	switch v {
	case "yes", "true", "1":
		return true, nil
	case "no", "false", "0":
		return false, nil
	}
	return false, bad(ReasonBadValue, "%s=%q is not yes or no", key, clip(v))
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

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// prefixTime finds a timestamp in the text before the tag: RFC 3339 or ISO
// 8601 with a space, with or without fractions and zone (no zone: UTC), as
// os_log, journald and most loggers print them. Zero when there is none.
func prefixTime(p string) time.Time {
	for i := 0; i+19 <= len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' || i > 0 && p[i-1] >= '0' && p[i-1] <= '9' {
			continue
		}
		if t, ok := isoAt(p[i:]); ok {
			return t
		}
	}
	return time.Time{}
}

func isoAt(s string) (time.Time, bool) {
	// 2006-01-02T15:04:05
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	end := 19
	if end < len(s) && (s[end] == '.' || s[end] == ',') {
		end++
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
	}
	zone := ""
	switch {
	case end < len(s) && s[end] == 'Z':
		zone = "Z"
	case end+6 <= len(s) && (s[end] == '+' || s[end] == '-') && s[end+3] == ':':
		zone = s[end : end+6]
	case end+5 <= len(s) && (s[end] == '+' || s[end] == '-'):
		zone = s[end:end+3] + ":" + s[end+3:end+5]
	}
	body := strings.Replace(s[:end], ",", ".", 1)
	body = body[:10] + "T" + body[11:]
	if zone == "" {
		zone = "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, body+zone)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
