package load

import (
	"fmt"
	"os"
	"regexp"

	"github.com/google/pprof/profile"
)

// Where a collector's CPU goes: each sample of its CPU profile is given to
// one part of the work, the first part in Parts that any frame of its
// stack belongs to, so every sample is counted once and the parts add up
// to the whole. The order is the precedence: the garbage collector's
// assists run inside whatever allocated, a storage commit inside a
// request, so the narrower part comes first.
type Part struct {
	Name   string
	frames *regexp.Regexp // a function name of the part
	// except, when set, is a function name that keeps a stack out of the
	// part even where frames matches: file_storage's commit is a storage
	// commit under a component, the sending queue's under an exporter.
	except *regexp.Regexp
}

// Parts are the parts a breakdown tells apart, most specific first; a
// sample none of them claims is "the rest" (the scheduler, timers, the
// collector's own telemetry outside a request).
var Parts = []Part{
	{Name: "garbage collector", frames: regexp.MustCompile(`^runtime\.(gcBgMarkWorker|gcAssistAlloc|bgsweep|bgscavenge)$`)},
	{Name: "Prometheus scrapes", frames: regexp.MustCompile(`promhttp\.|prometheus\.\(\*Registry\)\.Gather`)},
	{Name: "counts handed on (into the Prometheus exporter)", frames: regexp.MustCompile(`verdictcountconnector\.\(\*committedCounts\)\.(flush|deliver)$`)},
	{Name: "verdict file: JSON encoding", frames: regexp.MustCompile(`verdictexporter\.appendJSON$`)},
	{Name: "verdict file and page", frames: regexp.MustCompile(`verdictexporter\.\(\*verdictExporter\)\.ConsumeTraces$`)},
	{Name: "counting (the count connector)", frames: regexp.MustCompile(`verdictcountconnector\.`)},
	// file_storage and bbolt: how a build before shared_storage committed
	// (a database for each component that kept state).
	{Name: "storage commit", frames: regexp.MustCompile(`sharedstorage\.|verdictprocessor/internal/persist\.|filestorage\.|go\.etcd\.io/bbolt`), except: regexp.MustCompile(`exporterhelper/`)},
	{Name: "verdict spans", frames: regexp.MustCompile(`verdictprocessor\.\(\*verdictProcessor\)\.verdictBatch$`)},
	{Name: "verdict processor: read, hold, decide, settle", frames: regexp.MustCompile(`percause/processors/`)},
	{Name: "memory_limiter", frames: regexp.MustCompile(`memorylimiterprocessor\.|processorhelper\.`)},
	{Name: "batch processor and debug exporter", frames: regexp.MustCompile(`batchprocessor\.|debugexporter\.`)},
	{Name: "sending queue in file_storage", frames: regexp.MustCompile(`exporterhelper/|filestorage\.|go\.etcd\.io/bbolt`)},
	{Name: "receiver, HTTP and protobuf", frames: regexp.MustCompile(`^net/http\.|otlpreceiver|confighttp|collector/pdata/`)},
}

// RestPart names what no part claims.
const RestPart = "the rest"

// Share is one part's CPU in a profile.
type Share struct {
	Part     string  `json:"part"`
	Seconds  float64 `json:"seconds"`
	Fraction float64 `json:"fraction"` // of the profile's CPU
}

// Breakdown reads the CPU profile at path and gives each part of Parts,
// then the rest, its share; the shares add up to the profile's CPU.
func Breakdown(path string) ([]Share, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("load: %s: %w", path, err)
	}
	return breakdownOf(p)
}

func breakdownOf(p *profile.Profile) ([]Share, error) {
	cpu := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("load: not a CPU profile (no cpu/nanoseconds samples)")
	}
	// Which parts each function belongs to, and which it keeps a stack out
	// of, as bits, found once a function.
	type membership struct{ in, out uint64 }
	member := map[uint64]membership{}
	partsOf := func(fn *profile.Function) membership {
		if m, ok := member[fn.ID]; ok {
			return m
		}
		var m membership
		for i, part := range Parts {
			if part.frames.MatchString(fn.Name) {
				m.in |= 1 << i
			}
			if part.except != nil && part.except.MatchString(fn.Name) {
				m.out |= 1 << i
			}
		}
		member[fn.ID] = m
		return m
	}
	ns := make([]int64, len(Parts)+1) // the last: the rest
	var total int64
	for _, s := range p.Sample {
		var in, out uint64
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil {
					m := partsOf(line.Function)
					in, out = in|m.in, out|m.out
				}
			}
		}
		in &^= out
		i := len(Parts)
		for j := range Parts {
			if in&(1<<j) != 0 {
				i = j
				break
			}
		}
		ns[i] += s.Value[cpu]
		total += s.Value[cpu]
	}
	shares := make([]Share, 0, len(ns))
	for i, v := range ns {
		name := RestPart
		if i < len(Parts) {
			name = Parts[i].Name
		}
		sh := Share{Part: name, Seconds: float64(v) / 1e9}
		if total > 0 {
			sh.Fraction = float64(v) / float64(total)
		}
		shares = append(shares, sh)
	}
	return shares, nil
}
