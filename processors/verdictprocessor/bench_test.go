package verdictprocessor

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

// benchTraceMark starts every benchmark trace ID; the 8 bytes after it are
// rewritten in the marshalled request so every request carries new turns
// without marshalling again.
var benchTraceMark = []byte{0xBE, 0x9C, 0x7A, 0x11, 0x5E, 0xED, 0xF0, 0x0D}

// benchRequest is one 100-span OTLP request: two voice turns, each a
// voice.turn, 20 voice.unit, 20 tts.take and 9 HTTP client spans, about 10
// attributes a span (the architecture's reference load).
func benchRequest() ptrace.Traces {
	td := ptrace.NewTraces()
	phone := td.ResourceSpans().AppendEmpty()
	phone.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
	phone.Resource().Attributes().PutStr(semconv.ServiceInstanceID, "launch-1")
	phone.Resource().Attributes().PutStr(semconv.AppInstallationID, "install-1")
	pspans := phone.ScopeSpans().AppendEmpty().Spans()
	engine := td.ResourceSpans().AppendEmpty()
	engine.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServiceEngine)
	espans := engine.ScopeSpans().AppendEmpty().Spans()
	ts := pcommon.NewTimestampFromTime(baseTime)
	for t := 0; t < 2; t++ {
		var tid pcommon.TraceID
		copy(tid[:], benchTraceMark)
		tid[15] = byte(t)
		sid := func(n int) pcommon.SpanID { return pcommon.SpanID{byte(t), 0, 0, 0, 0, 0, byte(n >> 8), byte(n)} }
		mk := func(spans ptrace.SpanSlice, name string, n int) ptrace.Span {
			s := spans.AppendEmpty()
			s.SetTraceID(tid)
			s.SetSpanID(sid(n))
			if n != 1 {
				s.SetParentSpanID(sid(1))
			}
			s.SetName(name)
			s.SetStartTimestamp(ts)
			s.SetEndTimestamp(ts + 1e9)
			return s
		}
		for u := 1; u <= 20; u++ {
			id := fmt.Sprintf("t%d", u)
			us := mk(pspans, semconv.SpanVoiceUnit, 10+u).Attributes()
			us.PutInt(semconv.UnitIndex, int64(u))
			us.PutStr(semconv.TakeID, id)
			us.PutDouble(semconv.UnitGap, 0.1)
			us.PutDouble(semconv.UnitLead, 0.3)
			underruns := int64(0)
			if u%5 == 0 {
				underruns = 1
			}
			us.PutInt(semconv.UnitUnderruns, underruns)
			us.PutDouble(semconv.UnitSilent, 0.2*float64(underruns))
			us.PutDouble(semconv.UnitLongest, 0.2*float64(underruns))
			us.PutDouble(semconv.UnitCushion, 1.5)
			us.PutStr(semconv.UnitPlayer, "stream")
			us.PutStr("pippa.unit.kind", "sentence")

			ta := mk(espans, semconv.SpanTTSTake, 100+u).Attributes()
			ta.PutStr(semconv.TakeID, id)
			ta.PutDouble(semconv.TakeFirstByte, 0.3)
			ta.PutDouble(semconv.TakeTotal, 4)
			ta.PutDouble(semconv.TakeAudio, 6)
			ta.PutDouble(semconv.TakeRate, 1.5)
			ta.PutDouble(semconv.TakeNeed, 0.4+float64(u%3))
			ta.PutInt(semconv.TakeBeside, 2)
			ta.PutStr("pippa.take.voice", "pippa")
			ta.PutStr("pippa.take.model", "tts-1")
			ta.PutInt("pippa.take.bytes", 96000)
		}
		for c := 0; c < 9; c++ {
			ca := mk(pspans, "POST /api/tts/prepare", 200+c).Attributes()
			ca.PutStr(semconv.HTTPMethod, "POST")
			ca.PutInt(semconv.HTTPStatus, 200)
			ca.PutStr(semconv.HTTPRoute, "/api/tts/prepare")
			ca.PutStr(semconv.ServerAddr, "pippa.tailnet")
			ca.PutStr(semconv.URLPath, "/api/tts/prepare")
			ca.PutStr(semconv.Lane, semconv.LaneControl)
			ca.PutStr(semconv.CallKind, "prepare")
			ca.PutInt("http.request.body.size", 120)
			ca.PutInt("http.response.body.size", 80)
			ca.PutStr("network.protocol.version", "1.1")
		}
		ta := mk(pspans, semconv.SpanVoiceTurn, 1).Attributes()
		ta.PutInt(semconv.TurnIndex, 4)
		ta.PutStr(semconv.NetworkConnectionType, semconv.LinkWifi)
		ta.PutInt(semconv.TurnUnits, 20)
		ta.PutBool(semconv.RouteBluetooth, true)
		ta.PutInt(semconv.PoolResets, 0)
		ta.PutInt(semconv.PoolResetsBefore, 0)
		ta.PutInt(semconv.LiveAttr(semconv.LivePlayers), 2)
		ta.PutEmptySlice(semconv.LiveBeforeAttr(semconv.LivePlayers)).FromRaw([]any{int64(2), int64(2), int64(2)})
		ta.PutDouble(semconv.ListenGrant, 0.3)
		ta.PutDouble(semconv.ListenTotal, 0.6)
	}
	return td
}

