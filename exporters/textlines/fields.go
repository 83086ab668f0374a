package textlines

import (
	"math"
	"strconv"
	"strings"
)

// The fields of the two lines, each once: its key, the form its value
// takes (what a refused line says the field expects), how the writer prints
// it and how the reader reads it. The writer prints the fields in this
// order, Parse checks that order, Read takes them in any order and finds
// them here; every key the package knows is a key of these tables or of
// the app's spellings below them.

// keyField is one key=value of a line about a T (a Turn or a Take).
type keyField[T any] struct {
	key  string
	form string
	// write appends the value as the canonical line prints it.
	write func(b []byte, t *T) []byte
	// omit says the writer leaves the field out (an optional field).
	omit func(t *T) bool
	// read takes the value into the reader's record; a fault says what is
	// wrong with it (the reader adds the key and the form).
	read func(r *reader, v string) *valueFault
}

// Forms of values, as a refused line names them.
const (
	formInt     = "an int"
	formSeconds = "seconds (0.40, 0.40s or 400ms)"
	formYesNo   = "yes or no"
)

// turnFields are the fields of a [voice-turn] line, in the canonical order.
var turnFields = []keyField[Turn]{
	{key: "turn", form: formInt,
		write: func(b []byte, t *Turn) []byte { return strconv.AppendInt(b, int64(t.Index), 10) },
		read:  func(r *reader, v string) *valueFault { return r.intTo(&r.rec.Turn.Index, FTurn, v) }},
	{key: "trace", form: "32 hex digits, not all zeros (- for none)",
		write: func(b []byte, t *Turn) []byte { return append(b, orDash(t.TraceID)...) },
		read:  (*reader).trace},
	{key: "link", form: "type[/subtype] (- for none)",
		write: func(b []byte, t *Turn) []byte {
			b = append(b, token(orDash(t.LinkType))...)
			if t.LinkSubtype != "" {
				b = append(b, '/')
				b = append(b, token(t.LinkSubtype)...)
			}
			return b
		},
		read: func(r *reader, v string) *valueFault {
			if v != "-" {
				t := &r.rec.Turn
				t.LinkType, t.LinkSubtype, _ = strings.Cut(v, "/")
				r.set(FLink)
			}
			return nil
		}},
	{key: "units", form: "an int, at most 512",
		write: func(b []byte, t *Turn) []byte { return strconv.AppendInt(b, int64(len(t.Units)), 10) },
		read: func(r *reader, v string) *valueFault {
			n, ok := parseCount(v)
			switch {
			case !ok:
				return badValue("")
			case n > MaxUnits:
				return &valueFault{reason: ReasonTooLong, problem: "at most " + strconv.Itoa(MaxUnits) + " units"}
			}
			r.rec.Turn.DeclaredUnits = n
			r.set(FUnits)
			return nil
		}},
	{key: "underruns", form: "an int (the turn's total), or one int per unit, comma-separated",
		write: func(b []byte, t *Turn) []byte {
			n := 0
			for _, u := range t.Units {
				n += u.Underruns
			}
			return strconv.AppendInt(b, int64(n), 10)
		},
		read: (*reader).underruns},
	{key: "silent", form: formSeconds,
		write: func(b []byte, t *Turn) []byte {
			s := 0.0
			for _, u := range t.Units {
				s += u.Silent
			}
			return appendSeconds(b, s)
		},
		read: func(r *reader, v string) *valueFault { return r.secondsTo(&r.rec.Turn.Silent, FSilent, v) }},
	{key: "stutter", form: formYesNo,
		write: func(b []byte, t *Turn) []byte { return appendBool(b, t.Stutter) },
		read:  func(r *reader, v string) *valueFault { return r.boolTo(&r.rec.Turn.Stutter, FStutter, v) }},
	{key: "route", form: "inputs>outputs, each +-separated (- for none)",
		write: func(b []byte, t *Turn) []byte {
			b = appendList(b, t.Inputs)
			b = append(b, '>')
			return appendList(b, t.Outputs)
		},
		read: func(r *reader, v string) *valueFault {
			in, out, ok := strings.Cut(v, ">")
			if !ok {
				return badValue("")
			}
			t := &r.rec.Turn
			t.Inputs, t.Outputs = list(in, "+"), list(out, "+")
			if len(t.Inputs) > 0 || len(t.Outputs) > 0 {
				r.set(FRoute)
			}
			return nil
		}},
	{key: "bt", form: formYesNo,
		write: func(b []byte, t *Turn) []byte { return appendBool(b, t.Bluetooth) },
		read: func(r *reader, v string) *valueFault {
			r.btKey = true
			return r.boolTo(&r.rec.Turn.Bluetooth, FBluetooth, v)
		}},
	{key: "sample_rate", form: "a number of Hz (16000 or 16000Hz)",
		write: func(b []byte, t *Turn) []byte { return strconv.AppendInt(b, int64(math.Round(t.SampleRate)), 10) },
		read: func(r *reader, v string) *valueFault {
			d, ok := parseNumber(strings.TrimSuffix(v, "Hz"))
			if !ok {
				return badValue("")
			}
			r.rec.Turn.SampleRate = d
			r.set(FSampleRate)
			return nil
		}},
	{key: "route_changes", form: formInt,
		write: func(b []byte, t *Turn) []byte { return strconv.AppendInt(b, int64(t.RouteChanges), 10) },
		read:  func(r *reader, v string) *valueFault { return r.intTo(&r.rec.Turn.RouteChanges, FRouteChanges, v) }},
	{key: "listen", form: "grant/session/total, seconds each",
		write: func(b []byte, t *Turn) []byte {
			return appendSlashed(b, t.ListenGrant, t.ListenSession, t.ListenTotal)
		},
		read: func(r *reader, v string) *valueFault {
			t := &r.rec.Turn
			var g, s, tot float64
			if f := slashed(v, &g, &s, &tot); f != nil {
				return f
			}
			t.ListenGrant, t.ListenSession, t.ListenTotal = g, s, tot
			if g != 0 || s != 0 || tot != 0 { // all zeros: not recorded
				r.set(FListenGrant | FListenSession | FListenTotal)
			}
			return nil
		}},
	{key: "rpm", form: "loaded/fresh, seconds each",
		write: func(b []byte, t *Turn) []byte { return appendSlashed(b, t.RPMLoaded, t.RPMFresh) },
		read: func(r *reader, v string) *valueFault {
			t := &r.rec.Turn
			var loaded, fresh float64
			if f := slashed(v, &loaded, &fresh); f != nil {
				return f
			}
			t.RPMLoaded, t.RPMFresh = loaded, fresh
			if loaded != 0 || fresh != 0 { // both zero: not recorded
				r.set(FRPM)
			}
			return nil
		}},
	{key: "post", form: formSeconds,
		write: func(b []byte, t *Turn) []byte { return appendSeconds(b, t.SpeechEndToPost) },
		read:  func(r *reader, v string) *valueFault { return r.secondsTo(&r.rec.Turn.SpeechEndToPost, FPost, v) }},
	{key: "not_sent", form: formSeconds,
		write: func(b []byte, t *Turn) []byte { return appendSeconds(b, t.NotSent) },
		read:  func(r *reader, v string) *valueFault { return r.secondsTo(&r.rec.Turn.NotSent, FNotSent, v) }},
	{key: "pool_reset", form: "now or now(before), ints (- for none)",
		write: func(b []byte, t *Turn) []byte {
			if !t.HasPoolResets {
				return append(b, '-')
			}
			b = strconv.AppendInt(b, int64(t.PoolResets), 10)
			if t.HasPoolPrior {
				b = append(b, '(')
				b = strconv.AppendInt(b, int64(t.PoolResetsBefore), 10)
				b = append(b, ')')
			}
			return b
		},
		read: (*reader).pool},
	{key: "live", form: "kind:now[(before,…)],… ints, the history oldest first (- for none)",
		write: appendLive,
		read:  (*reader).live},
	{key: "uptime", form: "device/app, seconds each",
		write: func(b []byte, t *Turn) []byte { return appendSlashed(b, t.DeviceUptime, t.AppUptime) },
		read: func(r *reader, v string) *valueFault {
			t := &r.rec.Turn
			var device, app float64
			if f := slashed(v, &device, &app); f != nil {
				return f
			}
			t.DeviceUptime, t.AppUptime = device, app
			r.uptimeKey = true
			r.set(FDeviceUptime | FAppUptime)
			return nil
		}},
	{key: "activations", form: formInt,
		write: func(b []byte, t *Turn) []byte { return strconv.AppendInt(b, int64(t.Activations), 10) },
		read:  func(r *reader, v string) *valueFault { return r.intTo(&r.rec.Turn.Activations, FActivations, v) }},
	{key: "memory", form: "an int of bytes",
		write: func(b []byte, t *Turn) []byte { return strconv.AppendInt(b, t.Memory, 10) },
		read:  func(r *reader, v string) *valueFault { return r.int64To(&r.rec.Turn.Memory, FMemory, v) }},
	{key: "gaps", form: "gap[a(lead)],… seconds, one per unit (- for none)",
		write: func(b []byte, t *Turn) []byte {
			if len(t.Units) == 0 {
				return append(b, '-')
			}
			for i, u := range t.Units {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendGap(b, u.Gap, u.Lead)
			}
			return b
		},
		read: (*reader).gapList},
	{key: "broke", form: "index:underruns/silent/cushion@take,… for each unit that underran (- for none)",
		write: appendBroke,
		read:  (*reader).brokenUnitList},
	{key: TurnKeyChanges, form: "at@reason>outputs,… at in seconds, outputs +-separated",
		write: func(b []byte, t *Turn) []byte {
			for i, c := range t.Changes {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, c.At, 'f', 2, 64)
				b = append(b, '@')
				b = append(b, token(orDash(c.Reason))...)
				b = append(b, '>')
				b = appendList(b, c.Outputs)
			}
			return b
		},
		omit: func(t *Turn) bool { return len(t.Changes) == 0 },
		read: (*reader).changes},
}

