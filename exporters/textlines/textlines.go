package textlines

import (
	"io"
	"strconv"
	"strings"
	"sync"
)

// Line prefixes.
const (
	PrefixTurn = "[voice-turn]"
	PrefixTake = "[tts-take]"
)

// Unit is one unit as the [voice-turn] line prints it.
type Unit struct {
	Index     int
	TakeID    string
	Gap, Lead float64
	Underruns int
	Silent    float64
	Cushion   float64
}

// Live is one live-object kind: its count now and at the end of up to 3
// earlier turns of the launch, oldest first.
type Live struct {
	Kind   string
	Now    int
	Before []int
}

// Turn is one voice turn as the [voice-turn] line prints it.
type Turn struct {
	TurnValues
	TraceID string
	Units   []Unit
}

// Take is one engine take as the [tts-take] line prints it.
type Take struct {
	ID                                  string
	TraceID                             string
	FirstByte, Total, Audio, Rate, Need float64
	Beside                              int
}

// AppendTurn appends the [voice-turn] line for t (with a trailing newline).
func AppendTurn(b []byte, t *Turn) []byte {
	return appendLine(append(b, PrefixTurn...), turnFields, t)
}

// AppendTake appends the [tts-take] line for t (with a trailing newline).
func AppendTake(b []byte, t *Take) []byte {
	return appendLine(append(b, PrefixTake...), takeFields, t)
}

// appendLine prints each field of the table as key=value, one space before
// each, in the table's order.
func appendLine[T any](b []byte, fields []keyField[T], t *T) []byte {
	for i := range fields {
		f := &fields[i]
		if f.omit != nil && f.omit(t) {
			continue
		}
		b = append(b, ' ')
		b = append(b, f.key...)
		b = append(b, '=')
		b = f.write(b, t)
	}
	return append(b, '\n')
}

// appendGap prints a unit's gap, and when its lead is negative (queued after
// the previous unit had ended) the lead too: 0.56a(-0.30).
func appendGap(b []byte, gap, lead float64) []byte {
	b = strconv.AppendFloat(b, gap, 'f', 2, 64)
	if lead < 0 {
		b = append(b, "a("...)
		b = strconv.AppendFloat(b, lead, 'f', 2, 64)
		b = append(b, ')')
	}
	return b
}

// appendSeconds prints seconds with two decimals.
func appendSeconds(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'f', 2, 64) }

// appendSlashed prints seconds separated by '/': grant/session/total.
func appendSlashed(b []byte, vs ...float64) []byte {
	for i, v := range vs {
		if i > 0 {
			b = append(b, '/')
		}
		b = appendSeconds(b, v)
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "yes"...)
	}
	return append(b, "no"...)
}

func appendList(b []byte, vs []string) []byte {
	if len(vs) == 0 {
		return append(b, '-')
	}
	for i, v := range vs {
		if i > 0 {
			b = append(b, '+')
		}
		b = append(b, token(v)...)
	}
	return b
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// token makes s safe as a value: separators of the line format become '_'.
func token(s string) string {
	if !strings.ContainsAny(s, " \t\r\n=,+>()/:@") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n', '=', ',', '+', '>', '(', ')', '/', ':', '@':
			return '_'
		}
		return r
	}, s)
}

// Writer writes whole lines to an io.Writer, one Write per line, safe for
// concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, buf: make([]byte, 0, 512)} }

// WriteTurn writes t's [voice-turn] line.
func (w *Writer) WriteTurn(t *Turn) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = AppendTurn(w.buf[:0], t)
	_, err := w.w.Write(w.buf)
	return err
}

// WriteTake writes t's [tts-take] line.
func (w *Writer) WriteTake(t *Take) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = AppendTake(w.buf[:0], t)
	_, err := w.w.Write(w.buf)
	return err
}
