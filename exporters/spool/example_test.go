package spool_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/percause/percause/exporters/otlp"
	"github.com/percause/percause/exporters/spool"
)

// A spool in front of an OTLP client: Put returns once the batch is on disk;
// the spool's goroutine sends it and removes it once the collector accepted
// it. Here nothing listens, so the batch waits on disk for the next launch.
func Example() {
	dir, err := os.MkdirTemp("", "percause-spool-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	client, err := otlp.NewClient("http://127.0.0.1:1") // nothing listens on port 1
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	sp, err := spool.Open(dir, func(ctx context.Context, kind string, payload []byte) error {
		return client.Send(ctx, otlp.Signal(kind), payload)
	}, spool.WithLimit(8<<20), spool.WithLatestOnly(string(otlp.SignalMetrics)))
	if err != nil {
		log.Fatal(err)
	}
	payload, _ := otlp.EncodeTraces(nil) // an empty export request
	if err := sp.Put(string(otlp.SignalTraces), payload); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	fmt.Println(sp.Flush(ctx) != nil, sp.Stats().Queued)
	_ = sp.Close()
	// Output: true 1
}