// takeFields are the fields of a [tts-take] line, in the canonical order.
var takeFields = []keyField[Take]{
	{key: "take", form: "the take's ID",
		write: func(b []byte, t *Take) []byte { return append(b, token(orDash(t.ID))...) },
		read: func(r *reader, v string) *valueFault {
			if v != "-" {
				r.rec.Take.ID = v
				r.set(FTake)
			}
			return nil
		}},
	{key: "trace", form: "32 hex digits, not all zeros (- for none)",
		write: func(b []byte, t *Take) []byte { return append(b, orDash(t.TraceID)...) },
		read:  (*reader).trace},
	{key: "first_byte", form: formSeconds,
		write: func(b []byte, t *Take) []byte { return appendSeconds(b, t.FirstByte) },
		read:  func(r *reader, v string) *valueFault { return r.secondsTo(&r.rec.Take.FirstByte, FFirstByte, v) }},
	{key: "total", form: formSeconds,
		write: func(b []byte, t *Take) []byte { return appendSeconds(b, t.Total) },
		read:  func(r *reader, v string) *valueFault { return r.secondsTo(&r.rec.Take.Total, FTotal, v) }},
	{key: "audio", form: formSeconds,
		write: func(b []byte, t *Take) []byte { return appendSeconds(b, t.Audio) },
		read:  func(r *reader, v string) *valueFault { return r.secondsTo(&r.rec.Take.Audio, FAudio, v) }},
	{key: "rate", form: "a number, audio seconds per second (0.68 or 0.68x)",
		write: func(b []byte, t *Take) []byte { return appendSeconds(b, t.Rate) },
		read: func(r *reader, v string) *valueFault {
			d, ok := parseNumber(strings.TrimSuffix(v, "x"))
			if !ok {
				return badValue("")
			}
			r.rec.Take.Rate = d
			r.set(FRate)
			return nil
		}},
	{key: "need", form: formSeconds,
		write: func(b []byte, t *Take) []byte { return appendSeconds(b, t.Need) },
		read:  func(r *reader, v string) *valueFault { return r.secondsTo(&r.rec.Take.Need, FNeed, v) }},
	{key: "beside", form: formInt,
		write: func(b []byte, t *Take) []byte { return strconv.AppendInt(b, int64(t.Beside), 10) },
		read:  func(r *reader, v string) *valueFault { return r.intTo(&r.rec.Take.Beside, FBeside, v) }},
}

