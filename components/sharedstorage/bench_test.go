package sharedstorage

import (
	"context"
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
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
//     default: one record appended.
//
// For each: cpu-µs/req, the process's CPU per request (user and system,
// the garbage collector's included), µs/req its time, and commits/req;
// and the CPU ratios of staged and log_staged to file_storage. An op is
// one block.
func BenchmarkCommitTwoComponents(b *testing.B) {
	ctx := context.Background()
	type variant struct {
		name      string
		run       func(i int) error
		commits   func() float64
		cpu, wall time.Duration
		n         int
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
	twoBefore, stagedBefore, loggedBefore := two.commits(), staged.commits(), logged.commits()
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
	}
	variants[2].commits = perReq(two, twoBefore, &variants[2])
	variants[3].commits = perReq(staged, stagedBefore, &variants[3])
	variants[4].commits = perReq(logged, loggedBefore, &variants[4])

	const block = 64
	b.ReportAllocs()
	for k := 0; b.Loop(); k++ {
		v := variants[k%len(variants)]
		cpu, wall := processCPU(), time.Now()
		for range block {
			if err := v.run(v.n); err != nil {
				b.Fatal(err)
			}
			v.n++
		}
		v.cpu += processCPU() - cpu
		v.wall += time.Since(wall)
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
	}
	ratio := func(v, of *variant) float64 { return float64(v.cpu) / float64(of.cpu) * float64(of.n) / float64(v.n) }
	b.ReportMetric(ratio(variants[3], variants[1]), "staged/file_storage-cpu")
	b.ReportMetric(ratio(variants[4], variants[1]), "log_staged/file_storage-cpu")
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
