package persist

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/verdict"
)

// The stored form of a held trace: the readings the rules need
// (verdict.Trace), in the compact encoding of codec.go behind a version
// byte. A held turn is stored on every request that changes it, so the
// encoding is written for speed, not for other readers.
//
// A build reads every version it has ever written: a change of the form
// bumps traceVersion and adds a reader for it to traceReaders, keeping the
// older ones, so the turns an earlier build left stored are read into
// today's readings (docs/decisions/0229-stored-turns-migrate.md).
// testdata/stored holds a value of each version, which TestStoredVersionsRead
// reads; TestCodecCoversEveryField fails when a reading gains a field the
// codec does not carry.

// traceVersion is the first byte of every trace this build stores.
const traceVersion = 3

// traceReaders read the stored form of each version into a trace.
var traceReaders = map[byte]func(d *decoder, t *verdict.Trace) []byte{
	3: readTraceV3,
}

// encodeTrace appends the stored form of a held trace to b; rs is its
// turn's resource, encoded (encodeResource).
func encodeTrace(b []byte, t *verdict.Trace, rs []byte) []byte {
	e := encoder{b: append(b, traceVersion)}
	e.b = append(e.b, t.ID[:]...)
	e.bool(t.Turn != nil)
	if tr := t.Turn; tr != nil {
		e.span(tr.SpanID)
		e.bytes(rs)
		writeTurnV3(&e, tr)
	}
	e.int(int64(t.ExtraTurns))
	e.spans(t.UnitSpans)
	e.uint(uint64(len(t.Units)))
	for i := range t.Units {
		u := &t.Units[i]
		e.span(u.SpanID)
		e.int(u.Index)
		e.str(u.TakeID)
		e.int(u.Underruns)
		e.float(u.Silent)
		e.float(u.Cushion)
		e.float(u.Lead)
		e.bool(u.HasLead)
		e.strs(u.Problems)
		e.bool(u.UnderrunBad)
	}
	e.uint(uint64(len(t.Takes)))
	for i := range t.Takes {
		k := &t.Takes[i]
		e.span(k.SpanID)
		e.str(k.ID)
		e.float(k.Need)
		e.str(k.Problem)
	}
	return e.b
}

func writeTurnV3(e *encoder, t *verdict.Turn) {
	e.int(t.Index)
	e.str(t.Link)
	e.bool(t.Stutter)
	e.bool(t.Bluetooth)
	e.str(t.BTOutput)
	e.uint(uint64(len(t.RouteChanges)))
	for _, rc := range t.RouteChanges {
		e.float(rc.At)
		e.str(rc.Reason)
	}
	e.uint(uint64(len(t.Live)))
	for _, l := range t.Live {
		e.str(l.Kind)
		e.ints(l.Series)
	}
	e.int(t.PoolResets)
	e.int(t.PoolBefore)
	e.bool(t.HasPoolResets)
	e.bool(t.HasPoolBefore)
	e.float(t.ListenGrant)
	e.float(t.ListenSession)
	e.float(t.ListenTotal)
	e.bool(t.HasGrant)
	e.bool(t.HasSession)
	e.bool(t.HasTotal)
	e.int(t.Units)
	e.strs(t.Problems)
	e.uint(uint64(t.EndTime))
	e.strs(t.Outputs)
	e.float(t.SpeechEndToPost)
	e.float(t.NotSent)
	e.bool(t.HasSpeechEndToPost)
	e.bool(t.HasNotSent)
}

// decodeTrace reads a stored trace back into t, whatever version of this
// build or an earlier one wrote it; it returns the turn's resource as
// stored, to be written again as is.
func decodeTrace(b []byte, t *verdict.Trace) ([]byte, error) {
	if len(b) == 0 {
		return nil, errCorrupt
	}
	read, ok := traceReaders[b[0]]
	if !ok {
		return nil, fmt.Errorf("stored trace has codec version %d, which this build does not read (it writes %d)", b[0], traceVersion)
	}
	d := decoder{b: b[1:]}
	rs := read(&d, t)
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	return rs, d.err
}

// readTraceV3 reads version 3: the form of the first crash-safe processor.
func readTraceV3(d *decoder, t *verdict.Trace) []byte {
	copy(t.ID[:], d.raw(len(t.ID)))
	var rs []byte
	if d.bool() {
		tr := &verdict.Turn{}
		tr.SpanID = d.span()
		rs = d.bytes(maxStoredResource)
		if d.err == nil {
			res, err := decodeResource(rs)
			if err != nil {
				d.fail()
				return nil
			}
			tr.Resource = res
		}
		readTurnV3(d, tr)
		t.Turn = tr
	}
	t.ExtraTurns = int(d.int())
	t.UnitSpans = d.spans()
	t.Units = decodeList(d, verdict.MaxUnits, func() verdict.Unit {
		return verdict.Unit{SpanID: d.span(), Index: d.int(), TakeID: d.str(), Underruns: d.int(),
			Silent: d.float(), Cushion: d.float(), Lead: d.float(), HasLead: d.bool(),
			Problems: d.strs(), UnderrunBad: d.bool()}
	})
	t.Takes = decodeList(d, verdict.MaxUnits, func() verdict.Take {
		return verdict.Take{SpanID: d.span(), ID: d.str(), Need: d.float(), Problem: d.str()}
	})
	return rs
}

func readTurnV3(d *decoder, t *verdict.Turn) {
	t.Index = d.int()
	t.Link = d.str()
	t.Stutter = d.bool()
	t.Bluetooth = d.bool()
	t.BTOutput = d.str()
	t.RouteChanges = decodeList(d, verdict.MaxRouteChanges, func() verdict.RouteChange {
		return verdict.RouteChange{At: d.float(), Reason: d.str()}
	})
	t.Live = decodeList(d, 2*verdict.MaxLiveKinds, func() verdict.LiveSeries {
		return verdict.LiveSeries{Kind: d.str(), Series: d.ints()}
	})
	t.PoolResets = d.int()
	t.PoolBefore = d.int()
	t.HasPoolResets = d.bool()
	t.HasPoolBefore = d.bool()
	t.ListenGrant = d.float()
	t.ListenSession = d.float()
	t.ListenTotal = d.float()
	t.HasGrant = d.bool()
	t.HasSession = d.bool()
	t.HasTotal = d.bool()
	t.Units = d.int()
	t.Problems = d.strs()
	t.EndTime = pcommon.Timestamp(d.uint())
	t.Outputs = d.strs()
	t.SpeechEndToPost = d.float()
	t.NotSent = d.float()
	t.HasSpeechEndToPost = d.bool()
	t.HasNotSent = d.bool()
}