// The app's spellings of a [voice-turn] line's readings, which the writer
// never prints: flags, groups of key=value and one token per route change
// (docs/lines.md). Each one a line may give once counts as the canonical
// field it spells (so bt= and +bluetooth are one field), or as itself.

// flag is a +flag of the app's spelling.
type flag struct {
	name, countsAs string
	set            func(r *reader)
}

var turnFlags = []flag{
	{"bluetooth", "bt", func(r *reader) { r.rec.Turn.Bluetooth = true; r.set(FBluetooth) }},
	{"bt", "bt", func(r *reader) { r.rec.Turn.Bluetooth = true; r.set(FBluetooth) }},
	{"stutter", "stutter", func(r *reader) { r.rec.Turn.Stutter = true; r.set(FStutter) }},
}

// group is a prefix:k=v,k=v token of the app's spelling.
type group struct {
	prefix   string // "listen_open:"
	countsAs string // the canonical key it counts as once ("" : itself)
	form     string
	keys     []groupKey
}

// groupKey is one k=v of a group.
type groupKey struct {
	key, form string
	read      func(r *reader, v string) *valueFault
}

var turnGroups = []group{
	{prefix: "listen_open:", countsAs: "listen", form: "listen_open:grant=S,session=S,total=S (any of them, seconds)", keys: []groupKey{
		{"grant", formSeconds, func(r *reader, v string) *valueFault {
			return r.secondsTo(&r.rec.Turn.ListenGrant, FListenGrant, v)
		}},
		{"session", formSeconds, func(r *reader, v string) *valueFault {
			return r.secondsTo(&r.rec.Turn.ListenSession, FListenSession, v)
		}},
		{"total", formSeconds, func(r *reader, v string) *valueFault {
			return r.secondsTo(&r.rec.Turn.ListenTotal, FListenTotal, v)
		}},
	}},
	{prefix: "health:", form: "health:device_uptime=S,app_uptime=S,activations=N,memory=B (any of them)", keys: []groupKey{
		{"device_uptime", formSeconds, func(r *reader, v string) *valueFault {
			return r.secondsTo(&r.rec.Turn.DeviceUptime, FDeviceUptime, v)
		}},
		{"app_uptime", formSeconds, func(r *reader, v string) *valueFault {
			return r.secondsTo(&r.rec.Turn.AppUptime, FAppUptime, v)
		}},
		{"uptime", "device/app, seconds each", func(r *reader, v string) *valueFault {
			t := &r.rec.Turn
			var device, app float64
			if f := slashed(v, &device, &app); f != nil {
				return f
			}
			t.DeviceUptime, t.AppUptime = device, app
			r.set(FDeviceUptime | FAppUptime)
			return nil
		}},
		{"activations", formInt, func(r *reader, v string) *valueFault {
			return r.intTo(&r.rec.Turn.Activations, FActivations, v)
		}},
		{"memory", "an int of bytes", func(r *reader, v string) *valueFault {
			return r.int64To(&r.rec.Turn.Memory, FMemory, v)
		}},
	}},
}

