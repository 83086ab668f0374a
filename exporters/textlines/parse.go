package textlines

import (
	"errors"
	"fmt"
	"strings"
)

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

// Parse reads one canonical line (with or without its newline): the line
// the writer prints, and nothing else. It checks the prefix, that every
// field is there in the table's order, one space apart, and that each
// value reads as its field's form.
func Parse(s string) (Line, error) {
	l, _, err := parse(s)
	return l, err
}

// ParseTake reads a [tts-take] line back into a Take (values at the line's
// two-decimal precision; "-" reads as empty).
func ParseTake(s string) (*Take, error) {
	l, r, err := parse(s)
	if err != nil {
		return nil, err
	}
	if l.Prefix != PrefixTake {
		return nil, fmt.Errorf("%w: %s line, want %s", ErrSyntax, l.Prefix, PrefixTake)
	}
	t := r.rec.Take
	t.TraceID = r.rec.TraceID
	return &t, nil
}

func parse(s string) (Line, *reader, error) {
	s = strings.TrimSuffix(s, "\n")
	tag, rest, _ := strings.Cut(s, " ")
	switch tag {
	case PrefixTurn:
		return parseFields(tag, rest, KindTurn, turnFields)
	case PrefixTake:
		return parseFields(tag, rest, KindTake, takeFields)
	}
	return Line{}, nil, fmt.Errorf("%w: prefix %q is neither %s nor %s", ErrSyntax, tag, PrefixTurn, PrefixTake)
}

// parseFields checks the tokens against the table: each key in its order
// (an optional field may be left out) and each value read by its field.
func parseFields[T any](tag, rest string, kind Kind, fields []keyField[T]) (Line, *reader, error) {
	tokens := strings.Split(rest, " ")
	if rest == "" {
		tokens = nil
	}
	required := 0
	for _, f := range fields {
		if f.omit == nil {
			required++
		}
	}
	if len(tokens) < required || len(tokens) > len(fields) {
		return Line{}, nil, fmt.Errorf("%w: %d fields, want %d", ErrSyntax, len(tokens), required)
	}
	r := &reader{rec: Record{Kind: kind, Turn: TurnReading{DeclaredUnits: -1}}}
	l := Line{Prefix: tag, Fields: make([]Field, 0, len(tokens))}
	fi := 0
	for i, tok := range tokens {
		k, v, ok := strings.Cut(tok, "=")
		if !ok || v == "" {
			return Line{}, nil, fmt.Errorf("%w: field %d %q is not key=value", ErrSyntax, i+1, tok)
		}
		for fi < len(fields) && fields[fi].key != k && fields[fi].omit != nil {
			fi++ // an optional field left out
		}
		if fi == len(fields) || fields[fi].key != k {
			want := "nothing more"
			if fi < len(fields) {
				want = fmt.Sprintf("%q", fields[fi].key)
			}
			return Line{}, nil, fmt.Errorf("%w: field %d is %q, want %s", ErrSyntax, i+1, k, want)
		}
		if f := fields[fi].read(r, v); f != nil {
			return Line{}, nil, fmt.Errorf("%w: %s", ErrSyntax, f.in(fields[fi].key, v, fields[fi].form))
		}
		l.Fields = append(l.Fields, Field{k, v})
		fi++
	}
	return l, r, nil
}
