package sharedstorage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
)

var (
	verdictID = component.MustNewID("verdict")
	countID   = component.MustNewID("verdictcount")
	pageID    = component.MustNewID("verdicts")
)

// harness is one shared_storage on a directory, started, with its own
// telemetry.
type harness struct {
	t   testing.TB
	dir string
	tel *componenttest.Telemetry
	ext *sharedStorage
}

func start(t testing.TB, dir string, mut ...func(*Config)) *harness {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = dir
	if engineUnderTest != "" {
		cfg.Engine = engineUnderTest
	}
	for _, m := range mut {
		m(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: dir, tel: componenttest.NewTelemetry()}
	set := extensiontest.NewNopSettings(metadata.Type)
	set.ID = component.NewID(metadata.Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	ext, err := NewFactory().Create(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.ext = ext.(*sharedStorage)
	if err := h.ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.ext.Shutdown(context.Background()) })
	return h
}

func (h *harness) client(kind component.Kind, id component.ID, name string) Client {
	h.t.Helper()
	c, err := h.ext.GetClient(context.Background(), kind, id, name)
	if err != nil {
		h.t.Fatal(err)
	}
	sc, ok := c.(Client)
	if !ok {
		h.t.Fatalf("GetClient returned a %T, not a sharedstorage.Client", c)
	}
	return sc
}

func (h *harness) stop() {
	h.t.Helper()
	if err := h.ext.Shutdown(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// count is the counter's value for one trigger ("" all of them).
func (h *harness) count(name, trigger string) int64 {
	h.t.Helper()
	m, err := h.tel.GetMetric(name)
	if err != nil {
		return 0 // nothing recorded yet
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, _ := dp.Attributes.Value(attribute.Key(metadata.AttributeTrigger)); trigger == "" || v.AsString() == trigger {
			n += dp.Value
		}
	}
	return n
}

func (h *harness) commits() int64 { return h.count("otelcol_extension_shared_storage_commits", "") }

// databaseFile is the shared database of an unnamed shared_storage.
func databaseFile(dir string) string { return filepath.Join(dir, "extension_shared_storage_") }

// transactionID reads the ID of the last write transaction bbolt
// committed to the file: it grows by one with every committed write
// transaction, and by none with a failed one.
func transactionID(t testing.TB, path string) int {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int
	if err := db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// baseline makes the shared database in dir and reads its transaction
// ID.
func baseline(t *testing.T, dir string) int {
	t.Helper()
	start(t, dir, func(c *Config) { c.Engine = EngineBbolt }).stop()
	return transactionID(t, databaseFile(dir))
}

// contents is everything a client walks, key = value.
func contents(t *testing.T, c Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := c.Walk(context.Background(), func(key string, value []byte) ([]*storage.Operation, error) {
		out[key] = string(value)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestNamespacesKeptApart: clients of different kinds, components and
// storage names set the same key; each reads and walks its own, and a
// name that file_storage would escape cannot reach into another's.
func TestNamespacesKeptApart(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := context.Background()
	clients := map[string]Client{
		"processor verdict":          h.client(component.KindProcessor, verdictID, ""),
		"processor verdict/b":        h.client(component.KindProcessor, component.MustNewIDWithName("verdict", "b"), ""),
		"processor verdict, named b": h.client(component.KindProcessor, verdictID, "b"),
		"connector verdictcount":     h.client(component.KindConnector, countID, ""),
		"exporter verdicts page":     h.client(component.KindExporter, pageID, "page"),
		"exporter verdicts page/x":   h.client(component.KindExporter, pageID, "page/x"),
		"exporter verdicts page~":    h.client(component.KindExporter, pageID, "page~002Fx"),
	}
	for name, c := range clients {
		if err := c.Set(ctx, "k", []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range clients {
		v, err := c.Get(ctx, "k")
		if err != nil || string(v) != name {
			t.Errorf("%s reads %q (%v), want its own value", name, v, err)
		}
		if got := contents(t, c); !equal(got, map[string]string{"k": name}) {
			t.Errorf("%s walks %v, want only its own key", name, got)
		}
	}
	if err := clients["processor verdict"].Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if v, _ := clients["processor verdict/b"].Get(ctx, "k"); string(v) != "processor verdict/b" {
		t.Errorf("a delete in one namespace reached another: %q", v)
	}
}

// TestBatchCarriesStagedInOneTransaction: what one client staged and what
// another batches are committed by one bbolt transaction, counted as one
// by the extension's telemetry and as one by bbolt's own transaction ID;
// the staged callback has run when Batch returns.
func TestBatchCarriesStagedInOneTransaction(t *testing.T) {
	dir := t.TempDir()
	before := baseline(t, dir)

	h := start(t, dir, func(c *Config) { c.StageFlush, c.Engine = time.Hour, EngineBbolt }) // no timer commit in this test
	proc := h.client(component.KindProcessor, verdictID, "")
	count := h.client(component.KindConnector, countID, "")
	opened := h.commits()

	var calls atomic.Int32
	var got error = errors.New("not called")
	count.Stage([]*storage.Operation{storage.SetOperation("id1", []byte("counted"))}, func(err error) {
		calls.Add(1)
		got = err
	})
	if calls.Load() != 0 {
		t.Fatal("the callback ran before any commit")
	}
	if err := proc.Batch(context.Background(), storage.SetOperation("turn1", []byte("held")), storage.SetOperation("turn2", []byte("held"))); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || got != nil {
		t.Fatalf("after the batch the staged callback ran %d times with %v, want once with nil", calls.Load(), got)
	}
	if n := h.commits() - opened; n != 1 {
		t.Fatalf("the batch and the staged operation took %d transactions, want 1", n)
	}
	if n := h.count("otelcol_extension_shared_storage_staged", metadata.TriggerBatch); n != 1 {
		t.Errorf("staged operations carried by a batch: %d, want 1", n)
	}
	total := h.commits()
	h.stop()
	// bbolt agrees: every transaction the extension counted, and the one
	// file_storage makes at open (its bucket), and no other.
	if n := transactionID(t, databaseFile(dir)) - before; int64(n) != total+1 {
		t.Fatalf("bbolt committed %d write transactions, the extension counted %d (+1 at open)", n, total)
	}

	again := start(t, dir, func(c *Config) { c.Engine = EngineBbolt })
	if v, _ := again.client(component.KindConnector, countID, "").Get(context.Background(), "id1"); string(v) != "counted" {
		t.Errorf("the staged value after a restart: %q", v)
	}
}

// TestFailedCommitFailsStagedToo: a batch bbolt refuses (a key over its
// limit) takes the staged operations down with it: the batch returns the
// error, the callback gets the same error, and neither client's
// operations are stored; bbolt commits nothing.
func TestFailedCommitFailsStagedToo(t *testing.T) {
	dir := t.TempDir()
	before := baseline(t, dir)
	h := start(t, dir, func(c *Config) { c.StageFlush, c.Engine = time.Hour, EngineBbolt })
	ctx := context.Background()
	proc := h.client(component.KindProcessor, verdictID, "")
	count := h.client(component.KindConnector, countID, "")

	got := make(chan error, 1)
	count.Stage([]*storage.Operation{storage.SetOperation("id2", []byte("counted"))}, func(err error) { got <- err })
	tooLong := strings.Repeat("k", bbolt.MaxKeySize+1)
	err := proc.Batch(ctx, storage.SetOperation("turn3", []byte("held")), storage.SetOperation(tooLong, []byte("x")))
	if err == nil {
		t.Fatal("a key longer than bbolt takes was stored")
	}
	select {
	case cbErr := <-got:
		if cbErr != err {
			t.Fatalf("the staged callback got %v, the batch %v: want the same error", cbErr, err)
		}
	default:
		t.Fatal("the batch failed and returned before the staged callback ran")
	}
	if n := h.count("otelcol_extension_shared_storage_commit_errors", metadata.TriggerBatch); n != 1 {
		t.Errorf("failed transactions counted: %d, want 1", n)
	}
	for _, c := range []struct {
		cl  Client
		key string
	}{{proc, "turn3"}, {count, "id2"}} {
		if v, err := c.cl.Get(ctx, c.key); err != nil || v != nil {
			t.Errorf("%s after the failed transaction: %q, %v; want nothing", c.key, v, err)
		}
	}
	// The staged operation went with its transaction: it is not staged
	// again behind the caller's back.
	if h.ext.db.hasStaged() {
		t.Error("the failed operations are still staged")
	}
	commits := h.commits()
	failed := h.count("otelcol_extension_shared_storage_commit_errors", "")
	h.stop()
	// bbolt's count: the counted transactions but the failed one, +1 at open.
	if n := transactionID(t, databaseFile(dir)) - before; int64(n) != commits-failed+1 {
		t.Errorf("bbolt committed %d write transactions, want %d counted - %d failed + 1 at open", n, commits, failed)
	}
}

// TestStagedFlushedWhenNobodyBatches: staged operations that no batch
// carries are committed by the extension within stage_flush.
func TestStagedFlushedWhenNobodyBatches(t *testing.T) {
	h := start(t, t.TempDir(), func(c *Config) { c.StageFlush = 5 * time.Millisecond })
	count := h.client(component.KindConnector, countID, "")
	got := make(chan error, 2)
	count.Stage([]*storage.Operation{storage.SetOperation("a", []byte("1"))}, func(err error) { got <- err })
	count.Stage([]*storage.Operation{storage.SetOperation("b", []byte("2")), storage.DeleteOperation("a")}, func(err error) { got <- err })
	for range 2 {
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("staged operations were not committed without a batch")
		}
	}
	if n := h.count("otelcol_extension_shared_storage_commits", metadata.TriggerStageFlush); n < 1 {
		t.Errorf("the timer's commits: %d", n)
	}
	if n := h.count("otelcol_extension_shared_storage_staged", metadata.TriggerStageFlush); n != 3 {
		t.Errorf("staged operations the timer committed: %d, want 3", n)
	}
	if got := contents(t, count); !equal(got, map[string]string{"b": "2"}) {
		t.Errorf("after the timer's commit: %v, want b=2 (a set, then deleted)", got)
	}
	// The timer set again for the next stage.
	count.Stage([]*storage.Operation{storage.SetOperation("c", []byte("3"))}, func(err error) { got <- err })
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("a second stage was not committed")
	}
}

// TestReadsSeeWhatWasStagedBefore: a Get or a Walk commits what is
// staged ahead of it, so it sees it; nothing it reads is uncommitted.
func TestReadsSeeWhatWasStagedBefore(t *testing.T) {
	h := start(t, t.TempDir(), func(c *Config) { c.StageFlush = time.Hour })
	ctx := context.Background()
	count := h.client(component.KindConnector, countID, "")
	proc := h.client(component.KindProcessor, verdictID, "")
	var calls atomic.Int32
	count.Stage([]*storage.Operation{storage.SetOperation("x", []byte("1"))}, func(error) { calls.Add(1) })
	if v, err := count.Get(ctx, "x"); err != nil || string(v) != "1" {
		t.Fatalf("Get after Stage: %q, %v", v, err)
	}
	count.Stage([]*storage.Operation{storage.SetOperation("y", []byte("2"))}, func(error) { calls.Add(1) })
	if got := contents(t, count); !equal(got, map[string]string{"x": "1", "y": "2"}) {
		t.Fatalf("Walk after Stage: %v", got)
	}
	// Another client's read commits it too.
	count.Stage([]*storage.Operation{storage.DeleteOperation("x")}, func(error) { calls.Add(1) })
	if _, err := proc.Get(ctx, "anything"); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 {
		t.Fatalf("callbacks: %d, want 3", calls.Load())
	}
	if got := contents(t, count); !equal(got, map[string]string{"y": "2"}) {
		t.Fatalf("after the other client's read: %v", got)
	}
}

// TestWalkPerNamespace: a walk sees its client's keys only, without the
// prefix and in order, and the operations it returns apply to that
// client's keys; a Get it returns is answered.
func TestWalkPerNamespace(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := context.Background()
	// Namespaces on both sides of the walked one.
	conn := h.client(component.KindConnector, countID, "")
	proc := h.client(component.KindProcessor, verdictID, "")
	page := h.client(component.KindExporter, pageID, "page")
	recv := h.client(component.KindReceiver, verdictID, "")
	for _, c := range []Client{conn, proc, page, recv} {
		if err := c.Batch(ctx, storage.SetOperation("k1", []byte("v1")), storage.SetOperation("k2", []byte("v2")), storage.SetOperation("k3", []byte("v3"))); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	get := storage.GetOperation("k3")
	err := page.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		seen = append(seen, key+"="+string(value))
		switch key {
		case "k1":
			return []*storage.Operation{storage.DeleteOperation("k1"), storage.SetOperation("k9", []byte("v9"))}, nil
		case "k2":
			return []*storage.Operation{get}, nil
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"k1=v1", "k2=v2", "k3=v3"}; !slices.Equal(seen, want) {
		t.Fatalf("the walk saw %v, want %v", seen, want)
	}
	if string(get.Value) != "v3" {
		t.Errorf("a Get the walk returned: %q, want v3", get.Value)
	}
	if got := contents(t, page); !equal(got, map[string]string{"k2": "v2", "k3": "v3", "k9": "v9"}) {
		t.Errorf("the walked client after its operations: %v", got)
	}
	for _, c := range []Client{conn, proc, recv} {
		if got := contents(t, c); !equal(got, map[string]string{"k1": "v1", "k2": "v2", "k3": "v3"}) {
			t.Errorf("another client after the walk: %v", got)
		}
	}
	// SkipAll stops the walk and still applies what was returned.
	n := 0
	err = proc.Walk(ctx, func(key string, _ []byte) ([]*storage.Operation, error) {
		n++
		return []*storage.Operation{storage.DeleteOperation(key)}, storage.SkipAll
	})
	if err != nil || n != 1 {
		t.Fatalf("SkipAll: %v after %d keys", err, n)
	}
	if got := contents(t, proc); !equal(got, map[string]string{"k2": "v2", "k3": "v3"}) {
		t.Errorf("after SkipAll: %v", got)
	}
	// An error stops it and applies nothing.
	boom := errors.New("boom")
	if err := proc.Walk(ctx, func(key string, _ []byte) ([]*storage.Operation, error) {
		return []*storage.Operation{storage.DeleteOperation(key)}, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("the walk's error: %v", err)
	}
	if got := contents(t, proc); len(got) != 2 {
		t.Errorf("a failed walk applied its operations: %v", got)
	}
}

// TestRestartKeepsEverything: what every client batched and staged is
// there after a restart; what was staged when the extension stopped is
// committed by its shutdown, and the callback says so.
func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := start(t, dir, func(c *Config) { c.StageFlush = time.Hour })
	proc := h.client(component.KindProcessor, verdictID, "")
	count := h.client(component.KindConnector, countID, "")
	if err := proc.Batch(ctx, storage.SetOperation("turn", []byte("held"))); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	count.Stage([]*storage.Operation{storage.SetOperation("id", []byte("counted"))}, func(err error) { got <- err })
	if err := proc.Close(ctx); err != nil { // a client's close commits what is staged, its own or not
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("Close returned before what was staged was committed")
	}
	count.Stage([]*storage.Operation{storage.SetOperation("id2", []byte("counted"))}, func(err error) { got <- err })
	h.stop()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("shutdown returned before what was staged was committed")
	}
	// Closed: refused, and said so once.
	if err := proc.Set(ctx, "late", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Set on a closed client: %v", err)
	}
	if err := count.Set(ctx, "late", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after shutdown: %v", err)
	}
	count.Stage([]*storage.Operation{storage.SetOperation("late", nil)}, func(err error) { got <- err })
	if err := <-got; !errors.Is(err, ErrClosed) {
		t.Errorf("Stage after shutdown: %v", err)
	}

	again := start(t, dir)
	if got := contents(t, again.client(component.KindProcessor, verdictID, "")); !equal(got, map[string]string{"turn": "held"}) {
		t.Errorf("the processor's keys after a restart: %v", got)
	}
	if got := contents(t, again.client(component.KindConnector, countID, "")); !equal(got, map[string]string{"id": "counted", "id2": "counted"}) {
		t.Errorf("the connector's keys after a restart: %v", got)
	}
}

// TestConcurrentClients: clients batching, staging, reading and walking
// at once (run with -race): every callback is called exactly once, every
// staged and batched key is stored, each in its own namespace.
func TestConcurrentClients(t *testing.T) {
	dir := t.TempDir()
	h := start(t, dir, func(c *Config) { c.StageFlush = time.Millisecond })
	ctx := context.Background()
	const workers, rounds = 4, 200
	clients := make([]Client, workers)
	for i := range clients {
		clients[i] = h.client(component.KindProcessor, component.MustNewIDWithName("verdict", fmt.Sprint(i)), "")
	}
	calls := make([][]atomic.Int32, workers)
	var wg sync.WaitGroup
	var errs atomic.Int32
	for w := range workers {
		calls[w] = make([]atomic.Int32, rounds)
		c := clients[w]
		wg.Go(func() {
			for r := range rounds {
				c.Stage([]*storage.Operation{storage.SetOperation(fmt.Sprintf("s%03d", r), []byte{byte(w)})}, func(err error) {
					if err != nil {
						errs.Add(1)
					}
					calls[w][r].Add(1)
				})
				switch r % 4 {
				case 0:
					if err := c.Batch(ctx, storage.SetOperation(fmt.Sprintf("b%03d", r), []byte{byte(w)})); err != nil {
						errs.Add(1)
					}
				case 1:
					if _, err := c.Get(ctx, fmt.Sprintf("s%03d", r-1)); err != nil {
						errs.Add(1)
					}
				case 2:
					if err := c.Walk(ctx, func(string, []byte) ([]*storage.Operation, error) { return nil, nil }); err != nil {
						errs.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	h.stop() // commits whatever is still staged
	if errs.Load() != 0 {
		t.Fatalf("%d operations failed", errs.Load())
	}
	for w := range workers {
		for r := range rounds {
			if n := calls[w][r].Load(); n != 1 {
				t.Fatalf("client %d, stage %d: the callback ran %d times", w, r, n)
			}
		}
	}
	again := start(t, dir)
	for w := range workers {
		got := contents(t, again.client(component.KindProcessor, component.MustNewIDWithName("verdict", fmt.Sprint(w)), ""))
		if len(got) != rounds+rounds/4 {
			t.Errorf("client %d holds %d keys, want %d", w, len(got), rounds+rounds/4)
		}
		for k, v := range got {
			if !bytes.Equal([]byte(v), []byte{byte(w)}) {
				t.Errorf("client %d's %s holds %q", w, k, v)
			}
		}
	}
}
