package load

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// TestBreakdownGivesEachSampleToItsFirstPart: a CPU profile written and
// read back; each sample goes to the first part of Parts that any frame of
// its stack belongs to (a garbage collector's assist inside the verdict
// file's write is the collector's; the write inside a request is the
// verdict file's, not the receiver's), a stack no part claims goes to the
// rest, and the parts add up to the profile.
func TestBreakdownGivesEachSampleToItsFirstPart(t *testing.T) {
	const (
		serve    = "net/http.(*conn).serve"
		consume  = "github.com/percause/percause/processors/verdictprocessor.(*verdictProcessor).ConsumeTraces"
		file     = "github.com/percause/percause/components/verdictexporter.(*verdictExporter).ConsumeTraces"
		assist   = "runtime.gcAssistAlloc"
		schedule = "runtime.schedule"
	)
	p := cpuProfile(map[int64][]string{
		30e6: {file, consume, serve},
		10e6: {assist, file, consume, serve},
		20e6: {consume, serve},
		25e6: {serve},
		15e6: {schedule},
	})
	path := filepath.Join(t.TempDir(), "x.cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	shares, err := Breakdown(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) != len(Parts)+1 || shares[len(Parts)].Part != RestPart {
		t.Fatalf("%d shares, the last %q: want one a part and the rest last", len(shares), shares[len(shares)-1].Part)
	}
	want := map[string]float64{
		"garbage collector":                             0.010,
		"verdict file and page":                         0.030,
		"verdict processor: read, hold, decide, settle": 0.020,
		"receiver, HTTP and protobuf":                   0.025,
		RestPart:                                        0.015,
	}
	var seconds, fraction float64
	for _, sh := range shares {
		seconds += sh.Seconds
		fraction += sh.Fraction
		if got, w := sh.Seconds, want[sh.Part]; !near(got, w) {
			t.Errorf("%s: %.3f s, want %.3f", sh.Part, got, w)
		}
	}
	if !near(seconds, 0.100) || !near(fraction, 1) {
		t.Errorf("the parts add up to %.3f s and %.3f of the profile, want 0.100 s and 1", seconds, fraction)
	}
}

// TestBreakdownRefusesAProfileWithoutCPU: a heap profile has no CPU to
// break down.
func TestBreakdownRefusesAProfileWithoutCPU(t *testing.T) {
	p := cpuProfile(map[int64][]string{1: {"main.main"}})
	p.SampleType = []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}
	if _, err := breakdownOf(p); err == nil {
		t.Fatal("a heap profile broken down without an error")
	}
}

// cpuProfile is a CPU profile with one sample of each value, whose stack
// is the functions named, leaf first.
func cpuProfile(samples map[int64][]string) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1e7,
	}
	funcs := map[string]*profile.Location{}
	for ns, stack := range samples {
		s := &profile.Sample{Value: []int64{ns / 1e7, ns}}
		for _, name := range stack {
			loc, ok := funcs[name]
			if !ok {
				fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
				p.Function = append(p.Function, fn)
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
				p.Location = append(p.Location, loc)
				funcs[name] = loc
			}
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
