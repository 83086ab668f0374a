package load_test

import (
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// TestBreakdownGivesEachSampleToItsFirstPart: a CPU profile written and
// read back; each sample goes to the first part of Parts that any frame of
// its stack belongs to (a garbage collector's assist inside the verdict
// file's write is the collector's; the write inside a request is the
// verdict file's, not the receiver's; its JSON encoding is a part of its
// own; a bbolt commit of file_storage under the processor is a storage
// commit, as an earlier build made it, and under an exporter's sending
// queue is the queue's), a stack no part claims goes to the rest, and the
// parts add up to the profile.
func TestBreakdownGivesEachSampleToItsFirstPart(t *testing.T) {
	const (
		serve    = "net/http.(*conn).serve"
		consume  = "github.com/percause/percause/processors/verdictprocessor.(*verdictProcessor).ConsumeTraces"
		file     = "github.com/percause/percause/components/verdictexporter.(*verdictExporter).ConsumeTraces"
		encode   = "github.com/percause/percause/components/verdictexporter.appendJSON"
		assist   = "runtime.gcAssistAlloc"
		schedule = "runtime.schedule"
		bbolt    = "go.etcd.io/bbolt.(*Tx).Commit"
		fstore   = "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage.(*fileStorageClient).Batch"
		queue    = "go.opentelemetry.io/collector/exporter/exporterhelper/internal/queue.(*persistentQueue[...]).Offer"
	)
	p := testenv.CPUProfile(map[int64][]string{
		30e6: {file, consume, serve},
		5e6:  {encode, file, consume, serve},
		10e6: {assist, encode, file, consume, serve},
		20e6: {consume, serve},
		25e6: {serve},
		15e6: {schedule},
		40e6: {bbolt, fstore, consume, serve},
		35e6: {bbolt, fstore, queue, serve},
	})
	path := filepath.Join(t.TempDir(), "x.cpu.pprof")
	testenv.WriteProfile(t, path, p)
	shares, err := load.Breakdown(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) != len(load.Parts)+1 || shares[len(load.Parts)].Part != load.RestPart {
		t.Fatalf("%d shares, the last %q: want one a part and the rest last", len(shares), shares[len(shares)-1].Part)
	}
	want := map[string]float64{
		"garbage collector":                             0.010,
		"verdict file: JSON encoding":                   0.005,
		"verdict file and page":                         0.030,
		"verdict processor: read, hold, decide, settle": 0.020,
		"receiver, HTTP and protobuf":                   0.025,
		"storage commit":                                0.040,
		"sending queue in file_storage":                 0.035,
		load.RestPart:                                   0.015,
	}
	var seconds, fraction float64
	for _, sh := range shares {
		seconds += sh.Seconds
		fraction += sh.Fraction
		if got, w := sh.Seconds, want[sh.Part]; !near(got, w) {
			t.Errorf("%s: %.3f s, want %.3f", sh.Part, got, w)
		}
	}
	if !near(seconds, 0.180) || !near(fraction, 1) {
		t.Errorf("the parts add up to %.3f s and %.3f of the profile, want 0.180 s and 1", seconds, fraction)
	}
}

// TestBreakdownRefusesAProfileWithoutCPU: a heap profile has no CPU to
// break down.
func TestBreakdownRefusesAProfileWithoutCPU(t *testing.T) {
	p := testenv.CPUProfile(map[int64][]string{1: {"main.main"}})
	p.SampleType = []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}
	path := filepath.Join(t.TempDir(), "x.heap.pprof")
	testenv.WriteProfile(t, path, p)
	if _, err := load.Breakdown(path); err == nil {
		t.Fatal("a heap profile broken down without an error")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
