package testenv

import (
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// CPUProfile is a CPU profile with one sample of each value (CPU
// nanoseconds) whose stack is the functions named, leaf first: a profile
// the load tool's breakdown reads as it reads a collector's.
func CPUProfile(samples map[int64][]string) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1e7,
	}
	locations := map[string]*profile.Location{}
	for ns, stack := range samples {
		s := &profile.Sample{Value: []int64{ns / 1e7, ns}}
		for _, name := range stack {
			loc, ok := locations[name]
			if !ok {
				fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
				p.Function = append(p.Function, fn)
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
				p.Location = append(p.Location, loc)
				locations[name] = loc
			}
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// WriteProfile writes p to path, failing the test if it cannot.
func WriteProfile(t testing.TB, path string, p *profile.Profile) {
	t.Helper()
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
}
