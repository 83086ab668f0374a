package verdictprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/percause/percause/components/sharedstorage"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/storagetest"
	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

// The stored state BenchmarkRestartFullStore starts on: restartTurns held
// turns, restartTurnsPerLaunch to a launch, so the launches fill the book
// (launches.max at its default) and each keeps launches.KeptTurns turns.
const (
	restartTurns          = 100000
	restartTurnsPerLaunch = restartTurns / DefaultLaunches
	// restartLaunchesPerRequest launches, each with all its turns, make one
	// request of the setup.
	restartLaunchesPerRequest = 10
)

// sharedStorageOn starts shared_storage (its default engine, the log) on
// dir, as the embedded default configures it.
func sharedStorageOn(tb testing.TB, dir string) *storagetest.Host {
	tb.Helper()
	f := sharedstorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*sharedstorage.Config)
	cfg.Directory = dir
	if cfg.Engine != sharedstorage.EngineLog {
		tb.Fatalf("shared_storage's default engine is %q, this benchmark measures %q", cfg.Engine, sharedstorage.EngineLog)
	}
	set := extensiontest.NewNopSettings(f.Type())
	set.ID = component.NewID(f.Type()) // the nop settings name it anew each time: its files with it
	ext, err := f.Create(context.Background(), set, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		tb.Fatal(err)
	}
	return &storagetest.Host{Host: componenttest.NewNopHost(), ID: set.ID, Ext: ext}
}

// restartConfig is the default configuration with storage, and max_pending
// raised to hold every turn of the stored state with room to spare (at
// exactly restartTurns the first request's turns would push the oldest
// out).
func restartConfig(id component.ID) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Storage = &id
	cfg.MaxPending = restartTurns + restartTurns/10
	return cfg
}

// heldRequest is request r of the setup: restartLaunchesPerRequest new
// launches, each with restartTurnsPerLaunch turns of the reference shape
// (benchRequest's phone half: a voice.turn, 20 units of which 4 underran,
// 9 HTTP client spans), without their takes, so every turn is held.
func heldRequest(template ptrace.SpanSlice, r int) ptrace.Traces {
	td := ptrace.NewTraces()
	for l := range restartLaunchesPerRequest {
		launch := r*restartLaunchesPerRequest + l
		rs := td.ResourceSpans().AppendEmpty()
		a := rs.Resource().Attributes()
		a.PutStr(semconv.ServiceName, semconv.ServicePhone)
		a.PutStr(semconv.ServiceInstanceID, fmt.Sprintf("5b0c1e8a-6d0f-4d43-9a6e-%012d", launch))
		a.PutStr(semconv.AppInstallationID, fmt.Sprintf("install-%d", launch%1000))
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range restartTurnsPerLaunch {
			var tid pcommon.TraceID
			tid[0], tid[1] = 0x5E, 0x70
			tid[8], tid[9], tid[10], tid[11] = byte(launch>>24), byte(launch>>16), byte(launch>>8), byte(launch)
			tid[15] = byte(i)
			for j := 0; j < template.Len(); j++ {
				s := spans.AppendEmpty()
				template.At(j).CopyTo(s)
				s.SetTraceID(tid)
				if s.Name() == semconv.SpanVoiceTurn {
					// From 4 on: the three .before readings the turn carries
					// are of turns that exist.
					s.Attributes().PutInt(semconv.TurnIndex, int64(4+i))
				}
			}
		}
	}
	return td
}

