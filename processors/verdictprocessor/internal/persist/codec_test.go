package persist

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/verdict"
)

// TestCodecCoversEveryField: every field of the readings round-trips
// through the codec. A field added to a reading without its codec fails
// here: the test sets every field by reflection.
func TestCodecCoversEveryField(t *testing.T) {
	tr := &verdict.Trace{}
	fill(reflect.ValueOf(tr).Elem(), 1)
	res := pcommon.NewResource()
	res.Attributes().PutStr(semconv.AppInstallationID, "install-7")
	res.Attributes().PutInt("int", 3)
	res.Attributes().PutEmptySlice("list").AppendEmpty().SetDouble(1.5)
	tr.Turn.Resource = res

	b := encodeTrace(nil, tr, compact.EncodeResource(res))
	got := &verdict.Trace{}
	if _, err := decodeTrace(b, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Turn.Resource.Attributes().AsRaw(), tr.Turn.Resource.Attributes().AsRaw()) {
		t.Errorf("resource %v, want %v", got.Turn.Resource.Attributes().AsRaw(), tr.Turn.Resource.Attributes().AsRaw())
	}
	got.Turn.Resource, tr.Turn.Resource = pcommon.Resource{}, pcommon.Resource{}
	if !reflect.DeepEqual(got, tr) {
		t.Errorf("round trip changed the trace:\n got  %+v\n want %+v\n turn got  %+v\n turn want %+v", got, tr, got.Turn, tr.Turn)
	}
	// Every prefix of a stored value is refused, never read as a trace.
	for n := 0; n < len(b); n++ {
		if _, err := decodeTrace(b[:n], &verdict.Trace{}); err == nil {
			t.Fatalf("a stored value cut to %d of %d bytes was read", n, len(b))
		}
	}
	if _, err := decodeTrace(append([]byte{traceVersion + 1}, b[1:]...), &verdict.Trace{}); err == nil {
		t.Fatal("a value of a version this build never wrote was read")
	}
}

// fill sets every field of v (recursively) to a value that is not its zero.
func fill(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(pcommon.Resource{}) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), seed+i)
		}
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), seed)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), seed+10*i)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), seed+i)
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+seed%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(seed + 1))
	case reflect.Uint64, reflect.Uint8:
		v.SetUint(uint64(seed%250 + 1))
	case reflect.Float64:
		v.SetFloat(float64(seed) + 0.25)
	}
}

// sampleTrace is a held trace as a turn with an underrun waiting for its
// take leaves it.
func sampleTrace() *verdict.Trace {
	res := pcommon.NewResource()
	res.Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
	res.Attributes().PutStr(semconv.AppInstallationID, "install-1")
	return &verdict.Trace{ID: pcommon.TraceID{0xAA, 1}, Turn: &verdict.TurnReadings{SpanID: pcommon.SpanID{0xCC, 1}, Resource: res, Units: 3, Index: 2, Link: "wifi",
		Live:         []verdict.LiveSeries{{Kind: "players", Series: []int64{1, 2, 3}}},
		RouteChanges: []verdict.RouteChange{{At: 1.5, Reason: "new_device_available"}},
		PoolResets:   2, HasPoolResets: true, EndTime: 1796025601001000000, Outputs: []string{"bluetooth_a2dp"}},
		UnitSpans: []pcommon.SpanID{{1}, {2}}, Units: []verdict.Unit{{Index: 1, TakeID: "t1", Underruns: 2, Silent: 1.4, Cushion: 1.5}},
		Takes: []verdict.Take{{ID: "t2", Need: math.Pi}}}
}

// PERCAUSE_UPDATE_STORED=1 writes this build's stored form of the sample trace
// under testdata/stored; a value of every version ever written stays there.
var updateStored = os.Getenv("PERCAUSE_UPDATE_STORED") != ""

