package persist

import (
	"encoding/binary"
	"errors"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/verdict"
)

// The primitives of the stored forms: varints, little-endian doubles and
// length-prefixed strings, every length bounded when read.

// Codec limits: a stored value larger than these is corrupt, not a turn.
// The readers bound what a turn keeps within them (verdict.MaxValueBytes,
// verdict.MaxLiveKinds, verdict.MaxProblems, …), so whatever is stored can
// be read back; FuzzReadingsRoundTrip holds the two together.
const (
	maxStoredList     = 4 * verdict.MaxProblems // strings and ints
	maxStoredString   = 4096
	maxStoredSpans    = 2*verdict.MaxUnits + 1
	maxStoredResource = 32 << 20 // the OTLP receiver takes requests of 20 MiB
)

var errCorrupt = errors.New("stored value is corrupt")

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) float(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *encoder) str(s string)           { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(b []byte)         { e.uint(uint64(len(b))); e.b = append(e.b, b...) }
func (e *encoder) span(id pcommon.SpanID) { e.b = append(e.b, id[:]...) }
func (e *encoder) strs(ss []string) {
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}
func (e *encoder) ints(vs []int64) {
	e.uint(uint64(len(vs)))
	for _, v := range vs {
		e.int(v)
	}
}
func (e *encoder) spans(ids []pcommon.SpanID) {
	e.uint(uint64(len(ids)))
	for _, id := range ids {
		e.span(id)
	}
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) float() float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) bool() bool {
	if len(d.b) < 1 || d.b[0] > 1 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

// count reads a length and checks it against a bound.
func (d *decoder) count(limit int) int {
	n := d.uint()
	if n > uint64(limit) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) raw(n int) []byte {
	if len(d.b) < n {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.raw(d.count(maxStoredString))) }

func (d *decoder) bytes(limit int) []byte {
	return append([]byte(nil), d.raw(d.count(limit))...)
}

func (d *decoder) span() pcommon.SpanID {
	var id pcommon.SpanID
	copy(id[:], d.raw(len(id)))
	return id
}

func (d *decoder) strs() []string { return decodeList(d, maxStoredList, d.str) }

func (d *decoder) ints() []int64 { return decodeList(d, maxStoredList, d.int) }

func (d *decoder) spans() []pcommon.SpanID { return decodeList(d, maxStoredSpans, d.span) }

// decodeList reads a length, bounded by limit, then that many elements
// (nil for none).
func decodeList[T any](d *decoder, limit int, read func() T) []T {
	n := d.count(limit)
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = read()
	}
	return out
}

// encodeResource stores a resource as the OTLP protobuf of an otherwise
// empty batch: every attribute type round-trips.
func encodeResource(res pcommon.Resource) []byte {
	td := ptrace.NewTraces()
	res.CopyTo(td.ResourceSpans().AppendEmpty().Resource())
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return nil // never for a resource; stored as empty
	}
	return b
}

func decodeResource(b []byte) (pcommon.Resource, error) {
	res := pcommon.NewResource()
	if len(b) == 0 {
		return res, nil
	}
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
	if err != nil || td.ResourceSpans().Len() != 1 {
		return res, errCorrupt
	}
	td.ResourceSpans().At(0).Resource().CopyTo(res)
	return res, nil
}
