package verdictexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/vfs"
	"github.com/percause/percause/verdict"
)

// realisticBatch is a batch as the verdict processor sends it on: n
// verdict spans written by verdict.Append, each under the phone's
// resource, with a synthesis verdict's evidence, route, done readings and
// two units that underran.
func realisticBatch(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	res := pcommon.NewResource()
	ra := res.Attributes()
	ra.PutStr(semconv.ServiceName, semconv.ServicePhone)
	ra.PutStr(semconv.ServiceVersion, "2.4.1")
	ra.PutStr(semconv.AppInstallationID, "2d6585b6-ae68-4fba-9330-ac9864dc8aa8")
	ra.PutStr(semconv.ServiceInstanceID, "81afc894-f214-450a-9658-c7a0299c0c35")
	now := pcommon.NewTimestampFromTime(time.Now())
	for i := range n {
		r := verdict.Record{
			TraceID: pcommon.TraceID{0xAA, 15: byte(i)}, TurnSpan: pcommon.SpanID{0xCC, 7: byte(i)}, Decided: now,
			Verdict: verdict.Verdict{
				Cause: semconv.CauseSynthesis, Causes: []string{semconv.CauseSynthesis, semconv.CauseWait},
				Evidence: "unit 3: 2 underruns, 1.40 s silent; take t3 need 2.10 s > cushion 1.50 s; unit 5: 1 underrun, 0.60 s silent; take t5 need 1.90 s > cushion 1.50 s",
				Link:     semconv.LinkWifi, Index: int64(i + 1), Underruns: 3, Silent: 2.0,
				Underran: []verdict.Underrun{
					{Unit: 3, TakeID: "t3", Underruns: 2, Silent: 1.4, Cushion: 1.5, Need: verdict.Some(2.1), Cause: semconv.CauseSynthesis},
					{Unit: 5, TakeID: "t5", Underruns: 1, Silent: 0.6, Cushion: 1.5, Need: verdict.Some(1.9), Cause: semconv.CauseSynthesis},
				},
				PoolBefore: verdict.Some(int64(0)),
			},
			Rules: semconv.RulesVersion, TurnTime: now - 2e9, Bluetooth: verdict.Some(true),
			Outputs: []string{semconv.PortBluetoothA2DP}, SpeechEndToPost: verdict.Some(0.42), NotSent: verdict.Some(0.0),
			PoolResets: verdict.Some(int64(0)), CountedAs: "2d6585b6-ae68-4fba-9330-ac9864dc8aa8",
		}
		r.SpanID = verdict.SpanIDFor(r.TraceID, r.TurnSpan)
		verdict.Append(td, res, &r, now)
	}
	return td
}

// BenchmarkConsumeTraces is the exporter's cost on the request path, per
// verdict: the line written and, with the page, the turn kept while the
// page is watched (the store full at keep.turns, so each new turn lets the
// oldest go); a page nobody looks at keeps nothing. Each batch's verdicts
// are new.
func BenchmarkConsumeTraces(b *testing.B) {
	for _, per := range []int{1, 8} {
		for _, page := range []string{"watched", "unwatched", "none"} {
			b.Run(fmt.Sprintf("verdicts=%d/page=%s", per, page), func(b *testing.B) {
				cfg := config(filepath.Join(b.TempDir(), "verdicts.jsonl"))
				cfg.Rotation = RotationConfig{MaxMegabytes: 20, MaxBackups: 1}
				if page != "none" {
					cfg = pageConfig(cfg.Path)
					cfg.Rotation = RotationConfig{MaxMegabytes: 20, MaxBackups: 1}
					// Full within a run: each new turn then lets the oldest go.
					cfg.Keep.Turns = 1000
				}
				e, err := newExporter(settings(), cfg, vfs.OS)
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Start(context.Background(), newHost(nil)); err != nil {
					b.Fatal(err)
				}
				defer func() { _ = e.Shutdown(context.Background()) }()
				if page == "watched" {
					e.watchedUntil = time.Now().Add(24 * time.Hour) // looked at, through the whole run
				}
				td := realisticBatch(per)
				spans := make([]ptrace.Span, 0, per)
				for i := 0; i < td.ResourceSpans().Len(); i++ {
					spans = append(spans, td.ResourceSpans().At(i).ScopeSpans().At(0).Spans().At(0))
				}
				ctx := context.Background()
				seq := uint64(0)
				b.ReportAllocs()
				cpu0 := processCPU()
				b.ResetTimer()
				for range b.N {
					for _, s := range spans {
						seq++
						s.SetSpanID(pcommon.SpanID{byte(seq >> 56), byte(seq >> 48), byte(seq >> 40), byte(seq >> 32), byte(seq >> 24), byte(seq >> 16), byte(seq >> 8), byte(seq)})
						s.SetTraceID(pcommon.TraceID{0xAA, 8: byte(seq >> 56), 9: byte(seq >> 48), 10: byte(seq >> 40), 11: byte(seq >> 32), 12: byte(seq >> 24), 13: byte(seq >> 16), 14: byte(seq >> 8), 15: byte(seq)})
					}
					if err := e.ConsumeTraces(ctx, td); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if page != "none" {
					// What a flush loop beside it spends is the process's too.
					_ = e.Shutdown(context.Background())
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/verdict")
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*per), "cpu-ns/verdict")
			})
		}
	}
}

