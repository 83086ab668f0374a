package textlines

import (
	"io"
	"math"
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
	Index                 int
	TraceID               string
	LinkType, LinkSubtype string
	Inputs, Outputs       []string
	Bluetooth             bool
	SampleRate            float64
	RouteChanges          int
	// Changes are the route changes while she read, in order. The line
	// prints them (changes=…) only when given: a writer that knows only
	// the count keeps printing route_changes alone, as before.
	Changes                     []RouteChange
	Stutter                     bool
	Units                       []Unit
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
	b = append(b, PrefixTurn...)
	b = appendInt(b, " turn=", t.Index)
	b = append(b, " trace="...)
	b = append(b, orDash(t.TraceID)...)
	b = append(b, " link="...)
	b = append(b, token(orDash(t.LinkType))...)
	if t.LinkSubtype != "" {
		b = append(b, '/')
		b = append(b, token(t.LinkSubtype)...)
	}
	var silent float64
	underruns := 0
	for _, u := range t.Units {
		underruns += u.Underruns
		silent += u.Silent
	}
	b = appendInt(b, " units=", len(t.Units))
	b = appendInt(b, " underruns=", underruns)
	b = appendSec(b, " silent=", silent)
	b = append(b, " stutter="...)
	b = appendBool(b, t.Stutter)
	b = append(b, " route="...)
	b = appendList(b, t.Inputs)
	b = append(b, '>')
	b = appendList(b, t.Outputs)
	b = append(b, " bt="...)
	b = appendBool(b, t.Bluetooth)
	b = appendInt(b, " sample_rate=", int(math.Round(t.SampleRate)))
	b = appendInt(b, " route_changes=", t.RouteChanges)
	b = appendSec(b, " listen=", t.ListenGrant)
	b = appendSec(b, "/", t.ListenSession)
	b = appendSec(b, "/", t.ListenTotal)
	b = appendSec(b, " rpm=", t.RPMLoaded)
	b = appendSec(b, "/", t.RPMFresh)
	b = appendSec(b, " post=", t.SpeechEndToPost)
	b = appendSec(b, " not_sent=", t.NotSent)
	b = append(b, " pool_reset="...)
	if t.HasPoolResets {
		b = strconv.AppendInt(b, int64(t.PoolResets), 10)
		if t.HasPoolPrior {
			b = appendInt(b, "(", t.PoolResetsBefore)
			b = append(b, ')')
		}
	} else {
		b = append(b, '-')
	}
	b = append(b, " live="...)
	for i, l := range t.Live {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, token(l.Kind)...)
		b = appendInt(b, ":", l.Now)
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
	if len(t.Live) == 0 {
		b = append(b, '-')
	}
	b = appendSec(b, " uptime=", t.DeviceUptime)
	b = appendSec(b, "/", t.AppUptime)
	b = appendInt(b, " activations=", t.Activations)
	b = append(b, " memory="...)
	b = strconv.AppendInt(b, t.Memory, 10)
	b = append(b, " gaps="...)
	for i, u := range t.Units {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendGap(b, u.Gap, u.Lead)
	}
	if len(t.Units) == 0 {
		b = append(b, '-')
	}
	b = append(b, " broke="...)
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
		b = appendInt(b, ":", u.Underruns)
		b = appendSec(b, "/", u.Silent)
		b = appendSec(b, "/", u.Cushion)
		b = append(b, '@')
		b = append(b, token(orDash(u.TakeID))...)
	}
	if n == 0 {
		b = append(b, '-')
	}
	if len(t.Changes) > 0 {
		b = append(b, " changes="...)
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
	}
	return append(b, '\n')
}

// AppendTake appends the [tts-take] line for t (with a trailing newline).
func AppendTake(b []byte, t *Take) []byte {
	b = append(b, PrefixTake...)
	b = append(b, " take="...)
	b = append(b, token(orDash(t.ID))...)
	b = append(b, " trace="...)
	b = append(b, orDash(t.TraceID)...)
	b = appendSec(b, " first_byte=", t.FirstByte)
	b = appendSec(b, " total=", t.Total)
	b = appendSec(b, " audio=", t.Audio)
	b = appendSec(b, " rate=", t.Rate)
	b = appendSec(b, " need=", t.Need)
	b = appendInt(b, " beside=", t.Beside)
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

func appendInt(b []byte, prefix string, v int) []byte {
	b = append(b, prefix...)
	return strconv.AppendInt(b, int64(v), 10)
}

func appendSec(b []byte, prefix string, v float64) []byte {
	b = append(b, prefix...)
	return strconv.AppendFloat(b, v, 'f', 2, 64)
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
