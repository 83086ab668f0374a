package persist

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

// The stored form of a held trace: the readings the rules need
// (verdict.Trace), in the compact encoding of
// processors/internal/compact/compact.go behind a version byte. A held
// turn is stored on every request that changes it, so the encoding is
// written for speed, not for other readers.
//
// A build reads every version it has ever written: a change of the form
// bumps traceVersion and adds a reader for it to traceReaders, keeping the
// older ones, so the turns an earlier build left stored are read into
// today's readings (docs/decisions/0229-stored-turns-migrate.md).
// testdata/stored holds a value of each version, which TestStoredVersionsRead
// reads; TestCodecCoversEveryField fails when a reading gains a field the
// codec does not carry.

// traceVersion is the first byte of every trace this build stores.
const traceVersion = 5

// traceReaders read the stored form of each version into a trace.
var traceReaders = map[byte]func(d *compact.Decoder, t *verdict.Trace) []byte{
	3: readTraceV3,
	4: readTraceV4,
	5: readTraceV5,
}

// maxSeconds bounds the seconds readings a stored turn may name (a larger
// count is corrupt); a build names at most len(verdict.TurnSeconds).
const maxSeconds = 64

// encodeTrace appends the stored form of a held trace to b; rs is its
// turn's resource, encoded (encodeResource).
func encodeTrace(b []byte, t *verdict.Trace, rs []byte) []byte {
	e := compact.Encoder{B: append(b, traceVersion)}
	e.B = append(e.B, t.ID[:]...)
	e.Bool(t.Turn != nil)
	if tr := t.Turn; tr != nil {
		e.Span(tr.SpanID)
		e.Bytes(rs)
		writeTurnV5(&e, tr)
	}
	e.Int(int64(t.ExtraTurns))
	e.Spans(t.UnitSpans)
	e.Uint(uint64(len(t.Units)))
	for i := range t.Units {
		u := &t.Units[i]
		e.Span(u.SpanID)
		e.Int(u.Index)
		e.Str(u.TakeID)
		e.Int(u.Underruns)
		e.Float(u.Silent)
		e.Float(u.Cushion)
		e.Float(u.Lead)
		e.Bool(u.HasLead)
		e.Strs(u.Problems)
		e.Bool(u.UnderrunBad)
	}
	e.Uint(uint64(len(t.Takes)))
	for i := range t.Takes {
		k := &t.Takes[i]
		e.Span(k.SpanID)
		e.Str(k.ID)
		e.Float(k.Need)
		e.Str(k.Problem)
	}
	return e.B
}

// writeTurnV5 is the turn's readings with each seconds reading it was
// given named by its ID in verdict.TurnSeconds, so a reading added there
// is stored without a change here, and an ID this build does not know (a
// later build's) is passed over.
func writeTurnV5(e *compact.Encoder, t *verdict.TurnReadings) {
	e.Int(t.Index)
	e.Str(t.Link)
	e.Bool(t.Stutter)
	e.Bool(t.Bluetooth)
	e.Str(t.BTOutput)
	e.Uint(uint64(len(t.RouteChanges)))
	for _, rc := range t.RouteChanges {
		e.Float(rc.At)
		e.Str(rc.Reason)
	}
	e.Uint(uint64(len(t.Live)))
	for _, l := range t.Live {
		e.Str(l.Kind)
		e.Ints(l.Series)
	}
	e.Int(t.PoolResets)
	e.Int(t.PoolBefore)
	e.Bool(t.HasPoolResets)
	e.Bool(t.HasPoolBefore)
	e.Int(t.Units)
	e.Strs(t.Problems)
	e.Uint(uint64(t.EndTime))
	e.Strs(t.Outputs)
	given := 0
	for _, s := range verdict.TurnSeconds {
		if _, ok := s.At(t); *ok {
			given++
		}
	}
	e.Uint(uint64(given))
	for _, s := range verdict.TurnSeconds {
		if v, ok := s.At(t); *ok {
			e.Uint(uint64(s.ID))
			e.Float(*v)
		}
	}
}

// decodeTrace reads a stored trace back into t, whatever version of this
// build or an earlier one wrote it; it returns the turn's resource as
// stored, to be written again as is.
func decodeTrace(b []byte, t *verdict.Trace) ([]byte, error) {
	if len(b) == 0 {
		return nil, compact.ErrCorrupt
	}
	read, ok := traceReaders[b[0]]
	if !ok {
		return nil, fmt.Errorf("stored trace has codec version %d, which this build does not read (it writes %d)", b[0], traceVersion)
	}
	d := compact.Decoder{B: b[1:]}
	rs := read(&d, t)
	if d.Err == nil && len(d.B) != 0 {
		d.Err = compact.ErrCorrupt
	}
	return rs, d.Err
}

// readTraceV3 reads version 3: the form of the first crash-safe processor.
func readTraceV3(d *compact.Decoder, t *verdict.Trace) []byte {
	return readTrace(d, t, readTurnV3)
}

