package verdictprocessor

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// storageHost is a host with one file_storage extension on a folder.
type storageHost struct {
	component.Host
	id  component.ID
	ext component.Component
}

func (h *storageHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{h.id: h.ext}
}

func newStorageHost(t *testing.T, dir string) *storageHost {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return &storageHost{Host: componenttest.NewNopHost(), id: component.NewID(f.Type()), ext: ext}
}

// storedHarness is a started harness whose processor keeps its state in
// file_storage under dir.
func storedHarness(t *testing.T, dir string, emit string) (*harness, *storageHost) {
	t.Helper()
	host := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = emit
	cfg.Storage = &host.id
	h := newHarness(t, cfg)
	if err := h.p.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return h, host
}

func (h *harness) stop(host *storageHost) {
	h.t.Helper()
	if err := h.p.Shutdown(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	if err := host.ext.Shutdown(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// TestStorageKeepsHeldTurnsAcrossARestart: with storage, a shutdown does
// not force the turns held: they are stored, and the next start restores
// them and decides them properly when the rest arrives. Decided trace IDs
// are restored too, so a duplicate after the restart yields nothing.
func TestStorageKeepsHeldTurnsAcrossARestart(t *testing.T) {
	for _, emit := range []string{EmitAll, EmitVerdicts} {
		t.Run("emit_"+emit, func(t *testing.T) {
			dir := t.TempDir()
			h, host := storedHarness(t, dir, emit)
			// Trace 1: the phone's half, held for its take.
			h.deliver(sdk(1, underrun(1, 2, 1.4, nil), turn(nil)))
			// Trace 2: decided.
			h.deliver(sdk(2, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)))
			// Trace 3: an engine take whose turn has not come.
			h.deliver(sdk(3, take("t1", 0.1, nil)))
			h.stop(host)
			if n := len(h.verdicts()); n != 1 {
				t.Fatalf("%d verdicts before the restart, want 1 (nothing forced at shutdown)", n)
			}
			if got := h.counter("otelcol_processor_verdict_forced")[forcedShutdown]; got != 0 {
				t.Fatalf("forced{shutdown} = %d with storage, want 0", got)
			}

			h2, host2 := storedHarness(t, dir, emit)
			defer h2.stop(host2)
			if got := h2.counter("otelcol_processor_verdict_restored")[""]; got != 2 {
				t.Fatalf("restored %d traces, want 2", got)
			}
			if got := h2.counter("otelcol_processor_verdict_pending_turns")[""]; got != 2 {
				t.Fatalf("pending_turns %d after the restore, want 2", got)
			}
			h2.deliver(sdk(1, take("t1", 0.4, nil)))
			h2.deliver(sdk(2, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil))) // a duplicate
			h2.deliver(sdk(3, underrun(1, 1, 0.5, nil), turn(nil)))
			v := h2.verdicts()
			if len(v) != 2 {
				t.Fatalf("%d verdicts after the restart, want 2", len(v))
			}
			got := map[byte]string{}
			for _, s := range v {
				c, _ := s.Attributes().Get(semconv.VerdictCause)
				got[s.TraceID()[15]] = c.Str()
			}
			if got[1] != semconv.CauseNetwork || got[3] != semconv.CauseNetwork {
				t.Errorf("verdicts after the restart %v, want trace 1 and 3 network (their parts joined across it)", got)
			}
			if d := h2.counter("otelcol_processor_verdict_dropped")[dropDecided]; d != 3 {
				t.Errorf("dropped{decided} = %d, want 3 (the duplicate of trace 2)", d)
			}
		})
	}
}

// TestStorageFollowsEveryRequest: what a request leaves held is stored by
// the time it returns; what it decides leaves storage.
func TestStorageFollowsEveryRequest(t *testing.T) {
	h, host := storedHarness(t, t.TempDir(), EmitVerdicts)
	defer h.stop(host)
	stored := func(n byte) bool {
		found := false
		err := h.p.storage.(storage.Walker).Walk(context.Background(), func(key string, value []byte) ([]*storage.Operation, error) {
			if key[0] == keyTrace {
				pt := &pendingTrace{}
				if err := decodeTrace(value, pt); err == nil && pt.traceID == traceID(n) {
					found = true
				}
			}
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	h.deliver(sdk(1, underrun(1, 2, 1.4, nil), turn(nil)))
	if !stored(1) {
		t.Fatal("a held turn is not stored when its request returns")
	}
	h.deliver(sdk(1, take("t1", 0.4, nil)))
	h.p.runCycle() // the decision's storage change is not waited for: run it
	if stored(1) {
		t.Fatal("a decided turn is still stored")
	}
	ring, _ := h.p.storage.Get(context.Background(), chunkKey(0))
	if len(ring) < 16 || pcommon.TraceID(ring[:16]) != traceID(1) {
		t.Fatalf("the decided ring's first chunk holds %x, want trace 1 first", ring)
	}
}

// TestStoredRingResized: decided IDs stored with one decided_cache_size are
// read back into another, the newest kept.
func TestStoredRingResized(t *testing.T) {
	dir := t.TempDir()
	h, host := storedHarness(t, dir, EmitAll)
	for i := 0; i < 200; i++ {
		td := sdk(1, unit(1, nil), turn(nil))
		setTrace(td, nthTrace(i))
		h.deliver(td)
	}
	h.stop(host)

	host2 := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Storage = &host2.id
	cfg.DecidedCacheSize = 70
	h2 := newHarness(t, cfg)
	if err := h2.p.Start(context.Background(), host2); err != nil {
		t.Fatal(err)
	}
	defer h2.stop(host2)
	if n := h2.p.decided.Len(); n != 70 {
		t.Fatalf("%d decided IDs restored into a ring of 70", n)
	}
	for i := 0; i < 200; i++ {
		if want := i >= 130; h2.p.decided.has(nthTrace(i)) != want {
			t.Fatalf("trace %d restored %v, want %v (the newest 70 kept)", i, !want, want)
		}
	}
}

// TestCodecCoversEveryField: every field of the stored readings round-trips
// through the codec. A field added to a reading without its codec fails
// here: the test sets every field by reflection.
func TestCodecCoversEveryField(t *testing.T) {
	pt := &pendingTrace{traceID: traceID(7)}
	fill(reflect.ValueOf(pt).Elem(), 1)
	// Not stored: the store's bookkeeping, times and send state, which a
	// restore sets afresh.
	pt.created, pt.turnAt, pt.lastAt, pt.retryAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	pt.elem, pt.emitting, pt.refusals, pt.forcedAs, pt.storeKey, pt.encodedRs = nil, false, 0, "", 0, nil
	res := pcommon.NewResource()
	res.Attributes().PutStr(semconv.AppInstallationID, "install-7")
	res.Attributes().PutInt("int", 3)
	res.Attributes().PutEmptySlice("list").AppendEmpty().SetDouble(1.5)
	pt.turn.resource = res

	b := encodeTrace(nil, pt)
	got := &pendingTrace{traceID: pt.traceID}
	if err := decodeTrace(b, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.turn.resource.Attributes().AsRaw(), pt.turn.resource.Attributes().AsRaw()) {
		t.Errorf("resource %v, want %v", got.turn.resource.Attributes().AsRaw(), pt.turn.resource.Attributes().AsRaw())
	}
	got.turn.resource, pt.turn.resource = pcommon.Resource{}, pcommon.Resource{}
	got.encodedRs, pt.encodedRs = nil, nil
	if !reflect.DeepEqual(got, pt) {
		t.Errorf("round trip changed the trace:\n got  %+v\n want %+v\n turn got  %+v\n turn want %+v", got, pt, got.turn, pt.turn)
	}
	// Every prefix of a stored value is refused, never read as a trace.
	for n := 0; n < len(b); n++ {
		if err := decodeTrace(b[:n], &pendingTrace{}); err == nil {
			t.Fatalf("a stored value cut to %d of %d bytes was read", n, len(b))
		}
	}
	if err := decodeTrace(append([]byte{codecVersion + 1}, b[1:]...), &pendingTrace{}); err == nil {
		t.Fatal("a value of another codec version was read")
	}
}

// fill sets every field of v (recursively) to a value that is not its zero.
func fill(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(pcommon.Resource{}) || v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() {
				f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
			}
			fill(f, seed+i)
		}
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct && v.Type() != reflect.TypeOf(&pendingTrace{}) {
			if v.Type().Elem().Name() == "Element" {
				return
			}
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
	case reflect.Uint8:
		v.SetUint(uint64(seed%250 + 1))
	case reflect.Float64:
		v.SetFloat(float64(seed) + 0.25)
	}
}

// FuzzDecodeTrace: any stored bytes are read or refused, never a panic,
// and what is read encodes back to the same bytes.
func FuzzDecodeTrace(f *testing.F) {
	pt := &pendingTrace{turn: &turnReading{resource: pcommon.NewResource(), units: 3, index: 2, link: "wifi",
		live:         []liveSeries{{kind: "players", series: []int64{1, 2, 3}}},
		routeChanges: []routeChange{{at: 1.5, reason: "new_device_available"}}},
		unitSpans: []pcommon.SpanID{{1}, {2}}, units: []unitReading{{index: 1, takeID: "t1", underruns: 2, silent: 1.4, cushion: 1.5}},
		takes: []takeReading{{id: "t1", need: math.Pi}}}
	f.Add(encodeTrace(nil, pt))
	f.Add(encodeTrace(nil, &pendingTrace{takes: []takeReading{{id: "t9", problem: "take t9: pippa.take.need missing"}}}))
	f.Add([]byte{codecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := &pendingTrace{}
		if err := decodeTrace(b, got); err != nil {
			return
		}
		got.encodedRs = nil
		if again := encodeTrace(nil, got); len(again) == 0 {
			t.Fatal("a trace read back encodes to nothing")
		}
	})
}

// TestLabelBudget: the installations named on the counted events are
// bounded; the most recently seen keep their name, one idle long enough
// gives its place up, the rest count as other.
func TestLabelBudget(t *testing.T) {
	t0 := baseTime
	b := newLabelBudget(2, time.Hour)
	steps := []struct {
		id   string
		at   time.Duration
		want string
	}{
		{"a", 0, "a"},
		{"b", time.Minute, "b"},
		{"c", 2 * time.Minute, OtherInstallation}, // full, nobody idle
		{"a", 3 * time.Minute, "a"},               // a is seen again: b is now the oldest
		{"", 4 * time.Minute, NoInstallation},
		{"c", time.Minute + time.Hour, "c"}, // b idle an hour: c takes its place
		{"b", time.Minute + time.Hour, OtherInstallation},
		{"a", time.Minute + time.Hour, "a"},
	}
	for i, s := range steps {
		if got := b.label(s.id, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d: %q at +%s labelled %q, want %q", i, s.id, s.at, got, s.want)
		}
		if b.order.Len() > b.max || len(b.by) != b.order.Len() {
			t.Fatalf("step %d: %d named, %d indexed, budget %d", i, b.order.Len(), len(b.by), b.max)
		}
	}
	none := newLabelBudget(0, time.Hour)
	if got := none.label("a", t0); got != "" {
		t.Errorf("with no budget an installation is labelled %q, want none", got)
	}
}

// FuzzReadingsRoundTrip: whatever a span's attributes hold, the readings the
// processor keeps of it are stored and read back unchanged: the readers
// bound what the codec would refuse (long strings, many live counts, long
// arrays).
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
			a.PutInt(semconv.LivePrefix+kind+itoa(int64(i)), int64(i))
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

		pt := &pendingTrace{turn: readTurn(rs.Resource(), ts), unitSpans: []pcommon.SpanID{{1}}}
		pt.units = append(pt.units, readUnit(us))
		if r, ok := readTake(tk); ok {
			pt.takes = append(pt.takes, r)
		}
		b := encodeTrace(nil, pt)
		got := &pendingTrace{}
		if err := decodeTrace(b, got); err != nil {
			t.Fatalf("readings stored, then unreadable: %v", err)
		}
		if !bytes.Equal(encodeTrace(nil, got), b) {
			t.Fatal("readings read back differ from what was stored")
		}
	})
}

