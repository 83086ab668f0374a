package verdictcountconnector

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pmetric"

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
	cfg := createDefaultConfig().(*Config)
	cc, err := createTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	c := cc.(*counter)
	sc := &stagingClient{}
	c.store = &countedStore{client: sc, stage: sc, recent: cfg.Recent, nextSeq: 1}
	td := verdictBatches(t)[0]
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if got := turnsCounted(sink.AllMetrics()); got != 0 {
		t.Fatalf("%d turns counted before the commit", got)
	}
	sc.commit(errors.New("disk full"))
	if got := turnsCounted(sink.AllMetrics()); got != 0 {
		t.Fatalf("%d turns counted after a failed commit", got)
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	sc.commit(nil)
	if got, want := turnsCounted(sink.AllMetrics()), int64(td.SpanCount()); got != want {
		t.Fatalf("%d turns counted after the commit, want %d", got, want)
	}
}
