package load_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/leaf/freeport"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// startDurablePeer starts the durable stock peer, exporting to sinkURL.
func startDurablePeer(t *testing.T, sinkURL string) *load.Collector {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	cfg := filepath.Join(t.TempDir(), "durablepeer.yaml")
	if err := os.WriteFile(cfg, load.DurablePeer, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := load.StartCollector(context.Background(), testenv.PercauseBin(t), "durable", t.TempDir(), []string{cfg},
		load.WithEnv(collectorconfig.EnvTracesForward+"="+sinkURL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			if b, err := os.ReadFile(c.LogFile()); err == nil {
				t.Logf("--- durable collector log ---\n%s", tail(b, 8000))
			}
		}
	})
	c.PromURL = "" // it counts nothing
	return c
}

// TestDurablePeerKeepsWhatItAccepted: the durable stock peer accepts
// turns and exports every span to the load tool's sink; and what it
// answered 200 while the sink was down, queued in file_storage, reaches
// the sink after the peer is killed with SIGKILL and started again: its
// 200 means the request was stored, which is what makes it the default's
// peer.
func TestDurablePeerKeepsWhatItAccepted(t *testing.T) {
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + itoa(port)
	sink, err := load.StartSink(addr)
	if err != nil {
		t.Fatal(err)
	}
	c := startDurablePeer(t, sink.URL)
	ctx := context.Background()

	// Accepts and exports.
	s := load.NewSender(c.TracesURL, 4)
	if _, err := load.Run(ctx, s, load.NewFleet(10, 3, 1), 50, 4, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.WaitSpans(ctx, s.Spans.Load(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if sink.Undecodable() != 0 {
		t.Errorf("%d exports the sink could not read as OTLP traces", sink.Undecodable())
	}
	exported := sink.Spans()

	// The sink goes away: the peer still answers 200, from its queue.
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	held := load.NewSender(c.TracesURL, 4)
	if _, err := load.Run(ctx, held, load.NewFleet(10, 3, 2), 50, 4, 0, nil); err != nil {
		t.Fatal(err)
	}
	var queued float64
	testenv.WaitFor(t, 10*time.Second, "the queue's size reported", func() bool {
		q, err := load.Scrape(ctx, c.TelURL, "otelcol_exporter_queue_size", "")
		queued = q.By[""]
		return err == nil && queued > 0
	})
	t.Logf("%d spans exported while the sink was up; %d accepted after it went, %v requests queued", exported, held.Spans.Load(), queued)
	if want := float64(held.Requests.Load()); queued < want {
		t.Fatalf("%v requests queued, %v accepted while the sink was down: the kill would not test what the queue keeps", queued, want)
	}
	c.Kill()

	sink, err = load.StartSink(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sink.WaitSpans(ctx, held.Spans.Load(), 60*time.Second); err != nil {
		t.Fatalf("the spans accepted while the sink was down, after a kill and a restart: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
