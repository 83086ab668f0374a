package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/load"
)

func init() {
	register(subcommand{
		name:    "load",
		summary: "realistic turns from N installations into a collector; checks every turn was counted exactly once",
		run: func(ctx context.Context, args []string) int {
			return runLoad(ctx, args, os.Stdout, os.Stderr)
		},
	})
}

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o load.Options
	var t load.Target
	otlp := fs.String("otlp", "", "a running collector's OTLP/HTTP base URL, e.g. http://127.0.0.1:4318 (default: start one on the embedded config in a temporary folder)")
	fs.StringVar(&t.PromURL, "prom", "", "its Prometheus endpoint, e.g. http://127.0.0.1:9464/metrics, to check the counts (with --otlp)")
	fs.IntVar(&t.Pid, "pid", 0, "its process id, to report CPU per span and memory (with --otlp)")
	fs.StringVar(&t.Token, "token", "", "a bearer token to send (a collector behind bearertokenauth)")
	fs.IntVar(&o.Installations, "installations", 100, "phones sending turns")
	fs.IntVar(&o.Turns, "turns", 1000, "turns to send")
	fs.IntVar(&o.RelaunchEvery, "relaunch-every", 5, "turns per launch of a phone (0: never relaunch)")
	fs.IntVar(&o.Concurrency, "concurrency", 8, "turns in flight at once")
	fs.Float64Var(&o.Rate, "rate", 0, "turns per second (0: as fast as the collector accepts them)")
	seed := fs.Uint64("seed", 1, "seed of the generated fleet")
	fs.IntVar(&o.Probe, "probe", 100, "turns sent after the run and timed until counted (0: none)")
	fs.DurationVar(&o.Timeout, "timeout", 60*time.Second, "how long the counts may take to be exact")
	compare := fs.Bool("compare", false, "start the default collector and a stock pass-through (OTLP → batch → debug) and compare their CPU per span on the same turns")
	compareFsync := fs.Bool("compare-fsync", false, "start the default collector twice, file_storage's fsync off and on (PERCAUSE_FSYNC), and compare their CPU per span and request latency on the same turns")
	rounds := fs.Int("rounds", 10, "with --compare or --compare-fsync: rounds alternating which collector goes first")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause load [--installations N] [--turns N] [--relaunch-every N] [--concurrency N] [--otlp URL --prom URL --pid N] [--compare | --compare-fsync] [--json]")
		fmt.Fprintln(stderr, "Sends realistic voice turns (a voice.turn with its units from the phone, the takes from the engine, in")
		fmt.Fprintln(stderr, "separate requests in either order, each built to fire one known cause), retries what is refused, and")
		fmt.Fprintln(stderr, "checks percause_turns_total by cause on the Prometheus endpoint exactly. Exits 1 if a count differs.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	o.Seed = *seed
	switch {
	case o.Turns <= 0 || o.Installations <= 0 || o.Concurrency <= 0 || o.RelaunchEvery < 0 || o.Probe < 0 || o.Rate < 0 || *rounds <= 0:
		fmt.Fprintln(stderr, "load: --turns, --installations, --concurrency and --rounds must be positive; --relaunch-every, --probe and --rate not negative")
		return 2
	case (*compare || *compareFsync) && *otlp != "":
		fmt.Fprintln(stderr, "load: --compare and --compare-fsync start their own collectors; leave out --otlp")
		return 2
	case *compare && *compareFsync:
		fmt.Fprintln(stderr, "load: --compare or --compare-fsync, not both")
		return 2
	case *otlp == "" && (t.PromURL != "" || t.Pid != 0):
		fmt.Fprintln(stderr, "load: --prom and --pid describe the collector given with --otlp")
		return 2
	}

	// Without --otlp the default collector runs here, in a temporary folder,
	// on this very binary (with --compare, beside the pass-through).
	var dir, self string
	var def *load.Collector
	if *otlp == "" {
		var err error
		if dir, err = os.MkdirTemp("", "percause-load-"); err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if self, err = os.Executable(); err != nil {
			fmt.Fprintf(stderr, "load: finding this binary to start a collector: %v\n", err)
			return 1
		}
		name, env := "default", []string(nil)
		if *compareFsync {
			name, env = "fsync-off", []string{collectorconfig.EnvFsync + "=false"}
		}
		if def, err = load.StartCollector(ctx, self, name, dir+"/"+name, nil, env...); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer def.Stop()
	}

	if *compareFsync {
		on, err := load.StartCollector(ctx, self, "fsync-on", dir+"/fsync-on", nil, collectorconfig.EnvFsync+"=true")
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer on.Stop()
		sides, turns, err := load.SideBySide(ctx, []*load.Collector{def, on}, o, *rounds)
		if err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		if *asJSON {
			_ = json.NewEncoder(stdout).Encode(map[string]any{"turns": turns, "concurrency": o.Concurrency, "sides": sides})
		} else {
			fmt.Fprintf(stdout, "%d turns to each, %d in flight, in %d rounds alternating which goes first (file_storage fsync off, then on)\n", turns, o.Concurrency, *rounds)
			fmt.Fprintf(stdout, "  %-10s %12s %15s %15s %8s %8s %6s\n", "", "CPU-µs/span", "request p50 ms", "request p99 ms", "turns/s", "refused", "exact")
			for _, sd := range sides {
				fmt.Fprintf(stdout, "  %-10s %12.2f %15.2f %15.2f %8.0f %8d %6s\n", sd.Name, sd.CPUPerSpan, sd.RequestP50Ms, sd.RequestP99Ms, sd.TurnsPerSec, sd.Refused, yesNo(sd.Exact))
			}
			if off, on := sides[0], sides[1]; off.CPUPerSpan > 0 && off.RequestP50Ms > 0 && off.RequestP99Ms > 0 && off.TurnsPerSec > 0 {
				fmt.Fprintf(stdout, "  %-10s %12.2f %15.2f %15.2f %8.2f\n", "on/off", on.CPUPerSpan/off.CPUPerSpan,
					on.RequestP50Ms/off.RequestP50Ms, on.RequestP99Ms/off.RequestP99Ms, on.TurnsPerSec/off.TurnsPerSec)
			}
		}
		for _, sd := range sides {
			if !sd.Exact {
				return 1
			}
		}
		return 0
	}

	if *compare {
		passCfg := dir + "/passthrough.yaml"
		if err := os.WriteFile(passCfg, load.Passthrough, 0o644); err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		pass, err := load.StartCollector(ctx, self, "passthrough", dir+"/passthrough", []string{passCfg})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer pass.Stop()
		cmp, err := load.Compare(ctx, def, pass, o, *rounds)
		if err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		if *asJSON {
			_ = json.NewEncoder(stdout).Encode(cmp)
		} else {
			fmt.Fprintf(stdout, "%d turns (%d spans) to each, in %d rounds alternating which goes first\n", cmp.Turns, cmp.Spans, *rounds)
			fmt.Fprintf(stdout, "  default (embedded local.yaml)         %6.2f CPU-µs per span\n", cmp.DefaultCPUPerSp)
			fmt.Fprintf(stdout, "  stock pass-through (batch → debug)    %6.2f CPU-µs per span\n", cmp.PassCPUPerSpan)
			fmt.Fprintf(stdout, "  ratio                                 %6.2f\n", cmp.Ratio)
			fmt.Fprintf(stdout, "  request p99: default %.2f ms, pass-through %.2f ms\n", cmp.DefaultP99Ms, cmp.PassP99Ms)
			fmt.Fprintf(stdout, "  default counted every turn exactly:   %v\n", yesNo(cmp.Exact))
			for _, d := range cmp.Differences {
				fmt.Fprintf(stdout, "    %s\n", d)
			}
		}
		if !cmp.Exact {
			return 1
		}
		return 0
	}

	if def != nil {
		t.TracesURL, t.PromURL, t.Pid = def.TracesURL, def.PromURL, def.Pid()
	} else {
		t.TracesURL = strings.TrimSuffix(*otlp, "/") + "/v1/traces"
	}
	r, err := load.Drive(ctx, t, o)
	if err != nil {
		fmt.Fprintf(stderr, "load: %v\n", err)
		return 1
	}
	if *asJSON {
		_ = json.NewEncoder(stdout).Encode(r)
	} else {
		printReport(stdout, r)
	}
	if t.PromURL != "" && (!r.Exact || (o.Probe > 0 && !r.ProbeExact)) {
		return 1
	}
	return 0
}