// readTraceV4 reads version 4: version 3 with the turn's uptimes.
func readTraceV4(d *compact.Decoder, t *verdict.Trace) []byte {
	return readTrace(d, t, readTurnV4)
}

func readTrace(d *compact.Decoder, t *verdict.Trace, readTurn func(d *compact.Decoder, t *verdict.TurnReadings)) []byte {
	copy(t.ID[:], d.Raw(len(t.ID)))
	var rs []byte
	if d.Bool() {
		tr := &verdict.TurnReadings{}
		tr.SpanID = d.Span()
		rs = d.Bytes(compact.MaxResource)
		if d.Err == nil {
			res, err := compact.DecodeResource(rs)
			if err != nil {
				d.Fail()
				return nil
			}
			tr.Resource = res
		}
		readTurn(d, tr)
		t.Turn = tr
	}
	t.ExtraTurns = int(d.Int())
	t.UnitSpans = d.Spans()
	t.Units = compact.List(d, verdict.MaxUnits, func() verdict.Unit {
		return verdict.Unit{SpanID: d.Span(), Index: d.Int(), TakeID: d.Str(), Underruns: d.Int(),
			Silent: d.Float(), Cushion: d.Float(), Lead: d.Float(), HasLead: d.Bool(),
			Problems: d.Strs(), UnderrunBad: d.Bool()}
	})
	t.Takes = compact.List(d, verdict.MaxUnits, func() verdict.Take {
		return verdict.Take{SpanID: d.Span(), ID: d.Str(), Need: d.Float(), Problem: d.Str()}
	})
	return rs
}

// readTraceV5 reads version 5: the seconds readings named by their IDs.
func readTraceV5(d *compact.Decoder, t *verdict.Trace) []byte {
	return readTrace(d, t, readTurnV5)
}

func readTurnV5(d *compact.Decoder, t *verdict.TurnReadings) {
	readTurnHead(d, t)
	readTurnTail(d, t)
	for n := d.Count(maxSeconds); n > 0 && d.Err == nil; n-- {
		id, v := d.Uint(), d.Float()
		if s, ok := verdict.TurnSecondOf(uint8(id)); ok && uint64(s.ID) == id {
			at, given := s.At(t)
			*at, *given = v, true
		}
	}
}

func readTurnV4(d *compact.Decoder, t *verdict.TurnReadings) {
	readTurnV3(d, t)
	t.AppUptime = verdict.Opt[float64]{OK: d.Bool(), V: d.Float()}
	t.DeviceUptime = verdict.Opt[float64]{OK: d.Bool(), V: d.Float()}
}

func readTurnV3(d *compact.Decoder, t *verdict.TurnReadings) {
	readTurnHead(d, t)
	t.ListenGrant = d.Float()
	t.ListenSession = d.Float()
	t.ListenTotal = d.Float()
	t.HasGrant = d.Bool()
	t.HasSession = d.Bool()
	t.HasTotal = d.Bool()
	readTurnTail(d, t)
	t.SpeechEndToPost = d.Float()
	t.NotSent = d.Float()
	t.HasSpeechEndToPost = d.Bool()
	t.HasNotSent = d.Bool()
}

// readTurnHead reads what every version stores first: the turn's index,
// link, route and its changes, live counts and pool tallies.
func readTurnHead(d *compact.Decoder, t *verdict.TurnReadings) {
	t.Index = d.Int()
	t.Link = d.Str()
	t.Stutter = d.Bool()
	t.Bluetooth = d.Bool()
	t.BTOutput = d.Str()
	t.RouteChanges = compact.List(d, verdict.MaxRouteChanges, func() verdict.RouteChange {
		return verdict.RouteChange{At: d.Float(), Reason: d.Str()}
	})
	t.Live = compact.List(d, 2*verdict.MaxLiveKinds, func() verdict.LiveSeries {
		return verdict.LiveSeries{Kind: d.Str(), Series: d.Ints()}
	})
	t.PoolResets = d.Int()
	t.PoolBefore = d.Int()
	t.HasPoolResets = d.Bool()
	t.HasPoolBefore = d.Bool()
}

// readTurnTail reads what follows them in every version (version 3 and 4
// with the listen readings between): units, problems, end and outputs.
func readTurnTail(d *compact.Decoder, t *verdict.TurnReadings) {
	t.Units = d.Int()
	t.Problems = d.Strs()
	t.EndTime = pcommon.Timestamp(d.Uint())
	t.Outputs = d.Strs()
}

// EncodeHeld is a held trace in its stored form, its turn's resource with
// it: what a changelog carries of a trace held for its partition's next
// owner.
func EncodeHeld(e *pending.Entry) []byte {
	var rs []byte
	if e.Turn != nil {
		rs = compact.EncodeResource(e.Turn.Resource)
	}
	return encodeTrace(nil, &e.Trace, rs)
}

// DecodeHeld reads a held trace EncodeHeld wrote, by any version of it.
func DecodeHeld(b []byte) (*pending.Entry, error) {
	e := &pending.Entry{}
	if _, err := decodeTrace(b, &e.Trace); err != nil {
		return nil, err
	}
	return e, nil
}
