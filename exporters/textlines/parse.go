package textlines

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Field order of each line, as written and as documented in docs/semconv.md.
var (
	TurnKeys = []string{"turn", "trace", "link", "units", "underruns", "silent", "stutter", "route", "bt", "sample_rate",
		"route_changes", "listen", "rpm", "post", "not_sent", "pool_reset", "live", "uptime", "activations", "memory", "gaps", "broke"}
	TakeKeys = []string{"take", "trace", "first_byte", "total", "audio", "rate", "need", "beside"}
)

// TurnKeyChanges is the optional last field of a [voice-turn] line: each
// route change while she read (at@reason>outputs), printed when the writer
// knows them. A line without it is the older format and still reads.
const TurnKeyChanges = "changes"

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("textlines: not a canonical line")

// Field is one key=value of a line.
type Field struct{ Key, Value string }

// Line is a parsed [voice-turn] or [tts-take] line.
type Line struct {
	Prefix string // PrefixTurn or PrefixTake
	Fields []Field
}

// Get returns the value of key.
func (l Line) Get(key string) (string, bool) {
	for _, f := range l.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Parse reads one canonical line (with or without its newline). It checks
// the prefix and that every field is present, in the documented order.
func Parse(s string) (Line, error) {
	s = strings.TrimSuffix(s, "\n")
	tokens := strings.Split(s, " ")
	var keys []string
	switch tokens[0] {
	case PrefixTurn:
		keys = TurnKeys
	case PrefixTake:
		keys = TakeKeys
	default:
		return Line{}, fmt.Errorf("%w: prefix %q is neither %s nor %s", ErrSyntax, tokens[0], PrefixTurn, PrefixTake)
	}
	tokens = tokens[1:]
	if keys[0] == TurnKeys[0] && len(tokens) == len(keys)+1 && strings.HasPrefix(tokens[len(keys)], "changes=") {
		keys = append(keys[:len(keys):len(keys)], TurnKeyChanges) // the optional last field
	}
	if len(tokens) != len(keys) {
		return Line{}, fmt.Errorf("%w: %d fields, want %d", ErrSyntax, len(tokens), len(keys))
	}
	l := Line{Prefix: s[:strings.IndexByte(s+" ", ' ')], Fields: make([]Field, len(tokens))}
	for i, tok := range tokens {
		k, v, ok := strings.Cut(tok, "=")
		if !ok || v == "" {
			return Line{}, fmt.Errorf("%w: field %d %q is not key=value", ErrSyntax, i+1, tok)
		}
		if k != keys[i] {
			return Line{}, fmt.Errorf("%w: field %d is %q, want %q", ErrSyntax, i+1, k, keys[i])
		}
		l.Fields[i] = Field{k, v}
	}
	return l, nil
}

// ParseTake reads a [tts-take] line back into a Take (values at the line's
// two-decimal precision; "-" reads as empty).
func ParseTake(s string) (*Take, error) {
	l, err := Parse(s)
	if err != nil {
		return nil, err
	}
	if l.Prefix != PrefixTake {
		return nil, fmt.Errorf("%w: %s line, want %s", ErrSyntax, l.Prefix, PrefixTake)
	}
	t := &Take{ID: undash(l.Fields[0].Value), TraceID: undash(l.Fields[1].Value)}
	for i, dst := range []*float64{&t.FirstByte, &t.Total, &t.Audio, &t.Rate, &t.Need} {
		f := l.Fields[2+i]
		v, err := strconv.ParseFloat(f.Value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: %s=%q is not a number of seconds", ErrSyntax, f.Key, f.Value)
		}
		*dst = v
	}
	n, err := strconv.Atoi(l.Fields[7].Value)
	if err != nil {
		return nil, fmt.Errorf("%w: beside=%q is not an int", ErrSyntax, l.Fields[7].Value)
	}
	t.Beside = n
	return t, nil
}

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}
