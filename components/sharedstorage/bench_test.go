package sharedstorage

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
)

// requestOps are what one accepted request changes, roughly: the verdict
// processor's held turn (two stored traces of about 700 bytes), a chunk
// of the decided ring and its index, a trace let go; the count
// connector's two verdict IDs. Keys cycle over 4,096 requests, so the
// database stays the size of a bounded working set.
func requestOps(i int) (processor, connector []*storage.Operation) {
	n := uint64(i % 4096)
	key := func(tag byte, v uint64) string {
		b := make([]byte, 9)
		b[0] = tag
		binary.BigEndian.PutUint64(b[1:], v)
		return string(b)
	}
	trace := make([]byte, 700)
	chunk := make([]byte, 1024)
	processor = []*storage.Operation{
		storage.SetOperation(key('p', 2*n), trace),
		storage.SetOperation(key('p', 2*n+1), trace),
		storage.SetOperation(key('d', n/64), chunk),
		storage.SetOperation("m", make([]byte, 17)),
		storage.DeleteOperation(key('p', 2*((n+2048)%4096))),
	}
	connector = []*storage.Operation{
		storage.SetOperation(key('v', 2*n), []byte{1}),
		storage.SetOperation(key('v', 2*n+1), []byte{1}),
	}
	return processor, connector
}