// requestBytes marshals the request and finds where its trace IDs' counter
// bytes sit, so each iteration can stamp fresh trace IDs in place.
func requestBytes(tb testing.TB) ([]byte, []int) {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(benchRequest())
	if err != nil {
		tb.Fatal(err)
	}
	var offs []int
	for i := 0; ; {
		j := bytes.Index(b[i:], benchTraceMark)
		if j < 0 {
			break
		}
		offs = append(offs, i+j+len(benchTraceMark))
		i += j + len(benchTraceMark)
	}
	return b, offs
}

func stamp(b []byte, offs []int, n uint64) {
	for _, o := range offs {
		// Keep byte 15 (which turn of the request) as it is.
		binary.BigEndian.PutUint64(b[o:o+8], n<<8|uint64(b[o+7]))
	}
}

// pipeline is an in-process collector pipeline: the real OTLP receiver on a
// loopback port → its processors (with or without the verdict processor) →
// a discarding exporter that counts the spans it was handed (out).
type pipeline struct {
	url  string
	out  *countingSink
	stop func()
}

// countingSink discards what it is handed and counts its spans; once they
// reach want it signals reached (so a wait for them costs no polling).
type countingSink struct {
	consumertest.Consumer
	spans   atomic.Int64
	want    atomic.Int64
	reached chan struct{}
}

func (c *countingSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if c.spans.Add(int64(td.SpanCount())) >= c.want.Load() {
		select {
		case c.reached <- struct{}{}:
		default:
		}
	}
	return nil
}

func (c *countingSink) Load() int64 { return c.spans.Load() }

// drained waits until p's sink has been handed want spans: the batch
// processor hands a round's last spans on at its timeout, and that work is
// the round's own, not the next round's (which may be the other pipeline's).
func (p pipeline) drained(b *testing.B, want int64) {
	p.out.want.Store(want)
	timeout := time.After(10 * time.Second)
	for p.out.Load() < want {
		select {
		case <-p.out.reached:
		case <-timeout:
			b.Fatalf("the sink has %d spans of %d after 10 s", p.out.Load(), want)
		}
	}
}

// pipelineShape is what stands between the receiver and the verdict
// processor (or, passing spans through, the sink).
type pipelineShape int

const (
	// asShipped is every shipped configuration's traces pipeline:
	// memory_limiter, then the verdict processor in the request's goroutine,
	// so the 200 waits for what the processor keeps.
	asShipped pipelineShape = iota
	// behindBatch puts a batch processor ahead: the processor reads each
	// batch about 200 ms after its requests were decoded, out of cache. No
	// configuration ships it (the 200 would come before the turn is kept).
	behindBatch
)

// stage is what the measured pipeline has in the verdict processor's
// place.
type stage int

const (
	// noStage passes spans through: the pass-through itself.
	noStage stage = iota
	// verdictStage is the verdict processor, as shipped.
	verdictStage
	// formatFloor does only what any processor writing this format must:
	// it reads what the rules read of every span, and writes each turn's
	// verdict span as the processor writes it (copied from one it wrote),
	// holding and deciding nothing.
	formatFloor
	// writeFloor only writes each turn's verdict span, reading nothing but
	// the spans' names.
	writeFloor
)

