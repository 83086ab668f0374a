package launches

import (
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/verdict"
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func turn(index, pool int64, players int64) KeptTurn {
	return KeptTurn{PastTurn: verdict.PastTurn{Index: index, Pool: verdict.Some(pool),
		Live: []verdict.LiveCount{{Kind: semconv.LivePlayers, Count: players}}}, Trace: pcommon.TraceID{byte(index)},
		App: NoUptime, Device: NoUptime}
}

type recorder struct {
	changed, forgot int
}

func (r *recorder) LaunchChanged(*Launch) { r.changed++ }
func (r *recorder) LaunchForgotten(Key)   { r.forgot++ }

// TestTurnsKeptByIndex: a launch keeps its most recent turns in index
// order, whatever order they arrive in; a turn seen again changes nothing;
// one older than every kept turn of a full launch is not kept.
func TestTurnsKeptByIndex(t *testing.T) {
	r := &recorder{}
	b := New(10, time.Hour, 3)
	b.ReportTo(r)
	k := Key{"install-1", "launch-1"}
	for _, i := range []int64{2, 1, 4, 3, 3} {
		b.Record(k, turn(i, i, i), t0)
	}
	e := b.Earlier(k, 0, 5)
	var got []int64
	for _, p := range e.Turns {
		got = append(got, p.Index)
	}
	if !reflect.DeepEqual(got, []int64{2, 3, 4}) {
		t.Fatalf("kept turns %v, want the last three by index [2 3 4]", got)
	}
	if r.changed != 4 {
		t.Fatalf("%d changes reported, want 4 (the repeat of turn 3 and the too-old turn 1 are none)", r.changed)
	}
	if e := b.Earlier(k, 0, 3); len(e.Turns) != 1 || e.Turns[0].Index != 2 {
		t.Fatalf("earlier than 3: %+v, want turn 2 only", e.Turns)
	}
	if !b.Has(k, 0, 4) || b.Has(k, 0, 1) || b.Has(Key{"install-1", "launch-2"}, 0, 4) {
		t.Fatal("Has reads the wrong turns")
	}
}

// TestBoundedAndIdle: past the cap the least recently seen launch is
// forgotten; a launch idle for the idle time is forgotten; both are told.
func TestBoundedAndIdle(t *testing.T) {
	r := &recorder{}
	b := New(2, time.Hour, 4)
	b.ReportTo(r)
	a, c, d := Key{"i", "a"}, Key{"i", "c"}, Key{"i", "d"}
	b.Record(a, turn(1, 0, 1), t0)
	b.Record(c, turn(1, 0, 1), t0.Add(time.Minute))
	b.Record(a, turn(2, 0, 1), t0.Add(2*time.Minute)) // a seen again: c is the oldest
	if _, _, forgot := b.Record(d, turn(1, 0, 1), t0.Add(3*time.Minute)); forgot != 1 || b.Len() != 2 || b.Has(c, 0, 1) {
		t.Fatalf("forgot %d, kept %d, c kept %v: want c forgotten for d", forgot, b.Len(), b.Has(c, 0, 1))
	}
	if n := b.Expire(t0.Add(2*time.Minute + time.Hour)); n != 1 || b.Has(a, 0, 2) || !b.Has(d, 0, 1) {
		t.Fatalf("expired %d; want a (idle an hour) gone and d kept", n)
	}
	if r.forgot != 2 {
		t.Fatalf("%d forgettings told, want 2", r.forgot)
	}
}

// TestCodecRoundTrip: a launch reads back as it was stored; every prefix
// of its stored form is refused.
func TestCodecRoundTrip(t *testing.T) {
	l := &Launch{Key: Key{"install-1", "launch-1"}, Seen: t0, Runs: 2, Turns: []KeptTurn{turn(3, 2, 4), turn(4, 2, 5), turn(1, 0, 1)}}
	l.Turns[0].Pool = verdict.Opt[int64]{}
	l.Turns[1].At, l.Turns[1].App, l.Turns[1].Device = t0.UnixNano(), 312.5, 90210.25
	l.Turns[2].At, l.Turns[2].App, l.Turns[2].Run = t0.Add(time.Minute).UnixNano(), 4.5, 1
	b := Encode(l)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Seen.Equal(l.Seen) || got.Key != l.Key || got.Runs != l.Runs || !reflect.DeepEqual(got.Turns, l.Turns) {
		t.Fatalf("read back %+v, want %+v", got, l)
	}
	for n := range len(b) {
		if _, err := Decode(b[:n]); err == nil {
			t.Fatalf("a stored launch cut to %d of %d bytes was read", n, len(b))
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(&Launch{Key: Key{"i", "l"}, Seen: t0, Turns: []KeptTurn{turn(1, 0, 1)}}))
	f.Add([]byte{launchVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Decode(b)
		if err != nil {
			return
		}
		if _, err := Decode(Encode(l)); err != nil {
			t.Fatalf("a launch read back does not read again: %v", err)
		}
	})
}

// BenchmarkLaunchBytes: the heap one kept launch costs, each with as many
// turns as a processor keeps (KeptTurns) and the six live kinds the SDK
// reports.
func BenchmarkLaunchBytes(b *testing.B) {
	const launches = 20000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		book := New(launches, time.Hour, KeptTurns)
		for i := range launches {
			k := Key{"install-" + strconv.Itoa(i%5000), "5b0c1e8a-6d0f-4d43-9a6e-" + strconv.Itoa(100000000000+i)}
			for idx := int64(1); idx <= KeptTurns; idx++ {
				// Each turn its own trace, end and uptimes, as a phone sends them.
				tr := KeptTurn{PastTurn: verdict.PastTurn{Index: idx, Pool: verdict.Some(idx)}, Trace: pcommon.TraceID{byte(i), byte(i >> 8), byte(idx)},
					At: t0.Add(time.Duration(idx) * time.Minute).UnixNano(), App: float64(60 * idx), Device: float64(9000 + 60*idx)}
				for _, kind := range semconv.LiveKinds {
					tr.Live = append(tr.Live, verdict.LiveCount{Kind: kind, Count: idx})
				}
				book.Record(k, tr, t0)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n := len(book.by[Key{"install-0", "5b0c1e8a-6d0f-4d43-9a6e-100000000000"}].Turns); n != KeptTurns {
			b.Fatalf("a launch kept %d turns, want %d", n, KeptTurns)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/launches, "bytes/launch")
		runtime.KeepAlive(book)
	}
}

// TestRunsFromEvidenceThatHolds: the turns of one service.instance.id are
// one launch (run) until the turn index does not go up, app_uptime drops
// or device_uptime drops between two turns next to each other in time; a
// turn arriving late finds the run of its neighbours in time
// (docs/decisions/0249). Each case is turns as they arrive, and the run
// each is placed in.
func TestRunsFromEvidenceThatHolds(t *testing.T) {
	type arrival struct {
		index       int64
		at          int64   // seconds on the phone's clock; 0: not sent
		app, device float64 // seconds; NoUptime: not reported
		run         uint32
	}
	const no = NoUptime
	for _, c := range []struct {
		name  string
		turns []arrival
	}{
		{"in order", []arrival{{1, 100, 10, no, 0}, {2, 160, 70, no, 0}, {3, 220, 130, no, 0}}},
		{"a late turn", []arrival{{1, 100, 10, no, 0}, {2, 160, 70, no, 0}, {4, 280, 190, no, 0}, {3, 220, 130, no, 0}}},
		{"asleep between turns: the start moves later", []arrival{{1, 100, 10, 5000, 0}, {2, 220, 70, 5060, 0}, {3, 340, 130, 5120, 0}}},
		{"asleep with turns missing between: one launch, as the ID says", []arrival{{1, 100, 10, no, 0}, {4, 700, 100, no, 0}}},
		{"reused ID, the index goes back", []arrival{{1, 100, 10, no, 0}, {2, 160, 70, no, 0}, {3, 220, 130, no, 0}, {1, 400, 5, no, 1}, {2, 460, 65, no, 1}}},
		{"reused ID, no uptimes, the index goes back", []arrival{{1, 100, no, no, 0}, {2, 160, no, no, 0}, {1, 400, no, no, 1}, {2, 460, no, no, 1}}},
		{"reused ID, app_uptime drops, the index goes on", []arrival{{1, 100, 10, no, 0}, {2, 160, 70, no, 0}, {3, 400, 20, no, 1}}},
		{"a reboot: device_uptime drops", []arrival{{1, 100, 10, 5000, 0}, {2, 160, 70, 5060, 0}, {3, 900, 80, 30, 1}}},
		{"the old launch's late turn after a relaunch", []arrival{{1, 100, 10, no, 0}, {2, 160, 70, no, 0}, {1, 400, 5, no, 1}, {3, 220, 130, no, 0}}},
		{"the relaunch's turn 2 before its turn 1", []arrival{{1, 100, 10, no, 0}, {3, 220, 130, no, 0}, {2, 460, 65, no, 1}, {1, 400, 5, no, 1}}},
		{"a relaunch's turn 1 before the old launch's last", []arrival{{1, 100, 10, no, 0}, {1, 400, 5, no, 1}, {2, 160, 70, no, 0}}},
		{"no times: index order, the same index twice is a new launch", []arrival{{1, 0, no, no, 0}, {3, 0, no, no, 0}, {2, 0, no, no, 0}, {2, 0, no, no, 1}}},
		{"a launch stored without times, then a late timed turn", []arrival{{4, 0, no, no, 0}, {6, 0, no, no, 0}, {5, 500, 40, no, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := New(10, time.Hour, KeptTurns)
			k := Key{"install-1", "launch-1"}
			for i, a := range c.turns {
				tr := turn(a.index, 0, 1)
				tr.Trace = pcommon.TraceID{byte(i + 1)}
				if a.at != 0 {
					tr.At = t0.Add(time.Duration(a.at) * time.Second).UnixNano()
				}
				tr.App, tr.Device = a.app, a.device
				run, _, _ := b.Record(k, tr, t0)
				if run != a.run {
					t.Errorf("arrival %d (turn %d at %d s): run %d, want %d", i+1, a.index, a.at, run, a.run)
				}
				if got := b.RunOf(k, &tr); got != run {
					t.Errorf("arrival %d: RunOf says run %d, Record %d", i+1, got, run)
				}
			}
		})
	}
}

// TestEarlierReadsItsRun: a turn reads the earlier turns of its own run
// only, in index order.
func TestEarlierReadsItsRun(t *testing.T) {
	b := New(10, time.Hour, KeptTurns)
	k := Key{"install-1", "launch-1"}
	for i, a := range []struct {
		index, pool, at int64
	}{{1, 2, 100}, {2, 2, 160}, {1, 0, 400}, {3, 2, 220}, {2, 1, 460}} {
		tr := turn(a.index, a.pool, 1)
		tr.Trace, tr.At = pcommon.TraceID{byte(i + 1)}, t0.Add(time.Duration(a.at)*time.Second).UnixNano()
		b.Record(k, tr, t0)
	}
	var old, relaunch []int64
	for _, p := range b.Earlier(k, 0, 4).Turns {
		old = append(old, p.Index, p.Pool.V)
	}
	for _, p := range b.Earlier(k, 1, 3).Turns {
		relaunch = append(relaunch, p.Index, p.Pool.V)
	}
	if !reflect.DeepEqual(old, []int64{1, 2, 2, 2, 3, 2}) || !reflect.DeepEqual(relaunch, []int64{1, 0, 2, 1}) {
		t.Fatalf("the first launch's turns (index, pool) %v, the relaunch's %v; want [1 2 2 2 3 2] and [1 0 2 1]", old, relaunch)
	}
	if id, ok := b.TraceOf(k, 1, 2); !ok || id != (pcommon.TraceID{5}) || !b.Has(k, 0, 3) || b.Has(k, 1, 3) {
		t.Fatal("TraceOf and Has read the wrong run")
	}
}

// TestCodecReadsVersion1: a launch stored before runs, times and uptimes
// were kept reads as one run, its turns without times or uptimes (placed
// by index).
func TestCodecReadsVersion1(t *testing.T) {
	// Version 1's form: key, seen, then each turn's index, trace, pool and
	// live counts.
	e := compact.Encoder{B: []byte{1}}
	e.Str("install-1")
	e.Str("launch-1")
	e.Int(t0.UnixNano())
	e.Uint(2)
	for _, idx := range []int64{3, 4} {
		e.Int(idx)
		e.B = append(e.B, pcommon.TraceID{byte(idx)}.String()[:16]...)
		e.Bool(true)
		e.Int(idx)
		e.Uint(1)
		e.Str(semconv.LivePlayers)
		e.Int(idx)
	}
	l, err := Decode(e.B)
	if err != nil {
		t.Fatal(err)
	}
	if l.Runs != 1 || len(l.Turns) != 2 || l.Turns[1].Index != 4 || l.Turns[1].Run != 0 ||
		l.Turns[1].At != 0 || l.Turns[1].App != NoUptime || l.Turns[1].Device != NoUptime || l.Turns[1].Pool.V != 4 {
		t.Fatalf("version 1 read as %+v", l)
	}
}