// BenchmarkCommitTwoComponents: one request's state of two components
// (the verdict processor's and the count connector's), stored three
// ways, beside the processor's state alone, interleaved in blocks of
// requests within one run so that a machine shared with others weighs on
// each the same:
//   - file_storage/processor_only: the processor's own database, one
//     transaction, the connector keeping nothing (the baseline);
//   - file_storage: each component its own database, two transactions;
//   - shared_storage/two_batches: one database, each component its own
//     Batch, two transactions;
//   - shared_storage/staged: the connector stages, the processor's Batch
//     carries it, one transaction (the bbolt engine);
//   - shared_storage/log_staged: the same on the log engine, the
//     default: one record appended;
//   - shared_storage/pebble_staged: the same on the pebble engine: one
//     Pebble batch, committed as the engine does with fsync off
//     (pebble.Sync, its write-ahead log written and never flushed);
//   - shared_storage/pebble_nosync_staged: the same committed with
//     pebble.NoSync, what the engine does not do (a kill loses what
//     Pebble had not yet written; pebblestore.go), for its cost.
//
// For each: cpu-µs/req, the process's CPU per request (user and system,
// the garbage collector's included), µs/req its time, commits/req, and
// B/req and allocs/req, what the heap allocated; and the CPU ratios of
// staged and log_staged to file_storage, and of the pebble variants to
// log_staged. An op is one block.
func BenchmarkCommitTwoComponents(b *testing.B) {
	ctx := context.Background()
	type variant struct {
		name      string
		run       func(i int) error
		commits   func() float64
		cpu, wall time.Duration
		n         int
		heap      heapAllocs
	}

	fsProc := openFileStorage(b, b.TempDir(), component.KindProcessor, verdictID, "")
	dir := b.TempDir()
	fsTwoProc := openFileStorage(b, dir, component.KindProcessor, verdictID, "")
	fsTwoCount := openFileStorage(b, dir, component.KindConnector, countID, "")
	b.Cleanup(func() { fsProc.close(b); fsTwoProc.close(b); fsTwoCount.close(b) })
	sharedOn := func(engine string) (h *harness, proc, count Client) {
		h = start(b, b.TempDir(), func(c *Config) { c.StageFlush, c.Engine = time.Hour, engine })
		return h, h.client(component.KindProcessor, verdictID, ""), h.client(component.KindConnector, countID, "")
	}
	two, twoProc, twoCount := sharedOn(EngineBbolt)
	staged, stagedProc, stagedCount := sharedOn(EngineBbolt)
	logged, loggedProc, loggedCount := sharedOn(EngineLog)
	pebbled, pebbledProc, pebbledCount := sharedOn(EnginePebble)
	noSync, err := pebbleOpening{dir: b.TempDir(), name: "shared_storage", noSync: true}.open()
	if err != nil {
		b.Fatal(err)
	}
	noSyncDB, noSyncProc, noSyncCount := bareDatabase(b, noSync)
	twoBefore, stagedBefore, loggedBefore, pebbledBefore := two.commits(), staged.commits(), logged.commits(), pebbled.commits()
	var stagedErr error
	stage := func(proc, count Client, i int) error {
		p, c := requestOps(i)
		count.Stage(c, func(err error) {
			if err != nil {
				stagedErr = err
			}
		})
		return proc.Batch(ctx, p...)
	}

	var variants []*variant
	perReq := func(h *harness, before int64, v **variant) func() float64 {
		return func() float64 { return float64(h.commits()-before) / float64((*v).n) }
	}
	fixed := func(n float64) func() float64 { return func() float64 { return n } }
	variants = []*variant{
		{name: "file_storage/processor_only", commits: fixed(1), run: func(i int) error {
			p, _ := requestOps(i)
			return fsProc.Batch(ctx, p...)
		}},
		{name: "file_storage", commits: fixed(2), run: func(i int) error {
			p, c := requestOps(i)
			if err := fsTwoProc.Batch(ctx, p...); err != nil {
				return err
			}
			return fsTwoCount.Batch(ctx, c...)
		}},
		{name: "shared_storage/two_batches", run: func(i int) error {
			p, c := requestOps(i)
			if err := twoCount.Batch(ctx, c...); err != nil {
				return err
			}
			return twoProc.Batch(ctx, p...)
		}},
		{name: "shared_storage/staged", run: func(i int) error { return stage(stagedProc, stagedCount, i) }},
		{name: "shared_storage/log_staged", run: func(i int) error { return stage(loggedProc, loggedCount, i) }},
		{name: "shared_storage/pebble_staged", run: func(i int) error { return stage(pebbledProc, pebbledCount, i) }},
		{name: "shared_storage/pebble_nosync_staged", run: func(i int) error { return stage(noSyncProc, noSyncCount, i) }},
	}
	variants[2].commits = perReq(two, twoBefore, &variants[2])
	variants[3].commits = perReq(staged, stagedBefore, &variants[3])
	variants[4].commits = perReq(logged, loggedBefore, &variants[4])
	variants[5].commits = perReq(pebbled, pebbledBefore, &variants[5])
	variants[6].commits = func() float64 { return float64(noSyncDB.commits()) / float64(variants[6].n) }

	const block = 64
	b.ReportAllocs()
	for k := 0; b.Loop(); k++ {
		v := variants[k%len(variants)]
		heap := readHeapAllocs()
		cpu, wall := processCPU(), time.Now()
		for range block {
			if err := v.run(v.n); err != nil {
				b.Fatal(err)
			}
			v.n++
		}
		v.cpu += processCPU() - cpu
		v.wall += time.Since(wall)
		v.heap = v.heap.add(readHeapAllocs().sub(heap))
	}
	if stagedErr != nil {
		b.Fatal(stagedErr)
	}
	for _, v := range variants {
		if v.n == 0 {
			return
		}
		b.ReportMetric(float64(v.cpu.Microseconds())/float64(v.n), v.name+"-cpu-µs/req")
		b.ReportMetric(float64(v.wall.Microseconds())/float64(v.n), v.name+"-µs/req")
		b.ReportMetric(v.commits(), v.name+"-commits/req")
		b.ReportMetric(float64(v.heap.bytes)/float64(v.n), v.name+"-B/req")
		b.ReportMetric(float64(v.heap.objects)/float64(v.n), v.name+"-allocs/req")
	}
	ratio := func(v, of *variant) float64 { return float64(v.cpu) / float64(of.cpu) * float64(of.n) / float64(v.n) }
	b.ReportMetric(ratio(variants[3], variants[1]), "staged/file_storage-cpu")
	b.ReportMetric(ratio(variants[4], variants[1]), "log_staged/file_storage-cpu")
	b.ReportMetric(ratio(variants[5], variants[4]), "pebble_staged/log_staged-cpu")
	b.ReportMetric(ratio(variants[6], variants[4]), "pebble_nosync_staged/log_staged-cpu")
}

// bareDatabase is the extension's database, its staging and its clients,
// over inner, without the extension around it: for a store the extension
// does not open.
// Its harness counts the commits, and has no extension.
func bareDatabase(b *testing.B, inner storage.Client) (h *harness, proc, count Client) {
	tel := componenttest.NewTelemetry()
	tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	if err != nil {
		b.Fatal(err)
	}
	db, err := newDatabase(inner, time.Hour, newTelemetry(tb))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.shutdown(context.Background()) })
	h = &harness{t: b, tel: tel}
	return h, &client{db: db, prefix: namespace(component.KindProcessor, verdictID, "")},
		&client{db: db, prefix: namespace(component.KindConnector, countID, "")}
}