// routeChangePrefix starts the app's token for one route change:
// route_change@<at>=<reason>:<outputs>.
const (
	routeChangePrefix = "route_change@"
	routeChangeForm   = "route_change@<seconds>=<reason>:<outputs>, outputs +- or ,-separated"
)

// keyIndex finds a key's field in a table (the reader's dispatch).
type keyIndex map[string]uint8

func indexOf[T any](fields []keyField[T]) keyIndex {
	m := make(keyIndex, len(fields))
	for i, f := range fields {
		if _, dup := m[f.key]; dup {
			panic("textlines: key " + f.key + " twice in one table")
		}
		m[f.key] = uint8(i)
	}
	return m
}

var (
	turnIndex = indexOf(turnFields)
	takeIndex = indexOf(takeFields)
)

// What a line may give once has a bit in reader.seen: each field of its
// table by its index, then (turn lines) each app group that counts as
// itself.
func init() {
	if len(turnFields)+len(turnGroups) > 64 || len(takeFields) > 64 {
		panic("textlines: more once-only keys than bits in reader.seen")
	}
	for _, f := range turnFlags {
		if _, ok := turnIndex[f.countsAs]; !ok {
			panic("textlines: flag +" + f.name + " counts as an unknown field " + f.countsAs)
		}
	}
	for _, g := range turnGroups {
		if _, ok := turnIndex[g.countsAs]; g.countsAs != "" && !ok {
			panic("textlines: group " + g.prefix + " counts as an unknown field " + g.countsAs)
		}
	}
}

// TurnKeys lists the keys of a [voice-turn] line in the canonical order,
// the optional last one (TurnKeyChanges) included.
func TurnKeys() []string { return keysOf(turnFields) }

// TakeKeys lists the keys of a [tts-take] line in the canonical order.
func TakeKeys() []string { return keysOf(takeFields) }

func keysOf[T any](fields []keyField[T]) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.key
	}
	return out
}

// TurnKeyChanges is the optional last field of a [voice-turn] line: each
// route change while she read (at@reason>outputs), printed when the writer
// knows them. A line without it is the older format and still reads.
const TurnKeyChanges = "changes"

// appendLive prints kind:now(before,…),… or - when there is no count.
func appendLive(b []byte, t *Turn) []byte {
	if len(t.Live) == 0 {
		return append(b, '-')
	}
	for i, l := range t.Live {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, token(l.Kind)...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(l.Now), 10)
		if len(l.Before) > 0 {
			b = append(b, '(')
			for j, v := range l.Before {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(v), 10)
			}
			b = append(b, ')')
		}
	}
	return b
}

// appendBroke prints index:underruns/silent/cushion@take for each unit that
// underran, or - when none did.
func appendBroke(b []byte, t *Turn) []byte {
	n := 0
	for _, u := range t.Units {
		if u.Underruns == 0 {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = strconv.AppendInt(b, int64(u.Index), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(u.Underruns), 10)
		b = append(b, '/')
		b = appendSeconds(b, u.Silent)
		b = append(b, '/')
		b = appendSeconds(b, u.Cushion)
		b = append(b, '@')
		b = append(b, token(orDash(u.TakeID))...)
	}
	if n == 0 {
		b = append(b, '-')
	}
	return b
}