func startPipeline(b *testing.B, shape pipelineShape, st stage) pipeline {
	ctx := context.Background()
	out := &countingSink{Consumer: consumertest.NewNop(), reached: make(chan struct{}, 1)}
	var next consumer.Traces = out
	var comps []component.Component
	switch st {
	case verdictStage:
		f := NewFactory()
		p, err := f.CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), next)
		if err != nil {
			b.Fatal(err)
		}
		comps = append(comps, p)
		next = p
	case formatFloor, writeFloor:
		fs := newFloorStage(b, st == formatFloor, next)
		comps = append(comps, fs)
		next = fs
	}
	switch shape {
	case behindBatch:
		bf := batchprocessor.NewFactory()
		bp, err := bf.CreateTraces(ctx, processortest.NewNopSettings(bf.Type()), bf.CreateDefaultConfig(), next)
		if err != nil {
			b.Fatal(err)
		}
		comps = append(comps, bp)
		next = bp
	case asShipped:
		mf := memorylimiterprocessor.NewFactory()
		mcfg := mf.CreateDefaultConfig()
		// collector-config/local.yaml's limits.
		configure(b, mcfg, map[string]any{"check_interval": "1s", "limit_mib": 512, "spike_limit_mib": 128})
		mp, err := mf.CreateTraces(ctx, processortest.NewNopSettings(mf.Type()), mcfg, next)
		if err != nil {
			b.Fatal(err)
		}
		comps = append(comps, mp)
		next = mp
	}
	rf := otlpreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig()
	port := testenv.FreePort(b)
	configure(b, rcfg, map[string]any{
		"protocols": map[string]any{"http": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", port)}},
	})
	r, err := rf.CreateTraces(ctx, receivertest.NewNopSettings(rf.Type()), rcfg, next)
	if err != nil {
		b.Fatal(err)
	}
	comps = append(comps, r)
	for _, c := range comps {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
	}
	return pipeline{
		url: fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port),
		out: out,
		stop: func() {
			for i := len(comps) - 1; i >= 0; i-- {
				_ = comps[i].Shutdown(ctx)
			}
		},
	}
}

