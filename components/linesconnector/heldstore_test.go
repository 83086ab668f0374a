package linesconnector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/components/linesconnector/internal/metadata"
	"github.com/percause/percause/components/sharedstorage"
	"github.com/percause/percause/instr/semconv"
)

// The held lines kept in shared_storage (its log engine, the default's):
// what a kill or a refused shutdown leaves is held again at the next start.

var heldStorageID = component.MustNewID("shared_storage")

// storageHost offers one storage extension to the connector.
type storageHost struct {
	component.Host
	ext component.Component
}

func (h *storageHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{heldStorageID: h.ext}
}

// openSharedStorage starts shared_storage (the log engine) on dir.
func openSharedStorage(t *testing.T, dir string) *storageHost { return openSharedStorageB(t, dir) }

func openSharedStorageB(t testing.TB, dir string) *storageHost {
	t.Helper()
	f := sharedstorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*sharedstorage.Config)
	cfg.Directory = dir
	set := extensiontest.NewNopSettings(f.Type())
	set.ID = heldStorageID // the same database in every process
	ext, err := f.Create(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return &storageHost{Host: componenttest.NewNopHost(), ext: ext}
}

// startStored starts a connector of the harness's kind keeping its held
// lines through host's storage.
func startStored(t *testing.T, host component.Host) *stateHarness {
	t.Helper()
	h := newHarness(t, func(c *Config) { c.Storage = &heldStorageID })
	h.c.id = component.NewID(metadata.Type) // the same connector in every process
	if err := h.c.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return h
}

