package verdictcountconnector

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/components/verdictcountconnector/internal/metadata"
	"github.com/percause/percause/internal/testsupport/storagetest"
)

// storageHost is a host with one storage extension.
type storageHost = storagetest.Host

func fileStorageHost(t *testing.T, dir string) *storageHost {
	h := storagetest.FileStorage(t, dir)
	t.Cleanup(func() { _ = h.Ext.Shutdown(context.Background()) })
	return h
}

func startedCounter(t *testing.T, host component.Host, storageID *component.ID, sink *consumertest.MetricsSink) *counter {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Storage = storageID
	set := connectortest.NewNopSettings(metadata.Type)
	set.ID = component.NewID(metadata.Type) // the same connector across a restart
	c, err := createTracesToMetrics(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return c.(*counter)
}

func turnsCounted(mds []pmetric.Metrics) int64 {
	var n int64
	for _, md := range mds {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); m.Name() == MetricTurns {
						for d := 0; d < m.Sum().DataPoints().Len(); d++ {
							n += m.Sum().DataPoints().At(d).IntValue()
						}
					}
				}
			}
		}
	}
	return n
}

// TestCountedVerdictsSurviveARestart: with storage, the verdicts a run
// counted are read back by the next, so a verdict decided again after a
// restart (the processor's record of it lost with the crash) is not
// counted again.
func TestCountedVerdictsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	host := fileStorageHost(t, dir)
	sink := new(consumertest.MetricsSink)
	c := startedCounter(t, host, &host.ID, sink)
	batches := verdictBatches(t)
	// The golden batches share verdict span IDs between cases: the unique
	// ones are what counts.
	seen := map[[8]byte]bool{}
	for _, td := range batches {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
				spans := rss.At(i).ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					seen[spans.At(k).SpanID()] = true
				}
			}
		}
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	want := int64(len(seen))
	c.committed.flush()
	if got := turnsCounted(sink.AllMetrics()); got != want {
		t.Fatalf("first run counted %d turns, want %d", got, want)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	sink2 := new(consumertest.MetricsSink)
	c2 := startedCounter(t, host, &host.ID, sink2)
	defer func() { _ = c2.Shutdown(context.Background()) }()
	for _, td := range batches {
		if err := c2.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	c2.committed.flush()
	if got := turnsCounted(sink2.AllMetrics()); got != 0 {
		t.Fatalf("after the restart the same verdicts counted %d turns again, want 0", got)
	}
}

// failingStorage is a storage extension whose clients' commits fail while
// fail is set.
type failingStorage struct {
	component.StartFunc
	component.ShutdownFunc
	inner storage.Extension
	fail  *bool
}

func (f *failingStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := f.inner.GetClient(ctx, kind, id, name)
	return &failingClient{Client: c, fail: f.fail}, err
}

type failingClient struct {
	storage.Client
	fail *bool
}

func (c *failingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if *c.fail {
		return errors.New("no space left on device")
	}
	return c.Client.Batch(ctx, ops...)
}

func (c *failingClient) Walk(ctx context.Context, fn storage.WalkFunc) error {
	return c.Client.(storage.Walker).Walk(ctx, fn)
}

// TestCountsGoOnOnlyOnceStored: a delivery whose counted IDs cannot be
// stored is refused and counts nothing; the retry, once storage works,
// counts it once.
func TestCountsGoOnOnlyOnceStored(t *testing.T) {
	inner := fileStorageHost(t, t.TempDir())
	fail := true
	id := component.MustNewID("failing")
	host := &storageHost{Host: componenttest.NewNopHost(), ID: id, Ext: &failingStorage{inner: inner.Ext.(storage.Extension), fail: &fail}}
	sink := new(consumertest.MetricsSink)
	c := startedCounter(t, host, &id, sink)
	defer func() { _ = c.Shutdown(context.Background()) }()
	td := verdictBatches(t)[0]
	if err := c.ConsumeTraces(context.Background(), td); err == nil {
		t.Fatal("a delivery whose counted IDs could not be stored was accepted")
	}
	c.committed.flush()
	if got := turnsCounted(sink.AllMetrics()); got != 0 {
		t.Fatalf("%d turns counted though their IDs were not stored", got)
	}
	fail = false
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	c.committed.flush()
	if got, want := turnsCounted(sink.AllMetrics()), int64(td.SpanCount()); got != want {
		t.Fatalf("after storage came back %d turns counted, want %d (once)", got, want)
	}
}

// stagingClient is a client that stages, as shared_storage's clients do:
// the operations wait for a commit the test makes.
type stagingClient struct {
	storage.Client
	staged []func(error)
}

func (s *stagingClient) Stage(_ []*storage.Operation, committed func(error)) {
	s.staged = append(s.staged, committed)
}

func (s *stagingClient) Close(context.Context) error { return nil }

func (s *stagingClient) commit(err error) {
	for _, f := range s.staged {
		f(err)
	}
	s.staged = nil
}

// TestStagedCountsWaitForTheCommit: with a storage that shares its commit,
// the delivery is accepted at once, and its counts go on only once the
// shared commit is done; a failed commit makes none.
func TestStagedCountsWaitForTheCommit(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c, sc := stagedCounter(t, createDefaultConfig().(*Config), sink)
	td := verdictBatches(t)[0]
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if got := turnsCounted(sink.AllMetrics()); got != 0 {
		t.Fatalf("%d turns counted before the commit", got)
	}
	sc.commit(errors.New("disk full"))
	c.committed.flush()
	if got := turnsCounted(sink.AllMetrics()); got != 0 {
		t.Fatalf("%d turns counted after a failed commit", got)
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	sc.commit(nil)
	c.committed.flush()
	if got, want := turnsCounted(sink.AllMetrics()), int64(td.SpanCount()); got != want {
		t.Fatalf("%d turns counted after the commit, want %d", got, want)
	}
}

// stagedCounter is a connector whose storage shares its commit, as
// shared_storage's clients do, with the configuration cfg.
func stagedCounter(t *testing.T, cfg *Config, next consumer.Metrics) (*counter, *stagingClient) {
	t.Helper()
	cc, err := createTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	c := cc.(*counter)
	sc := &stagingClient{}
	c.store = &countedStore{client: sc, stage: sc, recent: cfg.Recent, nextSeq: 1}
	return c, sc
}

// heldCounter is a stagedCounter whose stored counts wait until the test
// flushes them (an interval of an hour), handed on to the sink it returns;
// edit, when given, changes the rest of the configuration.
func heldCounter(t *testing.T, edit func(*Config)) (*counter, *stagingClient, *consumertest.MetricsSink) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.FlushInterval = time.Hour // the test says when
	if edit != nil {
		edit(cfg)
	}
	sink := new(consumertest.MetricsSink)
	c, sc := stagedCounter(t, cfg, sink)
	return c, sc, sink
}

// TestStoredCountsGoOnTogether: the counts of verdicts stored by several
// commits wait, and go on in one delivery, summed by series: every
// delivery pays the counters' pipeline's whole way, so a commit of one or
// two verdicts handed on alone cost more than deciding them. Shutdown
// hands on what waits, and what is stored after it goes on at once.
func TestStoredCountsGoOnTogether(t *testing.T) {
	c, sc, sink := heldCounter(t, nil)
	batches := verdictBatches(t)
	want := countAndCommit(t, c, sc, batches)
	if want < 2 {
		t.Fatalf("%d verdicts counted: nothing could go on together, so this test proves nothing", want)
	}
	if n := len(sink.AllMetrics()); n != 0 {
		t.Fatalf("%d deliveries before the interval ended, want 0: the counts of each commit went on alone", n)
	}
	c.committed.flush()
	if n := len(sink.AllMetrics()); n != 1 {
		t.Fatalf("%d deliveries for %d commits, want 1", n, len(batches))
	}
	if got := turnsCounted(sink.AllMetrics()); got != want {
		t.Fatalf("%d turns in the delivery, want %d", got, want)
	}
	oneSeriesEach(t, sink.AllMetrics())

	// With a short interval the counts go on by themselves.
	cfg2 := createDefaultConfig().(*Config)
	cfg2.FlushInterval = 10 * time.Millisecond
	sink2 := new(consumertest.MetricsSink)
	c2, sc2 := stagedCounter(t, cfg2, sink2)
	if err := c2.ConsumeTraces(context.Background(), batches[0]); err != nil {
		t.Fatal(err)
	}
	sc2.commit(nil)
	deadline := time.Now().Add(10 * time.Second)
	for turnsCounted(sink2.AllMetrics()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := turnsCounted(sink2.AllMetrics()); got != int64(batches[0].SpanCount()) {
		t.Fatalf("%d turns handed on after the interval, want %d", got, batches[0].SpanCount())
	}

	// Shutdown hands on what waits; a commit after it goes on at once.
	c3, sc3, sink3 := heldCounter(t, nil)
	if err := c3.ConsumeTraces(context.Background(), batches[0]); err != nil {
		t.Fatal(err)
	}
	sc3.commit(nil)
	if err := c3.ConsumeTraces(context.Background(), batches[1]); err != nil {
		t.Fatal(err)
	}
	if err := c3.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := turnsCounted(sink3.AllMetrics()); got != int64(batches[0].SpanCount()) {
		t.Fatalf("%d turns handed on at shutdown, want %d", got, batches[0].SpanCount())
	}
	sc3.commit(nil) // a commit after the shutdown: closing a client commits what it staged
	if got, want := turnsCounted(sink3.AllMetrics()), c3.recent.Len(); got != int64(want) {
		t.Fatalf("%d turns handed on after a commit past shutdown, want %d", got, want)
	}
}

// countAndCommit delivers batches to c, committing what each staged, and
// returns how many verdicts it counted.
func countAndCommit(t *testing.T, c *counter, sc *stagingClient, batches []ptrace.Traces) int64 {
	t.Helper()
	var n int64
	for _, td := range batches {
		before := c.recent.Len()
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		sc.commit(nil)
		n += int64(c.recent.Len() - before)
	}
	return n
}

// oneSeriesEach fails when deliveries (one, here) carry a series twice: that would
// be the Prometheus exporter's to add, and it keeps only the last.
func oneSeriesEach(t *testing.T, deliveries []pmetric.Metrics) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range points(deliveries) {
		m := strings.Index(p, " percause.") // the resource's map, then the metric and its [attributes]
		series := p[:m+strings.Index(p[m:], "]")+1]
		if seen[series] {
			t.Fatalf("series %s twice in one delivery", series)
		}
		seen[series] = true
	}
}

// TestEachIntervalHandsOnItsOwnCounts: an interval's counts are indexed
// by series in maps the next interval reuses (emptied); each delivery
// carries exactly the verdicts stored in its own interval, one point a
// series.
func TestEachIntervalHandsOnItsOwnCounts(t *testing.T) {
	c, sc, sink := heldCounter(t, nil)
	batches := verdictBatches(t)
	halves := [][]ptrace.Traces{batches[:len(batches)/2], batches[len(batches)/2:]}
	for i, half := range halves {
		want := countAndCommit(t, c, sc, half)
		if want == 0 {
			t.Fatalf("interval %d counted nothing: this test proves nothing", i)
		}
		c.committed.flush()
		all := sink.AllMetrics()
		if len(all) != i+1 {
			t.Fatalf("%d deliveries after interval %d, want %d", len(all), i, i+1)
		}
		last := all[len(all)-1:]
		if got := turnsCounted(last); got != want {
			t.Fatalf("interval %d handed on %d turns, want %d", i, got, want)
		}
		oneSeriesEach(t, last)
	}
	if len(c.committed.spare) == 0 {
		t.Fatal("no series index was kept for reuse: the second interval did not reuse the first's")
	}
}

// TestCountsKeepTheirResourceAttributes: with resource_attributes, the
// counts of verdicts from different launches go on under one resource
// holding only the attributes named (the launch is no label); without it,
// each keeps its verdict's resource, as the count connector does.
func TestCountsKeepTheirResourceAttributes(t *testing.T) {
	launch := func(id string) ptrace.Traces {
		td := ptrace.NewTraces()
		verdictBatches(t)[0].CopyTo(td)
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			attrs := rss.At(i).Resource().Attributes()
			attrs.PutStr("service.instance.id", id)
			attrs.PutStr("service.name", "pippa-phone")
			spans := rss.At(i).ScopeSpans().At(0).Spans()
			for k := 0; k < spans.Len(); k++ {
				sid := spans.At(k).SpanID()
				sid[0] = id[len(id)-1] // another verdict
				spans.At(k).SetSpanID(sid)
			}
		}
		return td
	}
	for _, tc := range []struct {
		keep      []string
		resources int
		attrs     map[string]any
	}{
		{keep: []string{"service.name", "service.version"}, resources: 1, attrs: map[string]any{"service.name": "pippa-phone"}},
		{keep: nil, resources: 2},
	} {
		c, sc, sink := heldCounter(t, func(cfg *Config) { cfg.ResourceAttributes = tc.keep })
		for _, id := range []string{"launch-a", "launch-b"} {
			if err := c.ConsumeTraces(context.Background(), launch(id)); err != nil {
				t.Fatal(err)
			}
			sc.commit(nil)
		}
		c.committed.flush()
		if n := len(sink.AllMetrics()); n != 1 {
			t.Fatalf("keep %v: %d deliveries, want 1", tc.keep, n)
		}
		rms := sink.AllMetrics()[0].ResourceMetrics()
		if rms.Len() != tc.resources {
			t.Fatalf("keep %v: %d resources for two launches, want %d", tc.keep, rms.Len(), tc.resources)
		}
		if tc.attrs != nil {
			if got := rms.At(0).Resource().Attributes().AsRaw(); !reflect.DeepEqual(got, tc.attrs) {
				t.Fatalf("keep %v: resource %v, want %v", tc.keep, got, tc.attrs)
			}
		}
		if got, want := turnsCounted(sink.AllMetrics()), int64(2*verdictBatches(t)[0].SpanCount()); got != want {
			t.Fatalf("keep %v: %d turns, want %d", tc.keep, got, want)
		}
	}
}
