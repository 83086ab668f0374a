package verdictprocessor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The stored form of a pending trace: the readings the rules need, in a
// compact binary encoding (varints, little-endian doubles, length-prefixed
// strings) behind a version byte. A pending turn is stored on every request
// that changes it, so the encoding is written for speed, not for other
// readers; TestCodecCoversEveryField fails when a reading gains a field the
// codec does not carry.

// codecVersion is the first byte of every stored trace. A value of another
// version is not read (the trace is counted as a storage error at restore).
const codecVersion = 3

// Codec limits: a stored value larger than these is corrupt, not a turn.
// The readers bound what a turn keeps within them (maxValueBytes,
// maxLiveKinds, maxProblems, …), so whatever is stored can be read back;
// FuzzReadingsRoundTrip holds the two together.
const (
	maxStoredList     = 4 * maxProblems // strings and ints
	maxStoredString   = 4096
	maxStoredSpans    = 2*maxUnits + 1
	maxStoredResource = 32 << 20 // the OTLP receiver takes requests of 20 MiB
)

var errCorrupt = errors.New("stored trace is corrupt")

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

// encodeTrace appends the stored form of a pending trace to b.
func encodeTrace(b []byte, pt *pendingTrace) []byte {
	e := encoder{b: append(b, codecVersion)}
	e.b = append(e.b, pt.traceID[:]...)
	e.bool(pt.turn != nil)
	if t := pt.turn; t != nil {
		if pt.encodedRs == nil {
			pt.encodedRs = encodeResource(t.resource)
		}
		e.span(t.spanID)
		e.bytes(pt.encodedRs)
		e.int(t.index)
		e.str(t.link)
		e.bool(t.stutter)
		e.bool(t.bluetooth)
		e.str(t.btOutput)
		e.uint(uint64(len(t.routeChanges)))
		for _, rc := range t.routeChanges {
			e.float(rc.at)
			e.str(rc.reason)
		}
		e.uint(uint64(len(t.live)))
		for _, l := range t.live {
			e.str(l.kind)
			e.ints(l.series)
		}
		e.int(t.poolResets)
		e.int(t.poolBefore)
		e.bool(t.hasPoolResets)
		e.bool(t.hasPoolBefore)
		e.float(t.listenGrant)
		e.float(t.listenSession)
		e.float(t.listenTotal)
		e.bool(t.hasGrant)
		e.bool(t.hasSession)
		e.bool(t.hasTotal)
		e.int(t.units)
		e.strs(t.problems)
		e.uint(uint64(t.endTime))
		e.strs(t.outputs)
		e.float(t.speechEndToPost)
		e.float(t.notSent)
		e.bool(t.hasSpeechEndToPost)
		e.bool(t.hasNotSent)
	}
	e.int(int64(pt.extraTurns))
	e.spans(pt.unitSpans)
	e.uint(uint64(len(pt.units)))
	for i := range pt.units {
		u := &pt.units[i]
		e.span(u.spanID)
		e.int(u.index)
		e.str(u.takeID)
		e.int(u.underruns)
		e.float(u.silent)
		e.float(u.cushion)
		e.float(u.lead)
		e.bool(u.hasLead)
		e.strs(u.problems)
		e.bool(u.underrunBad)
	}
	e.uint(uint64(len(pt.takes)))
	for i := range pt.takes {
		t := &pt.takes[i]
		e.span(t.spanID)
		e.str(t.id)
		e.float(t.need)
		e.str(t.problem)
	}
	return e.b
}

// decodeTrace reads a stored trace back into pt.
func decodeTrace(b []byte, pt *pendingTrace) error {
	if len(b) == 0 || b[0] != codecVersion {
		if len(b) == 0 {
			return errCorrupt
		}
		return fmt.Errorf("stored trace has codec version %d, this build reads %d", b[0], codecVersion)
	}
	d := decoder{b: b[1:]}
	copy(pt.traceID[:], d.raw(len(pt.traceID)))
	if d.bool() {
		t := &turnReading{}
		t.spanID = d.span()
		rs := d.bytes(maxStoredResource)
		if d.err == nil {
			res, err := decodeResource(rs)
			if err != nil {
				return err
			}
			t.resource = res
			pt.encodedRs = rs
		}
		t.index = d.int()
		t.link = d.str()
		t.stutter = d.bool()
		t.bluetooth = d.bool()
		t.btOutput = d.str()
		t.routeChanges = decodeList(&d, maxRouteChanges, func() routeChange { return routeChange{at: d.float(), reason: d.str()} })
		t.live = decodeList(&d, 2*maxLiveKinds, func() liveSeries { return liveSeries{kind: d.str(), series: d.ints()} })
		t.poolResets = d.int()
		t.poolBefore = d.int()
		t.hasPoolResets = d.bool()
		t.hasPoolBefore = d.bool()
		t.listenGrant = d.float()
		t.listenSession = d.float()
		t.listenTotal = d.float()
		t.hasGrant = d.bool()
		t.hasSession = d.bool()
		t.hasTotal = d.bool()
		t.units = d.int()
		t.problems = d.strs()
		t.endTime = pcommon.Timestamp(d.uint())
		t.outputs = d.strs()
		t.speechEndToPost = d.float()
		t.notSent = d.float()
		t.hasSpeechEndToPost = d.bool()
		t.hasNotSent = d.bool()
		pt.turn = t
	}
	pt.extraTurns = int(d.int())
	pt.unitSpans = d.spans()
	pt.units = decodeList(&d, maxUnits, func() unitReading {
		return unitReading{spanID: d.span(), index: d.int(), takeID: d.str(), underruns: d.int(),
			silent: d.float(), cushion: d.float(), lead: d.float(), hasLead: d.bool(),
			problems: d.strs(), underrunBad: d.bool()}
	})
	pt.takes = decodeList(&d, maxUnits, func() takeReading {
		return takeReading{spanID: d.span(), id: d.str(), need: d.float(), problem: d.str()}
	})
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	return d.err
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