// configure sets a component's configuration from a map, as a YAML file
// would.
func configure(b *testing.B, cfg component.Config, m map[string]any) {
	if err := confmap.NewFromStringMap(m).Unmarshal(cfg); err != nil {
		b.Fatal(err)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCollectorPipeline sends the same 100-span requests through two
// in-process pipelines shaped as every shipped configuration's traces
// pipeline (OTLP receiver → memory_limiter → verdict), one with the verdict
// processor and one without, in alternating rounds, and reports the process
// CPU per span of each and their ratio (target: verdict ≤ 1.2 ×
// pass-through). The CPU of the HTTP client is in both figures. A run
// measures at least minRounds rounds, about ten seconds of requests, so
// each run can tell a ratio above 1.2 from its own noise.
func BenchmarkCollectorPipeline(b *testing.B) {
	benchmarkCollectorPipeline(b, asShipped, verdictStage)
}

// BenchmarkCollectorPipelineBehindBatch is BenchmarkCollectorPipeline with
// a batch processor ahead of the verdict processor, a shape no
// configuration ships: the processor reads each batch out of cache, about
// 200 ms after its requests were decoded.
func BenchmarkCollectorPipelineBehindBatch(b *testing.B) {
	benchmarkCollectorPipeline(b, behindBatch, verdictStage)
}

// BenchmarkCollectorPipelinePassAgainstPass is BenchmarkCollectorPipeline
// with a second pass-through in the verdict pipeline's place: what the
// benchmark reads of a processor that costs nothing. Its cpu-ratio is the
// measurement's own spread on this machine, the margin any
// target on BenchmarkCollectorPipeline's ratio is read against.
func BenchmarkCollectorPipelinePassAgainstPass(b *testing.B) {
	benchmarkCollectorPipeline(b, asShipped, noStage)
}

// BenchmarkCollectorPipelineFormatFloor is BenchmarkCollectorPipeline with
// formatFloor in the processor's place: what reading the spans and writing
// the verdict spans cost with nothing held or decided, the least any
// processor writing this format pays.
func BenchmarkCollectorPipelineFormatFloor(b *testing.B) {
	benchmarkCollectorPipeline(b, asShipped, formatFloor)
}

// BenchmarkCollectorPipelineWriteFloor is BenchmarkCollectorPipeline with
// writeFloor in the processor's place: what writing the verdict spans
// alone costs.
func BenchmarkCollectorPipelineWriteFloor(b *testing.B) {
	benchmarkCollectorPipeline(b, asShipped, writeFloor)
}

// benchmarkCollectorPipeline measures both pipelines of one shape. Each
// round ends when its pipeline's sink has every span the round's requests
// make (measured in the warm-up: each request's spans on the pass-through,
// with its verdicts on the other), so no round is charged with a batch
// processor's flush of the one before. The second pipeline has st in the
// verdict processor's place (noStage: it is a pass-through too).
func benchmarkCollectorPipeline(b *testing.B, shape pipelineShape, st stage) {
	pass, verdict := startPipeline(b, shape, noStage), startPipeline(b, shape, st)
	defer pass.stop()
	defer verdict.stop()
	body, offs := requestBytes(b)
	var dials atomic.Int64
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}}}
	spans := int64(benchRequest().SpanCount())
	var n uint64
	// The client keeps its connections, as an OTLP exporter does: with each
	// response's body closed unread, every request dialled anew, and the
	// dialling was a tenth of both pipelines' CPU.
	defer func() {
		if n > 100 && uint64(dials.Load()) > n/10 {
			b.Errorf("%d connections for %d requests: the client does not keep its connections", dials.Load(), n)
		}
	}()
	send := func(url string) {
		n++
		stamp(body, offs, n)
		resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body) // read to its end, the connection is kept
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %s", resp.Status)
		}
	}
	// Warm both, and learn what each hands its sink per request.
	const warm = 50
	for i := 0; i < warm; i++ {
		send(pass.url)
		send(verdict.url)
	}
	perRequest := map[*pipeline]int64{}
	for _, p := range []*pipeline{&pass, &verdict} {
		p.drained(b, 1)
		for last := int64(-1); last != p.out.Load(); {
			last = p.out.Load()
			time.Sleep(300 * time.Millisecond) // past the batch timeout (200 ms)
		}
		if got := p.out.Load(); got%warm != 0 {
			b.Fatalf("%d spans out of %d requests", got, warm)
		}
		perRequest[p] = p.out.Load() / warm
	}
	// Many short rounds, each pair in turn order (pass then verdict, then
	// verdict then pass): the machine's speed moves between one round of a
	// tenth of a second and the next, and only rounds short against those
	// moves cancel them (docs/performance.md §0308).
	// Garbage is collected when the runtime would: a collection is charged
	// to the round whose allocations brought it on. Behind a batch
	// processor a round waits for its flush, so that shape keeps ten long
	// rounds.
	per, rounds := roundRequests, max(b.N/roundRequests, minRounds)
	if shape == behindBatch {
		per = max(b.N/10, 1)
		rounds = max(b.N/per, 1)
	}
	var cpuPass, cpuVerdict, wallPass, wallVerdict time.Duration
	blocks := ratioBlocks{rounds: rounds}
	runtime.GC()
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		for _, which := range roundOrder(r) {
			p, cpu, wall := &pass, &cpuPass, &wallPass
			if which {
				p, cpu, wall = &verdict, &cpuVerdict, &wallVerdict
			}
			want := p.out.Load() + int64(per)*perRequest[p]
			c0, w0 := cpuTime(), time.Now()
			for i := 0; i < per; i++ {
				send(p.url)
			}
			*wall += time.Since(w0)
			b.StopTimer() // the wait for the batch timeout is not a request's
			p.drained(b, want)
			used := cpuTime() - c0
			*cpu += used
			blocks.add(r, which, used)
			b.StartTimer()
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&mem1)
	total := float64(int64(per*rounds) * spans)
	// A run measures at least minRounds whatever b.N asked, so the
	// framework's figures per op (what it timed and counted, over b.N) are
	// replaced by what they meant: per request to each pipeline.
	pairs := float64(per * rounds)
	b.ReportMetric(float64((wallPass+wallVerdict).Nanoseconds())/pairs, "ns/op")
	if f := flag.Lookup("test.benchmem"); f != nil && f.Value.String() == "true" {
		b.ReportMetric(float64(mem1.TotalAlloc-mem0.TotalAlloc)/pairs, "B/op")
		b.ReportMetric(float64(mem1.Mallocs-mem0.Mallocs)/pairs, "allocs/op")
	}
	b.ReportMetric(float64(cpuPass.Nanoseconds())/total, "pass-cpu-ns/span")
	b.ReportMetric(float64(cpuVerdict.Nanoseconds())/total, "verdict-cpu-ns/span")
	b.ReportMetric(float64(cpuVerdict)/float64(cpuPass), "cpu-ratio")
	if se, ok := blocks.stdErr(); ok {
		b.ReportMetric(se, "cpu-ratio-se")
	}
	b.ReportMetric(total/wallPass.Seconds(), "pass-spans/s")
	b.ReportMetric(total/wallVerdict.Seconds(), "verdict-spans/s")
}