// TestStoredVersionsRead: a trace stored by any version this code has ever
// written is read back into today's readings, equal to the sample it was
// made from (a version bump keeps the older readers: stored turns migrate).
func TestStoredVersionsRead(t *testing.T) {
	want := sampleTrace()
	current := filepath.Join("testdata", "stored", "trace.v"+strconv.Itoa(traceVersion))
	if updateStored {
		tr := sampleTrace()
		if err := os.WriteFile(current, encodeTrace(nil, tr, compact.EncodeResource(tr.Turn.Resource)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "stored", "trace.v*"))
	if len(files) == 0 {
		t.Fatal("no stored values under testdata/stored (write them with PERCAUSE_UPDATE_STORED=1)")
	}
	seen := map[byte]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got := &verdict.Trace{}
		if _, err := decodeTrace(b, got); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		seen[b[0]] = true
		if !reflect.DeepEqual(got.Turn.Resource.Attributes().AsRaw(), want.Turn.Resource.Attributes().AsRaw()) {
			t.Errorf("%s: resource %v", f, got.Turn.Resource.Attributes().AsRaw())
		}
		g, w := *got, *want
		gt, wt := *g.Turn, *w.Turn
		gt.Resource, wt.Resource = pcommon.Resource{}, pcommon.Resource{}
		g.Turn, w.Turn = &gt, &wt
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s read as\n %+v %+v\nwant\n %+v %+v", f, g, gt, w, wt)
		}
	}
	for v := range traceReaders {
		if !seen[v] {
			t.Errorf("no stored value of version %d under testdata/stored", v)
		}
	}
}

// FuzzDecodeTrace: any stored bytes are read or refused, never a panic,
// and what is read encodes again.
func FuzzDecodeTrace(f *testing.F) {
	tr := sampleTrace()
	f.Add(encodeTrace(nil, tr, compact.EncodeResource(tr.Turn.Resource)))
	f.Add(encodeTrace(nil, &verdict.Trace{Takes: []verdict.Take{{ID: "t9", Problem: "take t9: pippa.take.need missing"}}}, nil))
	f.Add([]byte{traceVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := &verdict.Trace{}
		rs, err := decodeTrace(b, got)
		if err != nil {
			return
		}
		if again := encodeTrace(nil, got, rs); len(again) == 0 {
			t.Fatal("a trace read back encodes to nothing")
		}
	})
}

// FuzzReadingsRoundTrip: whatever a span's attributes hold, the readings
// kept of it are stored and read back unchanged: the readers bound what
// the codec would refuse (long strings, many live counts, long arrays).
func FuzzReadingsRoundTrip(f *testing.F) {
	f.Add("wifi", "t1", "new_device_available", "players", uint8(2), uint8(3), 1.5)
	f.Add(strings.Repeat("x", 5000), strings.Repeat("t", 300), "", "k", uint8(70), uint8(100), -2.0)
	f.Fuzz(func(t *testing.T, link, take, reason, kind string, kinds, outputs uint8, at float64) {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(semconv.AppInstallationID, link)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		ts := spans.AppendEmpty()
		ts.SetName(semconv.SpanVoiceTurn)
		a := ts.Attributes()
		a.PutStr(semconv.NetworkConnectionType, link)
		outs := a.PutEmptySlice(semconv.RouteOutputs)
		for i := 0; i < int(outputs); i++ {
			outs.AppendEmpty().SetStr(kind)
		}
		for i := 0; i < int(kinds); i++ {
			a.PutInt(semconv.LivePrefix+kind+strconv.Itoa(i), int64(i))
		}
		ev := ts.Events().AppendEmpty()
		ev.SetName(semconv.EventRouteChange)
		ev.Attributes().PutDouble(semconv.RouteChangeAt, at)
		ev.Attributes().PutStr(semconv.RouteChangeReason, reason)
		us := spans.AppendEmpty()
		us.SetName(semconv.SpanVoiceUnit)
		us.Attributes().PutStr(semconv.TakeID, take)
		us.Attributes().PutInt(semconv.UnitUnderruns, 1)
		tk := spans.AppendEmpty()
		tk.SetName(semconv.SpanTTSTake)
		tk.Attributes().PutStr(semconv.TakeID, take)
		tk.Attributes().PutStr(semconv.TakeNeed, reason)

		tr := &verdict.Trace{Turn: verdict.ReadTurn(rs.Resource(), ts), UnitSpans: []pcommon.SpanID{{1}}}
		tr.Units = append(tr.Units, verdict.ReadUnit(us))
		if r, ok := verdict.ReadTake(tk); ok {
			tr.Takes = append(tr.Takes, r)
		}
		b := encodeTrace(nil, tr, compact.EncodeResource(tr.Turn.Resource))
		got := &verdict.Trace{}
		stored, err := decodeTrace(b, got)
		if err != nil {
			t.Fatalf("readings stored, then unreadable: %v", err)
		}
		if !bytes.Equal(encodeTrace(nil, got, stored), b) {
			t.Fatal("readings read back differ from what was stored")
		}
	})
}