// TestCorruptRingIndexIsDiscarded: a stored index of the decided ring that
// cannot be right (a next slot past the size, a size no configuration
// could give) is discarded with a warning, never a panic or a runaway loop.
func TestCorruptRingIndexIsDiscarded(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size, next uint64
	}{
		{"next past the size", 1, 1<<64 - 1},
		{"a huge size", 1 << 40, 0},
		{"no size", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, createDefaultConfig().(*Config))
			e := encoder{}
			e.uint(tc.size)
			e.uint(tc.next)
			e.bool(true)
			h.p.restoreDecided(e.b, map[int][]byte{0: make([]byte, 16*decidedChunk)})
			if n := h.p.decided.Len(); n != 0 {
				t.Fatalf("%d decided IDs restored from a corrupt index", n)
			}
		})
	}
}

// TestRestoredSurplusDecidedOldestFirst: restored under a smaller
// max_pending, the oldest held turns are decided by the sweep (forced:
// pending_limit), oldest first, and the rest stay held.
func TestRestoredSurplusDecidedOldestFirst(t *testing.T) {
	dir := t.TempDir()
	h, host := storedHarness(t, dir, EmitVerdicts)
	for i := 0; i < 5; i++ {
		td := sdk(1, underrun(1, 1, 0.4, nil), turn(nil)) // waits for its take
		setTrace(td, nthTrace(i))
		h.deliver(td)
	}
	h.stop(host)

	host2 := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = EmitVerdicts
	cfg.Storage = &host2.id
	cfg.MaxPending = 2
	h2 := newHarness(t, cfg)
	if err := h2.p.Start(context.Background(), host2); err != nil {
		t.Fatal(err)
	}
	defer h2.stop(host2)
	h2.advance(h2.p.sweepInterval)
	v := h2.verdicts()
	if len(v) != 3 || h2.p.store.len() != 2 {
		t.Fatalf("%d verdicts, %d held after the first sweep; want 3 decided, 2 held", len(v), h2.p.store.len())
	}
	for i, s := range v {
		if s.TraceID() != nthTrace(i) {
			t.Errorf("verdict %d is trace %v, want the oldest first (%v)", i, s.TraceID(), nthTrace(i))
		}
	}
	if got := h2.counter("otelcol_processor_verdict_forced")[forcedPendingLimit]; got != 3 {
		t.Errorf("forced{pending_limit} = %d, want 3", got)
	}
}
