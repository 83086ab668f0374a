// Package compact is the binary form the processors store their state in:
// varints, little-endian doubles and length-prefixed strings, every length
// bounded when read, so a corrupt value is refused, never a runaway
// allocation. It is written for speed: a held turn is stored on every
// request that changes it.
package compact

import (
	"encoding/binary"
	"errors"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/verdict"
)

// Codec limits: a stored value larger than these is corrupt, not a turn.
// The readers bound what a turn keeps within them (verdict.MaxValueBytes,
// verdict.MaxLiveKinds, verdict.MaxProblems, …), so whatever is stored can
// be read back; FuzzReadingsRoundTrip holds the two together.
const (
	MaxList     = 4 * verdict.MaxProblems // strings and ints
	MaxString   = 4096
	MaxSpans    = 2*verdict.MaxUnits + 1
	MaxResource = 32 << 20 // the OTLP receiver takes requests of 20 MiB
)

var ErrCorrupt = errors.New("stored value is corrupt")

// Encoder appends values to B.
type Encoder struct{ B []byte }

func (e *Encoder) Uint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }
func (e *Encoder) Int(v int64)   { e.B = binary.AppendVarint(e.B, v) }
func (e *Encoder) Float(v float64) {
	e.B = binary.LittleEndian.AppendUint64(e.B, math.Float64bits(v))
}
func (e *Encoder) Bool(v bool) {
	if v {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
}
func (e *Encoder) Str(s string)           { e.Uint(uint64(len(s))); e.B = append(e.B, s...) }
func (e *Encoder) Bytes(b []byte)         { e.Uint(uint64(len(b))); e.B = append(e.B, b...) }
func (e *Encoder) Span(id pcommon.SpanID) { e.B = append(e.B, id[:]...) }
func (e *Encoder) Strs(ss []string) {
	e.Uint(uint64(len(ss)))
	for _, s := range ss {
		e.Str(s)
	}
}
func (e *Encoder) Ints(vs []int64) {
	e.Uint(uint64(len(vs)))
	for _, v := range vs {
		e.Int(v)
	}
}
func (e *Encoder) Spans(ids []pcommon.SpanID) {
	e.Uint(uint64(len(ids)))
	for _, id := range ids {
		e.Span(id)
	}
}

// Decoder reads values off B; the first error sticks (Err).
type Decoder struct {
	B   []byte
	Err error
}

func (d *Decoder) Fail() {
	if d.Err == nil {
		d.Err = ErrCorrupt
	}
	d.B = nil
}

func (d *Decoder) Uint() uint64 {
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

func (d *Decoder) Int() int64 {
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

func (d *Decoder) Float() float64 {
	if len(d.B) < 8 {
		d.Fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.B))
	d.B = d.B[8:]
	return v
}

func (d *Decoder) Bool() bool {
	if len(d.B) < 1 || d.B[0] > 1 {
		d.Fail()
		return false
	}
	v := d.B[0] == 1
	d.B = d.B[1:]
	return v
}

// count reads a length and checks it against a bound.
func (d *Decoder) Count(limit int) int {
	n := d.Uint()
	if n > uint64(limit) {
		d.Fail()
		return 0
	}
	return int(n)
}

func (d *Decoder) Raw(n int) []byte {
	if len(d.B) < n {
		d.Fail()
		return nil
	}
	v := d.B[:n:n]
	d.B = d.B[n:]
	return v
}

func (d *Decoder) Str() string { return string(d.Raw(d.Count(MaxString))) }

func (d *Decoder) Bytes(limit int) []byte {
	return append([]byte(nil), d.Raw(d.Count(limit))...)
}

func (d *Decoder) Span() pcommon.SpanID {
	var id pcommon.SpanID
	copy(id[:], d.Raw(len(id)))
	return id
}

func (d *Decoder) Strs() []string { return List(d, MaxList, d.Str) }

func (d *Decoder) Ints() []int64 { return List(d, MaxList, d.Int) }

func (d *Decoder) Spans() []pcommon.SpanID { return List(d, MaxSpans, d.Span) }

// List reads a length, bounded by limit, then that many elements
// (nil for none).
func List[T any](d *Decoder, limit int, read func() T) []T {
	n := d.Count(limit)
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = read()
	}
	return out
}

// EncodeResource stores a resource as the OTLP protobuf of an otherwise
// empty batch: every attribute type round-trips.
func EncodeResource(res pcommon.Resource) []byte {
	td := ptrace.NewTraces()
	res.CopyTo(td.ResourceSpans().AppendEmpty().Resource())
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return nil // never for a resource; stored as empty
	}
	return b
}

func DecodeResource(b []byte) (pcommon.Resource, error) {
	res := pcommon.NewResource()
	if len(b) == 0 {
		return res, nil
	}
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
	if err != nil || td.ResourceSpans().Len() != 1 {
		return res, ErrCorrupt
	}
	td.ResourceSpans().At(0).Resource().CopyTo(res)
	return res, nil
}

// End reports the first error, or that bytes were left over: a value read
// whole leaves none.
func (d *Decoder) End() error {
	if d.Err == nil && len(d.B) != 0 {
		d.Err = ErrCorrupt
	}
	return d.Err
}