// buildFullStore runs the real processor on shared_storage in dir until
// it holds restartTurns turns and a full launch book, then stops both: the
// stored state a restart reads back.
func buildFullStore(b *testing.B, dir string) {
	host := sharedStorageOn(b, dir)
	cfg := restartConfig(host.ID)
	h := newHarness(b, cfg)
	h.now = time.Now() // the launches are recent: none idles out at the restart
	h.p.next = consumertest.NewNop()
	if err := h.p.Start(context.Background(), host); err != nil {
		b.Fatal(err)
	}
	// The template: the phone's spans of one turn of the reference request.
	template := ptrace.NewSpanSlice()
	req := benchRequest()
	for i := 0; i < req.ResourceSpans().Len(); i++ {
		rs := req.ResourceSpans().At(i)
		if v, _ := rs.Resource().Attributes().Get(semconv.ServiceName); v.Str() != semconv.ServicePhone {
			continue
		}
		spans := rs.ScopeSpans().At(0).Spans()
		for j := 0; j < spans.Len(); j++ {
			if spans.At(j).TraceID()[15] == 0 {
				spans.At(j).CopyTo(template.AppendEmpty())
			}
		}
	}
	for r := range DefaultLaunches / restartLaunchesPerRequest {
		if err := h.p.ConsumeTraces(context.Background(), heldRequest(template, r)); err != nil {
			b.Fatal(err)
		}
	}
	h.p.mu.Lock()
	held, kept := h.p.held.Len(), h.p.launches.Len()
	// Each launch keeps its most recent launches.KeptTurns turns.
	k := launches.Key{Installation: "install-0", Instance: fmt.Sprintf("5b0c1e8a-6d0f-4d43-9a6e-%012d", 0)}
	last := int64(4 + restartTurnsPerLaunch - 1)
	for idx := int64(4); idx <= last; idx++ {
		if want := idx > last-launches.KeptTurns; h.p.launches.Has(k, 0, idx) != want {
			b.Errorf("launch 0 keeps turn %d: %v, want %v", idx, !want, want)
		}
	}
	h.p.mu.Unlock()
	if held != restartTurns || kept != DefaultLaunches {
		b.Fatalf("the store holds %d turns and %d launches, want %d and %d", held, kept, restartTurns, DefaultLaunches)
	}
	if err := h.p.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := host.Ext.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// dirBytes is the size of the files in dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkRestartFullStore: from start to the first request served when
// storage holds restartTurns held turns and a full launch book (every
// one of launches.max's slots, each launch with launches.KeptTurns turns):
// shared_storage's start (it reads its snapshot and log), the processor's
// Start (it reads everything back) and the first ConsumeTraces answered
// (the reference 100-span request, two turns decided and committed), with
// the real clock and sweep, as a collector's restart runs them. It also
// reports the process's CPU time over the same spans (less moved by other
// work on the machine than the wall clock) and the heap in use after the
// start.
//
// The stored state is built first (10 to 20 s on 2 shared cores; not
// timed, and once for all the iterations of b.Loop), so the benchmark runs
// only when asked:
//
//	go test -run '^$' -bench BenchmarkRestartFullStore -benchtime 5x ./processors/verdictprocessor/
//
// Each iteration restarts on the same directory: the previous one's first
// request left two more turns decided and one launch replaced by another,
// so the state stays full.
func BenchmarkRestartFullStore(b *testing.B) {
	if testing.Short() {
		b.Skip("builds 100,000 stored turns")
	}
	dir := b.TempDir()
	began := time.Now()
	buildFullStore(b, dir)
	b.Logf("built %d held turns in %d launches in %.1f s; stored %.1f MB", restartTurns, DefaultLaunches,
		time.Since(began).Seconds(), float64(dirBytes(b, dir))/1e6)
	body, offs := requestBytes(b)
	u := ptrace.ProtoUnmarshaler{}
	var extStart, procStart, first, cpu time.Duration
	var heapInuse, heapAlloc uint64
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		stamp(body, offs, uint64(1<<40+i)) // apart from the stored turns' trace IDs
		td, err := u.UnmarshalTraces(body)
		if err != nil {
			b.Fatal(err)
		}
		set := processortest.NewNopSettings(metadata.Type)
		runtime.GC()
		b.StartTimer()

		c0, t0 := cpuTime(), time.Now()
		host := sharedStorageOn(b, dir)
		t1 := time.Now()
		p, err := newVerdictProcessor(set, restartConfig(host.ID), consumertest.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Start(context.Background(), host); err != nil {
			b.Fatal(err)
		}
		t2, c2 := time.Now(), cpuTime()

		b.StopTimer()
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapInuse, heapAlloc = max(heapInuse, ms.HeapInuse), max(heapAlloc, ms.HeapAlloc)
		p.mu.Lock()
		held, kept := p.held.Len(), p.launches.Len()
		p.mu.Unlock()
		if held != restartTurns || kept != DefaultLaunches {
			b.Fatalf("restored %d turns and %d launches, want %d and %d", held, kept, restartTurns, DefaultLaunches)
		}
		b.StartTimer()

		c3, t3 := cpuTime(), time.Now()
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
		t4, c4 := time.Now(), cpuTime()

		b.StopTimer()
		extStart += t1.Sub(t0)
		procStart += t2.Sub(t1)
		first += t4.Sub(t3)
		cpu += c2 - c0 + c4 - c3
		if err := p.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := host.Ext.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64((extStart+procStart+first).Nanoseconds())/n, "ns/open+first-request")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/open+first-request")
	b.ReportMetric(float64(extStart.Nanoseconds())/n, "ns/storage-start")
	b.ReportMetric(float64(procStart.Nanoseconds())/n, "ns/processor-start")
	b.ReportMetric(float64(first.Nanoseconds())/n, "ns/first-request")
	b.ReportMetric(float64(heapInuse)/(1<<20), "MiB-heap-inuse-after-start")
	b.ReportMetric(float64(heapAlloc)/(1<<20), "MiB-heap-alloc-after-start")
}