// ratioBlocks splits a run's rounds into eight consecutive blocks, each
// with its own CPU ratio. Their spread gives the run's standard error (the
// method of batch means): how far one run can read from the ratio many
// runs would average, so a run near the target says whether it is above
// it by more than its own noise (docs/performance.md §0310).
type ratioBlocks struct {
	rounds        int // in the run
	pass, verdict [8]time.Duration
}

// add charges one pipeline's CPU in a round to the round's block.
func (b *ratioBlocks) add(round int, verdict bool, cpu time.Duration) {
	i := round * len(b.pass) / b.rounds
	if verdict {
		b.verdict[i] += cpu
	} else {
		b.pass[i] += cpu
	}
}

// stdErr is the standard error of the run's ratio: the sample deviation of
// the blocks' ratios over the square root of their number. ok is false
// when the run had fewer than two rounds a block (a run behind a batch
// processor has ten rounds in all).
func (b *ratioBlocks) stdErr() (se float64, ok bool) {
	n := len(b.pass)
	if b.rounds < 2*n {
		return 0, false
	}
	var ratios [len(b.pass)]float64
	var mean float64
	for i := range ratios {
		ratios[i] = float64(b.verdict[i]) / float64(b.pass[i])
		mean += ratios[i] / float64(n)
	}
	var dev float64
	for _, r := range ratios {
		dev += (r - mean) * (r - mean)
	}
	return math.Sqrt(dev / float64(n-1) / float64(n)), true
}

// roundRequests is how many requests a pipeline's round sends: about 5 ms
// of this machine's time. Of 10, 20 and 50, 10 left two identical
// pass-throughs closest to each other (docs/performance.md §0308).
const roundRequests = 10

// minRounds is the fewest rounds a run of the shipped shape measures,
// however few b.N asks for. At the testing package's default second a run
// had about 100, and its standard error (about 0.03) was more than half the
// distance between the processor's mean ratio (about 1.15) and its target
// (1.2): whether one run of five read above the target was as much the
// dice's doing as the processor's. The standard error falls with the
// square root of the rounds. 500 put it at 0.016 to 0.018, and one run in
// 90 still read above 1.2; 1,000 put it at 0.013, a quarter of that
// distance (docs/performance.md §0311).
// -benchtime Nx measures N/10 rounds when that is more.
const minRounds = 1000

// roundOrder is which pipeline goes first in round r (false: the
// pass-through): each in turn, so neither is always the one that follows
// the other.
func roundOrder(r int) [2]bool {
	if r%2 == 0 {
		return [2]bool{false, true}
	}
	return [2]bool{true, false}
}

// BenchmarkProcessTraces is the processor alone on the same requests: its
// own cost per span.
func BenchmarkProcessTraces(b *testing.B) {
	benchmarkProcessTraces(b, createDefaultConfig().(*Config))
}

// BenchmarkProcessTracesWithoutLaunches is BenchmarkProcessTraces with
// launch memory off (launches.max 0): the processor's layers alone, to set
// beside a build from before launch memory.
func BenchmarkProcessTracesWithoutLaunches(b *testing.B) {
	cfg := createDefaultConfig().(*Config)
	cfg.Launches.Max = 0
	benchmarkProcessTraces(b, cfg)
}