// processCPU is the CPU time the process has spent, user and system, in
// nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkStart is the start with a verdict file of keep.turns (10,000)
// turns, a batch of one each, and 200 link status changes among them: the
// page's store read back from the file.
func BenchmarkStart(b *testing.B) {
	cfg := pageConfig(filepath.Join(b.TempDir(), "verdicts.jsonl"))
	c := &clock{time.Now()}
	fillVerdictFile(b, cfg, c, DefaultKeepTurns, 200)
	b.ReportAllocs()
	b.ResetTimer()
	var st rebuildStats
	for range b.N {
		e, err := newExporter(settings(), cfg, vfs.OS)
		if err != nil {
			b.Fatal(err)
		}
		e.now = c.now
		if err := e.Start(context.Background(), newHost(b)); err != nil {
			b.Fatal(err)
		}
		st = e.rebuilt
		if err := e.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if st.Turns != DefaultKeepTurns || st.Links != 200 {
		b.Fatalf("read back %+v, want every turn and link change", st)
	}
	b.ReportMetric(float64(st.Bytes)/(1<<20), "MiB-read")
}

// fillVerdictFile writes turns realistic verdicts and links link status
// changes among them through an exporter, one a second up to c's now.
func fillVerdictFile(b *testing.B, cfg *Config, c *clock, turns, links int) {
	b.Helper()
	e, err := newExporter(settings(), cfg, vfs.OS)
	if err != nil {
		b.Fatal(err)
	}
	e.now = c.now
	if err := e.Start(context.Background(), newHost(b)); err != nil {
		b.Fatal(err)
	}
	td := realisticBatch(1)
	s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	first := c.t.Add(-time.Duration(turns) * time.Second)
	for i := range turns {
		at := pcommon.NewTimestampFromTime(first.Add(time.Duration(i) * time.Second))
		s.SetTraceID(pcommon.TraceID{0xAA, 13: byte(i >> 16), 14: byte(i >> 8), 15: byte(i)})
		s.SetSpanID(pcommon.SpanID{0xBB, 5: byte(i >> 16), 6: byte(i >> 8), 7: byte(i)})
		s.SetStartTimestamp(at)
		s.SetEndTimestamp(at)
		s.Attributes().PutInt(semconv.VerdictTurnTime, int64(at)-2e9)
		if err := e.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
		if links > 0 && i%(turns/links) == 0 {
			l := linkAt(0, at.AsTime(), semconv.LinkStatusConnectionLost)
			ls := l.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
			ls.SetTraceID(s.TraceID())
			ls.SetSpanID(pcommon.SpanID{0xDD, 5: byte(i >> 16), 6: byte(i >> 8), 7: byte(i)})
			if err := e.ConsumeTraces(context.Background(), l); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := e.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
}
