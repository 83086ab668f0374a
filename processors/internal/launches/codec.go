package launches

import (
	"fmt"
	"math"
	"time"

	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/verdict"
)

// launchVersion is the first byte of a stored launch. A change of the form
// bumps it and keeps a reader for every earlier version
// (docs/decisions/0229-stored-turns-migrate.md).
const launchVersion = 2

// maxStoredTurns bounds the turns a stored launch may hold.
const maxStoredTurns = 64

var launchReaders = map[byte]func(d *compact.Decoder, l *Launch){
	1: readLaunchV1,
	2: readLaunchV2,
}

// Encode is the stored form of a launch.
func Encode(l *Launch) []byte {
	e := compact.Encoder{B: make([]byte, 0, 64+32*len(l.Turns))}
	e.B = append(e.B, launchVersion)
	e.Str(l.Key.Installation)
	e.Str(l.Key.Instance)
	e.Int(l.Seen.UnixNano())
	e.Uint(uint64(l.Runs))
	e.Uint(uint64(len(l.Turns)))
	for i := range l.Turns {
		t := &l.Turns[i]
		e.Int(t.Index)
		e.Int(t.At)
		e.Float(t.App)
		e.Float(t.Device)
		e.Uint(uint64(t.Run))
		e.B = append(e.B, t.Trace[:]...)
		e.Bool(t.Pool.OK)
		e.Int(t.Pool.V)
		e.Uint(uint64(len(t.Live)))
		for _, c := range t.Live {
			e.Str(c.Kind)
			e.Int(c.Count)
		}
	}
	return e.B
}

// Decode reads a stored launch, whatever version wrote it.
func Decode(b []byte) (*Launch, error) {
	if len(b) == 0 {
		return nil, compact.ErrCorrupt
	}
	read, ok := launchReaders[b[0]]
	if !ok {
		return nil, fmt.Errorf("stored launch has version %d, which this build does not read (it writes %d)", b[0], launchVersion)
	}
	d := compact.Decoder{B: b[1:]}
	l := &Launch{}
	read(&d, l)
	if err := d.End(); err != nil {
		return nil, err
	}
	return l, nil
}

// readLaunchV1 reads version 1: turns by index, one run, no times or
// uptimes (such turns are placed by index, docs/decisions/0249).
func readLaunchV1(d *compact.Decoder, l *Launch) {
	readLaunch(d, l, false)
}

// readLaunchV2 reads version 2: each turn's end, uptimes and run, and the
// runs begun.
func readLaunchV2(d *compact.Decoder, l *Launch) {
	readLaunch(d, l, true)
}

func readLaunch(d *compact.Decoder, l *Launch, v2 bool) {
	l.Key.Installation = d.Str()
	l.Key.Instance = d.Str()
	l.Seen = time.Unix(0, d.Int())
	if v2 {
		l.Runs = uint32(min(d.Uint(), math.MaxUint32))
	}
	l.Turns = compact.List(d, maxStoredTurns, func() KeptTurn {
		t := KeptTurn{App: NoUptime, Device: NoUptime}
		t.Index = d.Int()
		if v2 {
			t.At = d.Int()
			t.App = d.Float()
			t.Device = d.Float()
			t.Run = uint32(min(d.Uint(), math.MaxUint32))
		}
		copy(t.Trace[:], d.Raw(len(t.Trace)))
		t.Pool = verdict.Opt[int64]{OK: d.Bool(), V: d.Int()}
		t.Live = compact.List(d, 2*verdict.MaxLiveKinds, func() verdict.LiveCount {
			return verdict.LiveCount{Kind: d.Str(), Count: d.Int()}
		})
		return t
	})
	if !v2 && len(l.Turns) > 0 {
		l.Runs = 1
	}
	for _, t := range l.Turns {
		if t.Run >= l.Runs && t.Run < math.MaxUint32 {
			l.Runs = t.Run + 1
		}
	}
}