// heapAllocs is what the heap has allocated: bytes and objects.
type heapAllocs struct{ bytes, objects uint64 }

var heapAllocSamples = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}}

// readHeapAllocs reads what the heap has allocated so far, without
// stopping the world (runtime.ReadMemStats would).
func readHeapAllocs() heapAllocs {
	samples := slices.Clone(heapAllocSamples)
	metrics.Read(samples)
	return heapAllocs{samples[0].Value.Uint64(), samples[1].Value.Uint64()}
}

func (a heapAllocs) add(o heapAllocs) heapAllocs {
	return heapAllocs{a.bytes + o.bytes, a.objects + o.objects}
}
func (a heapAllocs) sub(o heapAllocs) heapAllocs {
	return heapAllocs{a.bytes - o.bytes, a.objects - o.objects}
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCommitEngine: the staged request of
// BenchmarkCommitTwoComponents (the processor's batch carrying the
// connector's staged IDs, one commit), on each engine alone, fsync off
// and on: a sub-benchmark runs only its engine, so what the engine does
// in the background (Pebble's flushes and compactions, the log's
// snapshots) is counted in its own CPU, not in whichever variant ran
// beside it (but other work on the machine weighs on each sub-benchmark
// as it comes). cpu-µs/req is the process's CPU per request; an op is
// one request.
func BenchmarkCommitEngine(b *testing.B) {
	ctx := context.Background()
	for _, fsync := range []bool{false, true} {
		for _, engine := range []string{EngineLog, EnginePebble, "pebble_nosync"} {
			if fsync && engine == "pebble_nosync" {
				continue // NoSync is the no-fsync alternative only
			}
			name := engine
			if fsync {
				name += "/fsync"
			}
			b.Run(name, func(b *testing.B) {
				var proc, count Client
				if engine == "pebble_nosync" {
					s, err := pebbleOpening{dir: b.TempDir(), name: "shared_storage", noSync: true}.open()
					if err != nil {
						b.Fatal(err)
					}
					_, proc, count = bareDatabase(b, s)
				} else {
					h := start(b, b.TempDir(), func(c *Config) { c.StageFlush, c.Engine, c.FSync = time.Hour, engine, fsync })
					proc, count = h.client(component.KindProcessor, verdictID, ""), h.client(component.KindConnector, countID, "")
				}
				var stagedErr error
				b.ReportAllocs()
				cpu, wall, n := processCPU(), time.Now(), 0
				for b.Loop() {
					p, c := requestOps(n)
					count.Stage(c, func(err error) {
						if err != nil {
							stagedErr = err
						}
					})
					if err := proc.Batch(ctx, p...); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(n), "cpu-µs/req")
				b.ReportMetric(float64(time.Since(wall).Microseconds())/float64(n), "µs/req")
				if stagedErr != nil {
					b.Fatal(stagedErr)
				}
			})
		}
	}
}

// restartKeys is how many keys BenchmarkRestart's store holds: what
// 100,000 stored turns look like, each a key of the processor's
// namespace and a value of about 600 bytes.
const restartKeys = 100_000

// restartValue is key i's value: 600 bytes, varied, as encoded turns are.
func restartValue(i int) []byte {
	v := make([]byte, 600)
	x := uint64(i)*0x9e3779b97f4a7c15 + 1
	for j := 0; j < len(v); j += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(v[j:], x&0x3f3f3f3f3f3f3f3f) // text-like: about half the entropy
	}
	return v
}

func restartKey(i int) string {
	return namespace(component.KindProcessor, verdictID, "") + fmt.Sprintf("turn/%016x", uint64(i)*0x9e3779b97f4a7c15)
}

// openEngine opens the store of engine in dir as the extension does,
// fsync off.
func openEngine(engine, dir string) (interface {
	storage.Client
	storage.Walker
}, error) {
	if engine == EnginePebble {
		return openPebble(nil, dir, "shared_storage", false)
	}
	return openLog(dir, "shared_storage", false, DefaultCompactAfter, nil)
}