// heldKeys counts the records the connector's storage client holds.
func heldKeys(t *testing.T, host *storageHost) int {
	t.Helper()
	n := 0
	cl, err := host.ext.(storage.Extension).GetClient(context.Background(), component.KindConnector, component.NewID(metadata.Type), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.(storage.Walker).Walk(context.Background(), func(string, []byte) ([]*storage.Operation, error) {
		n++
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHeldLinesOutliveTheProcess: a turn line held for its take is
// acknowledged; the process then ends without emitting it (killed, or its
// shutdown's emission refused). The next process holds it again, and the
// take sent after the restart joins it: one turn, with its take.
func TestHeldLinesOutliveTheProcess(t *testing.T) {
	for name, end := range map[string]func(t *testing.T, h *stateHarness){
		"a kill": func(*testing.T, *stateHarness) {},
		"a refused shutdown": func(t *testing.T, h *stateHarness) {
			h.c.next = consumertest.NewErr(errors.New("the verdict processor refuses"))
			if err := h.c.Shutdown(context.Background()); err == nil {
				t.Fatal("the shutdown's emission was not refused: no fault, no test")
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			host := openSharedStorage(t, dir)
			h := startStored(t, host)
			h.feed(turnA)
			if h.c.st.held != 1 {
				t.Fatalf("held %d lines, want the turn", h.c.st.held)
			}
			end(t, h)
			if err := host.ext.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}

			host = openSharedStorage(t, dir)
			defer func() { _ = host.ext.Shutdown(context.Background()) }()
			h = startStored(t, host)
			if h.c.st.held != 1 {
				t.Fatalf("after the restart: %d lines held, want the turn", h.c.st.held)
			}
			h.feed(takeA)
			if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != 1 {
				t.Fatalf("after the restart and the take: %v, want the turn with its take", got)
			}
			if err := h.c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := heldKeys(t, host); n != 0 {
				t.Fatalf("%d records of held lines stored after every line was emitted, want none", n)
			}
		})
	}
}

// TestEmittedLinesLeaveTheStore: once the lines a record holds are all
// emitted and accepted (a take completing its turn, the sweep), the record
// goes; nothing is held again at the next start.
func TestEmittedLinesLeaveTheStore(t *testing.T) {
	dir := t.TempDir()
	host := openSharedStorage(t, dir)
	h := startStored(t, host)
	h.feed(turnA, "[tts-take] take=t9 trace=0af7651916cd43dd8448eb211c80319c need=0.20")
	if n := heldKeys(t, host); n != 1 {
		t.Fatalf("%d records after a delivery that left two lines held, want 1", n)
	}
	h.feed(takeA)
	if n := heldKeys(t, host); n != 1 {
		t.Fatalf("%d records while the traced take waits, want 1", n)
	}
	h.advance(DefaultWait + time.Second) // the take goes alone into its trace
	if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != 2 {
		t.Fatalf("spans %v, want the turn and both takes", got)
	}
	if n := heldKeys(t, host); n != 0 {
		t.Fatalf("%d records after every line was emitted, want none", n)
	}
	_ = host.ext.Shutdown(context.Background())
	host = openSharedStorage(t, dir)
	defer func() { _ = host.ext.Shutdown(context.Background()) }()
	if h = startStored(t, host); h.c.st.held != 0 {
		t.Fatalf("the next start holds %d lines, want none", h.c.st.held)
	}
}

// failingStorage is shared_storage whose connector client's batches fail
// while fail is set.
type failingStorage struct {
	component.Component
	inner storage.Extension
	fail  *atomic.Bool
}

func (f *failingStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := f.inner.GetClient(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	return &failingClient{Client: c, walker: c.(storage.Walker), fail: f.fail}, nil
}

type failingClient struct {
	storage.Client
	walker storage.Walker
	fail   *atomic.Bool
}

func (c *failingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if c.fail.Load() {
		return errors.New("no space left on device")
	}
	return c.Client.Batch(ctx, ops...)
}

func (c *failingClient) Walk(ctx context.Context, fn storage.WalkFunc) error {
	return c.walker.Walk(ctx, fn)
}

// TestAFailedWriteIsNoAcknowledgement: a delivery whose held lines could
// not be stored is answered with the error, so its sender sends it again;
// the same lines sent again once the storage works are stored (they were
// duplicates of those held in memory) and answered, and a kill then loses
// nothing.
func TestAFailedWriteIsNoAcknowledgement(t *testing.T) {
	dir := t.TempDir()
	inner := openSharedStorage(t, dir)
	var fail atomic.Bool
	host := &storageHost{Host: componenttest.NewNopHost(), ext: &failingStorage{Component: inner.ext, inner: inner.ext.(storage.Extension), fail: &fail}}
	h := startStored(t, host)
	fail.Store(true)
	if err := h.c.ConsumeLogs(context.Background(), logs(turnA)); err == nil {
		t.Fatal("the delivery was answered though its held turn was not stored")
	}
	fail.Store(false)
	if err := h.c.ConsumeLogs(context.Background(), logs(turnA)); err != nil {
		t.Fatalf("the delivery sent again: %v", err)
	}
	_ = inner.ext.Shutdown(context.Background()) // killed: no Shutdown of the connector

	host = openSharedStorage(t, dir)
	defer func() { _ = host.ext.Shutdown(context.Background()) }()
	h = startStored(t, host)
	h.advance(DefaultWait + time.Second)
	if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 {
		t.Fatalf("after the kill: %v, want the turn", got)
	}
}

// TestARestoredTurnKeepsItsLaunch: a turn line that names no launch gets
// one from the lines before it; held across a restart, it is emitted under
// the same launch, and the next turn of its source finds it.
func TestARestoredTurnKeepsItsLaunch(t *testing.T) {
	dir := t.TempDir()
	host := openSharedStorage(t, dir)
	h := startStored(t, host)
	h.feed("2026-11-30T08:00:00Z [voice-turn] turn=1 link=wifi units=1 gaps=0.10 app_uptime=30.00 broke=-",
		"2026-11-30T08:00:30Z [voice-turn] turn=2 link=wifi units=2 gaps=0.10,0.10 app_uptime=60.00 broke=2:1/0.50/1.50@t9")
	first := launchesOf(t, h.sink)["wifi"]
	if len(first) != 1 {
		t.Fatalf("launches emitted before the restart: %v, want the first turn's", first)
	}
	_ = host.ext.Shutdown(context.Background())

	host = openSharedStorage(t, dir)
	defer func() { _ = host.ext.Shutdown(context.Background()) }()
	h = startStored(t, host)
	h.feed("2026-11-30T08:01:00Z [voice-turn] turn=3 link=wifi units=1 gaps=0.10 app_uptime=90.00 broke=-")
	h.advance(DefaultWait + time.Second)
	got := launchesOf(t, h.sink)["wifi"]
	if len(got) != 1 || !maps.Equal(got, first) {
		t.Fatalf("turns 2 (held across the restart) and 3 went under launches %v, want %v", got, first)
	}
	if n := h.spans()[semconv.SpanVoiceTurn]; n != 2 {
		t.Fatalf("%d turns after the restart, want 2", n)
	}
}

// FuzzDecodeHeld: a stored record reads whole or is an error, never a
// panic; what encodeHeld writes reads back as the same lines.
func FuzzDecodeHeld(f *testing.F) {
	res := pcommon.NewResource()
	res.Attributes().PutStr(semconv.ServiceName, "pippa-phone")
	l := &line{text: turnA, resource: res, file: "phone.log", number: 7, at: time.Unix(1764489600, 0), timed: true,
		arrived: time.Unix(1764489601, 0), trace: traceIDOf(trA), launch: "b1", launchAssumed: "assumed"}
	good, err := encodeHeld([]*line{l, {text: takeA, resource: res, at: l.at, arrived: l.arrived}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"v":1,"resources":[],"lines":[{"text":"x","resource":3}]}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ls, err := decodeHeld(b)
		if err != nil {
			return
		}
		again, err := encodeHeld(ls)
		if err != nil {
			t.Fatalf("a record that read does not write again: %v", err)
		}
		back, err := decodeHeld(again)
		if err != nil || len(back) != len(ls) {
			t.Fatalf("written again, it reads as %d lines (%v), want %d", len(back), err, len(ls))
		}
		for i := range ls {
			if back[i].text != ls[i].text || back[i].trace != ls[i].trace || !back[i].at.Equal(ls[i].at) || back[i].launch != ls[i].launch {
				t.Fatalf("line %d read back differs", i)
			}
		}
	})
}

var _ extension.Extension = (*failingStorage)(nil)

// BenchmarkHeldLinesStored: the dearest case for the store, phone and
// engine lines in deliveries of their own: each turn line is held for its
// take (a record written before the answer), then the take completes it
// (the turn emitted, the record's delete staged into the next commit), on
// shared_storage's log engine (fsync off, the default) against the same
// deliveries in memory only.
func BenchmarkHeldLinesStored(b *testing.B) {
	const turns = 200
	type pair struct{ turn, take plog.Logs }
	var pairs []pair
	for i := range turns {
		trace := fmt.Sprintf("%032x", i+1)
		pairs = append(pairs, pair{
			logs("[voice-turn] turn=1 trace=" + trace + " link=wifi units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2"),
			logs("[tts-take] take=t2 trace=" + trace + " need=0.20"),
		})
	}
	for _, stored := range []bool{false, true} {
		name := "memory"
		if stored {
			name = "shared_storage"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			delivered := 0
			for b.Loop() {
				b.StopTimer()
				cfg := createDefaultConfig().(*Config)
				var host component.Host = componenttest.NewNopHost()
				var ext component.Component
				if stored {
					cfg.Storage = &heldStorageID
					sh := openSharedStorageB(b, b.TempDir())
					host, ext = sh, sh.ext
				}
				c, err := newConnector(connectortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop(), withClock(time.Now))
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Start(ctx, host); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for _, p := range pairs {
					if err := c.ConsumeLogs(ctx, p.turn); err != nil {
						b.Fatal(err)
					}
					if err := c.ConsumeLogs(ctx, p.take); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = c.Shutdown(ctx)
				if ext != nil {
					_ = ext.Shutdown(ctx)
				}
				b.StartTimer()
				delivered += turns
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(delivered), "ns/turn")
		})
	}
}
