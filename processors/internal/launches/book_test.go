package launches

import (
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func turn(index, pool int64, players int64) Turn {
	return Turn{PastTurn: verdict.PastTurn{Index: index, Pool: verdict.Some(pool),
		Live: []verdict.LiveCount{{Kind: semconv.LivePlayers, Count: players}}}, Trace: pcommon.TraceID{byte(index)}}
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
	e := b.Earlier(k, 5)
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
	if e := b.Earlier(k, 3); len(e.Turns) != 1 || e.Turns[0].Index != 2 {
		t.Fatalf("earlier than 3: %+v, want turn 2 only", e.Turns)
	}
	if !b.Has(k, 4) || b.Has(k, 1) || b.Has(Key{"install-1", "launch-2"}, 4) {
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
	if _, forgot := b.Record(d, turn(1, 0, 1), t0.Add(3*time.Minute)); forgot != 1 || b.Len() != 2 || b.Has(c, 1) {
		t.Fatalf("forgot %d, kept %d, c kept %v: want c forgotten for d", forgot, b.Len(), b.Has(c, 1))
	}
	if n := b.Expire(t0.Add(2*time.Minute + time.Hour)); n != 1 || b.Has(a, 2) || !b.Has(d, 1) {
		t.Fatalf("expired %d; want a (idle an hour) gone and d kept", n)
	}
	if r.forgot != 2 {
		t.Fatalf("%d forgettings told, want 2", r.forgot)
	}
}

// TestCodecRoundTrip: a launch reads back as it was stored; every prefix
// of its stored form is refused.
func TestCodecRoundTrip(t *testing.T) {
	l := &Launch{Key: Key{"install-1", "launch-1"}, Seen: t0, Turns: []Turn{turn(3, 2, 4), turn(4, 2, 5)}}
	l.Turns[0].Pool = verdict.Opt[int64]{}
	b := Encode(l)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Seen.Equal(l.Seen) || got.Key != l.Key || !reflect.DeepEqual(got.Turns, l.Turns) {
		t.Fatalf("read back %+v, want %+v", got, l)
	}
	for n := range len(b) {
		if _, err := Decode(b[:n]); err == nil {
			t.Fatalf("a stored launch cut to %d of %d bytes was read", n, len(b))
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(&Launch{Key: Key{"i", "l"}, Seen: t0, Turns: []Turn{turn(1, 0, 1)}}))
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
				tr := Turn{PastTurn: verdict.PastTurn{Index: idx, Pool: verdict.Some(idx)}}
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
