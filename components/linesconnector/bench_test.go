package linesconnector_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/components/linesconnector"
)

// BenchmarkConnector: the SDK's lines (a turn after its takes, 36 turns of
// the golden sdk case, 4 rounds of trace IDs) through ConsumeLogs into a
// discarding consumer, in batches of one round: the cost per line read,
// joined and made into spans.
func BenchmarkConnector(b *testing.B) {
	lines, _ := rounds(b, 4)
	batches := make([]plog.Logs, len(lines))
	n := 0
	for i, round := range lines {
		ld := plog.NewLogs()
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for j, l := range round {
			lr := lrs.AppendEmpty()
			lr.Body().SetStr(l)
			lr.Attributes().PutStr(linesconnector.AttrFileName, "app.log")
			lr.Attributes().PutInt(linesconnector.AttrRecordNumber, int64(j+1))
		}
		batches[i] = ld
		n += len(round)
	}
	ctx := context.Background()
	f := linesconnector.NewFactory()
	b.ReportAllocs()
	b.ResetTimer()
	lineCount := 0
	for b.Loop() {
		b.StopTimer()
		// A fresh connector each loop: the same lines again would be
		// duplicates of turns already emitted.
		conn, err := f.CreateLogsToTraces(ctx, connectortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		if err := conn.Start(ctx, componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, ld := range batches {
			if err := conn.ConsumeLogs(ctx, ld); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		_ = conn.Shutdown(ctx)
		b.StartTimer()
		lineCount += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lineCount), "ns/line")
	b.ReportMetric(float64(lineCount)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkConnectorDay: one connector reading a long day of the SDK's
// lines in batches of one round (each round's turns with trace IDs of their
// own, 1000 rounds, then again once the connector has forgotten them): the
// cost per line once the rings of emitted turns and of launches
// (emitted_cache_size 2000, the turns of 222 rounds) are full and forget as
// they go.
func BenchmarkConnectorDay(b *testing.B) {
	base, _ := rounds(b, 1)
	lines := make([][]string, 1000)
	for r := range lines {
		for _, l := range base[0] {
			i := strings.Index(l, " trace=") + 7
			lines[r] = append(lines[r], l[:i]+fmt.Sprintf("%08x", r+1)+l[i+8:])
		}
	}
	batches := make([]plog.Logs, len(lines))
	n := 0
	for i, round := range lines {
		ld := plog.NewLogs()
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for j, l := range round {
			lr := lrs.AppendEmpty()
			lr.Body().SetStr(l)
			lr.Attributes().PutStr(linesconnector.AttrFileName, "app.log")
			lr.Attributes().PutInt(linesconnector.AttrRecordNumber, int64(i*len(round)+j+1))
		}
		batches[i] = ld
		n += len(round)
	}
	ctx := context.Background()
	f := linesconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*linesconnector.Config)
	cfg.EmittedCacheSize = 2000
	conn, err := f.CreateLogsToTraces(ctx, connectortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := conn.Start(ctx, componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Shutdown(ctx) }()
	// Fill the rings first.
	for _, ld := range batches[:300] {
		if err := conn.ConsumeLogs(ctx, ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	lineCount, r := 0, 300
	for b.Loop() {
		if err := conn.ConsumeLogs(ctx, batches[r%len(batches)]); err != nil {
			b.Fatal(err)
		}
		lineCount += len(lines[r%len(lines)])
		r++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lineCount), "ns/line")
}
