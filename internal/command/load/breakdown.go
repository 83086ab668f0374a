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
}

// Parts are the parts a breakdown tells apart, most specific first; a
// sample none of them claims is "the rest" (the scheduler, timers, the
// collector's own telemetry outside a request).
var Parts = []Part{
	{"garbage collector", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|gcAssistAlloc|bgsweep|bgscavenge)$`)},
	{"Prometheus scrapes", regexp.MustCompile(`promhttp\.|prometheus\.\(\*Registry\)\.Gather`)},
	{"counts handed on (into the Prometheus exporter)", regexp.MustCompile(`verdictcountconnector\.\(\*committedCounts\)\.(flush|deliver)$`)},
	{"verdict file: JSON encoding", regexp.MustCompile(`verdictexporter\.appendJSON$`)},
	{"verdict file and page", regexp.MustCompile(`verdictexporter\.\(\*verdictExporter\)\.ConsumeTraces$`)},
	{"counting (the count connector)", regexp.MustCompile(`verdictcountconnector\.`)},
	{"storage commit", regexp.MustCompile(`sharedstorage\.|verdictprocessor/internal/persist\.`)},
	{"verdict spans", regexp.MustCompile(`verdictprocessor\.\(\*verdictProcessor\)\.verdictBatch$`)},
	{"verdict processor: read, hold, decide, settle", regexp.MustCompile(`percause/processors/`)},
	{"memory_limiter", regexp.MustCompile(`memorylimiterprocessor\.|processorhelper\.`)},
	{"batch processor and debug exporter", regexp.MustCompile(`batchprocessor\.|debugexporter\.`)},
	{"sending queue in file_storage", regexp.MustCompile(`exporterhelper/|filestorage\.|go\.etcd\.io/bbolt`)},
	{"receiver, HTTP and protobuf", regexp.MustCompile(`^net/http\.|otlpreceiver|confighttp|collector/pdata/`)},
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
	// Which parts each function belongs to, as bits, found once a function.
	member := map[uint64]uint64{}
	partsOf := func(fn *profile.Function) uint64 {
		if m, ok := member[fn.ID]; ok {
			return m
		}
		var m uint64
		for i, part := range Parts {
			if part.frames.MatchString(fn.Name) {
				m |= 1 << i
			}
		}
		member[fn.ID] = m
		return m
	}
	ns := make([]int64, len(Parts)+1) // the last: the rest
	var total int64
	for _, s := range p.Sample {
		var m uint64
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil {
					m |= partsOf(line.Function)
				}
			}
		}
		i := len(Parts)
		for j := range Parts {
			if m&(1<<j) != 0 {
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