func benchmarkProcessTraces(b *testing.B, cfg *Config) {
	h := newHarness(b, cfg)
	h.p.next = consumertest.NewNop() // the harness's sink would keep every batch
	body, offs := requestBytes(b)
	u := ptrace.ProtoUnmarshaler{}
	spans := benchRequest().SpanCount()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Decoding is the receiver's work, not the processor's.
		b.StopTimer()
		stamp(body, offs, uint64(i+1))
		td, err := u.UnmarshalTraces(body)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := h.p.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
	if h.p.held.Len() != 0 {
		b.Fatalf("%d turns left pending", h.p.held.Len())
	}
}

// BenchmarkPendingTurnMemory reports the heap held per pending turn: turns
// of 20 units, 4 of which underran on takes that have not arrived. Each
// iteration leaves two more turns pending.
func BenchmarkPendingTurnMemory(b *testing.B) {
	body, offs := requestBytes(b)
	u := ptrace.ProtoUnmarshaler{}
	cfg := createDefaultConfig().(*Config)
	cfg.MaxPending = 2*b.N + 2
	h := newHarness(b, cfg)
	h.p.next = consumertest.NewNop() // the harness's sink would keep every batch
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		stamp(body, offs, uint64(n+1))
		td, err := u.UnmarshalTraces(body)
		if err != nil {
			b.Fatal(err)
		}
		// Without their takes: keep only the phone's spans.
		td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
			v, _ := rs.Resource().Attributes().Get(semconv.ServiceName)
			return v.Str() == semconv.ServiceEngine
		})
		if err := h.p.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	if got := h.p.held.Len(); got != 2*b.N {
		b.Fatalf("%d pending, want %d", got, 2*b.N)
	}
	b.ReportMetric(float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc))/float64(2*b.N), "B/pending-turn")
	runtime.KeepAlive(h)
}

// TestRatioBlocksStdErr holds the pipeline benchmark's standard error to
// the batch-means formula on rounds whose CPU is known.
func TestRatioBlocksStdErr(t *testing.T) {
	const ms = time.Millisecond
	cases := []struct {
		name    string
		rounds  int
		verdict func(round int) time.Duration // the pass-through costs 10 ms a round
		want    float64
		ok      bool
	}{
		{"every block alike", 16, func(int) time.Duration { return 12 * ms }, 0, true},
		// Blocks of two rounds, their ratios 1.0, 1.2, 1.0, …: a sample
		// deviation of sqrt(8 × 0.01 / 7), over sqrt(8).
		{"blocks alternate", 16, func(r int) time.Duration {
			if r/2%2 == 1 {
				return 12 * ms
			}
			return 10 * ms
		}, math.Sqrt(0.08/7) / math.Sqrt(8), true},
		{"too few rounds", 15, func(int) time.Duration { return 12 * ms }, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := ratioBlocks{rounds: c.rounds}
			for r := range c.rounds {
				b.add(r, false, 10*ms)
				b.add(r, true, c.verdict(r))
			}
			got, ok := b.stdErr()
			if ok != c.ok || math.Abs(got-c.want) > 1e-12 {
				t.Errorf("stdErr = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// TestPipelineBenchmarkFiguresPerRequest: a pipeline benchmark run
// measures at least minRounds rounds whatever b.N asks (the testing
// package's first call, b.N = 1, is the whole run), so its figures per op
// must be per request to each pipeline, not the whole run's over b.N.
func TestPipelineBenchmarkFiguresPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs BenchmarkCollectorPipeline once, about 12 s")
	}
	benchmem := flag.Lookup("test.benchmem")
	was := benchmem.Value.String()
	if err := benchmem.Value.Set("true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = benchmem.Value.Set(was) })
	r := testing.Benchmark(BenchmarkCollectorPipeline)
	if r.N == 0 {
		t.Fatal("the benchmark failed")
	}
	// One request to each pipeline costs about 1 ms, 650 KB and 6,700
	// allocations; the whole run's over b.N = 1 would be thousands of times
	// that.
	for _, c := range []struct {
		unit string
		most float64
	}{{"ns/op", 1e8}, {"B/op", 1e7}, {"allocs/op", 1e5}} {
		if got := r.Extra[c.unit]; got <= 0 || got > c.most {
			t.Errorf("%s = %v over %d iterations; want a figure per request, above 0 and at most %v", c.unit, got, r.N, c.most)
		}
	}
}