// fillRestart writes restartKeys keys to a new store of engine in dir,
// one commit a key, as turns are stored, and closes it.
func fillRestart(b *testing.B, engine, dir string) {
	s, err := openEngine(engine, dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := range restartKeys {
		if err := s.Set(context.Background(), restartKey(i), restartValue(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRestart: a restart of a store holding restartKeys keys of 600
// bytes, written one commit a key, on the log and on pebble: an op is
// opening it, walking every key (what the components do at start, read
// back what they kept) and closing it. open-ms and walk-ms split it;
// B/op is what the heap allocated. Then a fresh process opens and walks
// the same store and reports its memory after (restartMemory): heap-MB
// live on the heap after a collection, rss-MB the process's resident
// memory, peak-rss-MB its highest, each less the same process's
// before opening; dir-MB is the store's size on the disk.
func BenchmarkRestart(b *testing.B) {
	for _, engine := range []string{EngineLog, EnginePebble} {
		b.Run(engine, func(b *testing.B) {
			dir := b.TempDir()
			fillRestart(b, engine, dir)
			b.ReportAllocs()
			var open, walk time.Duration
			n := 0
			for b.Loop() {
				t0 := time.Now()
				s, err := openEngine(engine, dir)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				keys := 0
				if err := s.Walk(context.Background(), func(string, []byte) ([]*storage.Operation, error) {
					keys++
					return nil, nil
				}); err != nil {
					b.Fatal(err)
				}
				walk += time.Since(t1)
				open += t1.Sub(t0)
				if keys != restartKeys {
					b.Fatalf("walked %d keys, want %d", keys, restartKeys)
				}
				if err := s.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(open.Microseconds())/1e3/float64(n), "open-ms")
			b.ReportMetric(float64(walk.Microseconds())/1e3/float64(n), "walk-ms")
			m := restartMemoryOf(b, engine, dir)
			b.ReportMetric(float64(m.Heap)/(1<<20), "heap-MB")
			b.ReportMetric(float64(m.RSS)/(1<<20), "rss-MB")
			b.ReportMetric(float64(m.PeakRSS)/(1<<20), "peak-rss-MB")
			b.ReportMetric(float64(dirSize(b, dir))/(1<<20), "dir-MB")
		})
	}
}

// restartMemory is what opening and walking a store adds to a process.
type restartMemory struct{ Heap, RSS, PeakRSS int64 }

const restartChildEnv = "SHARED_STORAGE_RESTART_CHILD"

// restartMemoryOf runs TestRestartMemoryChild in a process of its own on
// the store of engine in dir.
func restartMemoryOf(b *testing.B, engine, dir string) restartMemory {
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestartMemoryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), restartChildEnv+"="+engine+":"+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("the restart's process: %v\n%s", err, out)
	}
	_, rest, ok := bytes.Cut(out, []byte("restart-memory: "))
	if !ok {
		b.Fatalf("the restart's process said nothing of its memory:\n%s", out)
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	var m restartMemory
	if err := json.Unmarshal(line, &m); err != nil {
		b.Fatalf("%v: %s", err, line)
	}
	return m
}

// TestRestartMemoryChild is BenchmarkRestart's process: it opens and
// walks the store its environment names, and prints the memory that
// added. Without that environment it is skipped.
func TestRestartMemoryChild(t *testing.T) {
	engine, dir, ok := strings.Cut(os.Getenv(restartChildEnv), ":")
	if !ok {
		t.Skip("BenchmarkRestart's process")
	}
	heap0, rss0 := liveHeap(), procStatus(t, "VmRSS")
	s, err := openEngine(engine, dir)
	if err != nil {
		t.Fatal(err)
	}
	keys := 0
	if err := s.Walk(context.Background(), func(string, []byte) ([]*storage.Operation, error) {
		keys++
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if keys != restartKeys {
		t.Fatalf("walked %d keys", keys)
	}
	m := restartMemory{Heap: liveHeap() - heap0, RSS: procStatus(t, "VmRSS") - rss0, PeakRSS: procStatus(t, "VmHWM") - rss0}
	out, _ := json.Marshal(m)
	fmt.Printf("restart-memory: %s\n", out)
	runtime.KeepAlive(s)
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// procStatus reads a size in /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// dirSize is the size of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
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