func printReport(w io.Writer, r load.Report) {
	fmt.Fprintf(w, "%d turns (%d spans, %d requests) from %d installations in %d launches, %.1f s (%.0f turns/s)\n",
		r.Turns, r.Spans, r.Requests, r.Installations, r.Launches, r.Seconds, r.TurnsPerSec)
	fmt.Fprintf(w, "  refused and sent again: %d; no answer and sent again: %d\n", r.Refused, r.Failed)
	causes := make([]string, 0, len(r.Sent))
	for c := range r.Sent {
		causes = append(causes, c)
	}
	sort.Strings(causes)
	for _, c := range causes {
		fmt.Fprintf(w, "  %-10s sent %6d  counted %6.0f\n", c, r.Sent[c], r.Counted[c])
	}
	if r.Counted != nil {
		fmt.Fprintf(w, "  counted every turn exactly once: %s (%d series of percause_turns_total)\n", yesNo(r.Exact), r.Series)
		for _, d := range r.Differences {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	fmt.Fprintf(w, "  request latency (send to 2xx): p50 %.2f ms, p99 %.2f ms\n", r.RequestP50Ms, r.RequestP99Ms)
	if r.CPUPerSpan > 0 {
		fmt.Fprintf(w, "  collector CPU %.2f µs per span; RSS %d MiB (peak %d MiB)\n", r.CPUPerSpan, r.RSS>>20, r.PeakRSS>>20)
	}
	if r.ProbeTurns > 0 {
		fmt.Fprintf(w, "  %d more turns afterwards counted within %.2f s: %s\n", r.ProbeTurns, r.ProbeSeconds, yesNo(r.ProbeExact))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
