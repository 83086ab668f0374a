package textlines

import (
	"fmt"
	"strings"
	"sync"
)

// The reader: Read takes one line as it sits in a log (any prefix before the
// tag, CRLF, fields in any order, fields this version does not know) in the
// canonical spelling this package writes or in the app's own spellings of the
// same readings, and returns its readings. Each key=value is read by its
// field of the table (fields.go); docs/lines.md is the grammar.

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
func readField[T any](r *reader, fields []keyField[T], i uint8, v string) {
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
