package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/leaf/envvars"
	"github.com/percause/percause/internal/leaf/plural"
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
	otlp := fs.String("otlp", "", "a running collector's OTLP/HTTP base `URL`, e.g. http://127.0.0.1:4318 (default: start one on the embedded config in a temporary folder)")
	fs.StringVar(&t.PromURL, "prom", "", "its Prometheus endpoint `URL`, e.g. http://127.0.0.1:9464/metrics, to check the counts (with --otlp)")
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
	compare := fs.Bool("compare", false, "start the default collector, a stock pass-through (OTLP → batch → debug) and a durable stock peer (OTLP → otlphttp with a file_storage sending queue, to a sink served here) and compare their CPU per span and request latency on the same turns")
	compareFsync := fs.Bool("compare-fsync", false, "start the default collector twice, file_storage's fsync on and off (PERCAUSE_FSYNC), and compare their CPU per span and request latency on the same turns")
	rounds := fs.Int("rounds", 12, "with --compare or --compare-fsync: rounds rotating which collector goes first (a multiple of the collectors, 3 or 2, lets each go first as often)")
	baseline := fs.String("baseline", "", "with --compare: also start another percause binary, `BIN` (an earlier build) on its own embedded default, measured beside the others")
	variants := fs.String("variant", "", "with --compare: also start this build on the embedded default with each configuration of `FILES` layered over it (comma-separated, one collector each; collector-config/variants/ holds some), each named by its file and measured beside the others, its counts not checked: what a part or a setting costs, in one run")
	fs.IntVar(&o.Warmup, "warmup", 4000, "with --compare or --compare-fsync: turns sent to each collector before the first round, not measured: the default costs less over its first few thousand turns, while its counters' series fill, so a shorter warmup reads it low (from 1,000 installations a first 4,000 turns still read low: make compare warms up 10,000 at 64 senders)")
	profile := fs.String("profile", "", "a folder, `DIR`, to write each started collector's CPU profile (<name>.cpu.pprof, from start to a graceful stop) and heap profile at the end (<name>.heap.pprof) to, from the pprof extension on loopback")
	breakdown := fs.String("breakdown", "", "print where the CPU of each CPU profile of `FILES` went (comma-separated files --profile wrote, of this build or an earlier one), by part of the collector's work, side by side, and exit; with --turns, the turns each collector was sent in that run (its warmup's included), per span and per request sent")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause load [--installations N] [--turns N] [--relaunch-every N] [--concurrency N] [--otlp URL --prom URL --pid N] [--compare [--variant FILE] | --compare-fsync] [--profile DIR] [--json]")
		fmt.Fprintln(stderr, "       percause load --breakdown NAME.cpu.pprof[,NAME.cpu.pprof...] [--turns N] [--json]")
		fmt.Fprintln(stderr, "Sends realistic voice turns (a voice.turn with its units from the phone, the takes from the engine, in")
		fmt.Fprintln(stderr, "separate requests in either order, each built to fire one known cause), retries what is refused, and")
		fmt.Fprintln(stderr, "checks percause_turns_total by cause on the Prometheus endpoint exactly. Exits 1 if a count differs.")
		fs.PrintDefaults()
		envvars.Help(stderr, "load")
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *breakdown != "" {
		// --turns, given, is what the profiled run sent each collector; by
		// default the profiles' CPU is given in seconds.
		sent := 0
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "turns" {
				sent = o.Turns
			}
		})
		return printProfileBreakdowns(stdout, stderr, strings.Split(*breakdown, ","), sent, *asJSON)
	}
	o.Seed = *seed
	switch {
	case o.Turns <= 0 || o.Installations <= 0 || o.Concurrency <= 0 || o.RelaunchEvery < 0 || o.Probe < 0 || o.Rate < 0 || o.Warmup < 0 || *rounds <= 0:
		fmt.Fprintln(stderr, "load: --turns, --installations, --concurrency and --rounds must be positive; --relaunch-every, --probe, --rate and --warmup not negative")
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
	case *baseline != "" && !*compare:
		fmt.Fprintln(stderr, "load: --baseline is measured beside the others: it needs --compare")
		return 2
	case *variants != "" && !*compare:
		fmt.Fprintln(stderr, "load: --variant is measured beside the others: it needs --compare")
		return 2
	case *baseline != "" && *profile != "":
		fmt.Fprintln(stderr, "load: --baseline and --profile: an earlier build may have no pprof extension; profile it on its own")
		return 2
	case *profile != "" && *otlp != "":
		fmt.Fprintln(stderr, "load: --profile profiles the collectors the load tool starts; leave out --otlp (a running collector is profiled with its own pprof extension)")
		return 2
	}

	// Without --otlp the default collector runs here, in a temporary folder,
	// on this very binary (with --compare, beside its peers).
	var dir, self string
	var started []*load.Collector
	var sink *load.Sink // where the durable peer exports
	startBinary := func(bin, name string, configs []string, opts ...load.StartOption) (*load.Collector, error) {
		if *profile != "" {
			opts = append(opts, load.WithProfile(*profile))
		}
		c, err := load.StartCollector(ctx, bin, name, filepath.Join(dir, name), configs, opts...)
		if err == nil {
			started = append(started, c)
		}
		return c, err
	}
	startCollector := func(name string, configs []string, opts ...load.StartOption) (*load.Collector, error) {
		return startBinary(self, name, configs, opts...)
	}
	defer func() {
		for _, c := range started {
			c.Stop()
		}
		if sink != nil {
			sink.Close() // after the peer, which exports to it until it stops
		}
		if dir != "" {
			os.RemoveAll(dir) // once nothing runs in it
		}
	}()
	var def *load.Collector
	if *otlp == "" {
		var err error
		if dir, err = os.MkdirTemp("", "percause-load-"); err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		if self, err = os.Executable(); err != nil {
			fmt.Fprintf(stderr, "load: finding this binary to start a collector: %v\n", err)
			return 1
		}
		name, env := "default", []string(nil)
		if *compareFsync {
			name, env = "fsync-on", []string{collectorconfig.EnvFsync + "=true"}
		}
		if def, err = startCollector(name, nil, load.WithEnv(env...)); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}

	if *compare || *compareFsync {
		cs := []*load.Collector{def}
		legend := "fsync-on and fsync-off: the embedded local.yaml with file_storage's fsync on and off (PERCAUSE_FSYNC)"
		if *compareFsync {
			off, err := startCollector("fsync-off", nil, load.WithEnv(collectorconfig.EnvFsync+"=false"))
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			cs = append(cs, off)
		} else {
			if *baseline != "" {
				before, err := startBinary(*baseline, "before", nil)
				if err != nil {
					fmt.Fprintln(stderr, err)
					return 1
				}
				cs = append(cs, before)
			}
			vs, variantsLegend, err := startVariants(dir, *variants, startCollector)
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			cs = append(cs, vs...)
			peers, err := startPeers(dir, startCollector)
			sink = peers.sink
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			cs = append(cs, peers.pass, peers.durable)
			legend = "default: the embedded local.yaml; passthrough: OTLP → batch → debug (keeps nothing); durable: OTLP → otlphttp with its sending queue in file_storage (stored before the 200), exporting to a sink served here"
			if *baseline != "" {
				legend += "; before: " + *baseline + "'s own embedded default"
			}
			legend += variantsLegend
		}
		if *rounds%len(cs) != 0 {
			fmt.Fprintf(stderr, "load: %s for %s: they do not all go first equally often (a multiple of %d does)\n",
				plural.N(*rounds, "round"), plural.N(len(cs), "collector"), len(cs))
		}
		cmp, err := load.Compare(ctx, cs, o, *rounds)
		if err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		if cmp.Profiles, err = writeProfiles(ctx, started); err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		if cmp.Breakdowns, err = breakdowns(started); err != nil {
			fmt.Fprintf(stderr, "load: %v\n", err)
			return 1
		}
		if *asJSON {
			_ = json.NewEncoder(stdout).Encode(cmp)
		} else {
			printComparison(stdout, cmp, legend)
		}
		if !cmp.Exact() {
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
	if r.Profiles, err = writeProfiles(ctx, started); err != nil {
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
	fmt.Fprintf(w, "%s (%s, %s) from %s in %s, %.1f s (%.0f turns/s)\n",
		plural.N(r.Turns, "turn"), plural.N(r.Spans, "span"), plural.N(r.Requests, "request"),
		plural.N(r.Installations, "installation"), plural.Of(r.Launches, "launch", "launches"), r.Seconds, r.TurnsPerSec)
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
		fmt.Fprintf(w, "  counted every turn exactly once: %s (%s of percause_turns_total)\n", yesNo(r.Exact), plural.Of(r.Series, "series", "series"))
		for _, d := range r.Differences {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	fmt.Fprintf(w, "  request latency (send to 2xx): p50 %.2f ms, p99 %.2f ms\n", r.RequestP50Ms, r.RequestP99Ms)
	if r.CPUPerSpan > 0 {
		fmt.Fprintf(w, "  collector CPU %.2f µs per span; RSS %d MiB (peak %d MiB)\n", r.CPUPerSpan, r.RSS>>20, r.PeakRSS>>20)
	}
	if r.ProbeTurns > 0 {
		fmt.Fprintf(w, "  %d more %s afterwards counted within %.2f s: %s\n", r.ProbeTurns, plural.Word(r.ProbeTurns, "turn", "turns"), r.ProbeSeconds, yesNo(r.ProbeExact))
	}
	printProfiles(w, r.Profiles)
}

// startVariants starts this build once for each comma-separated file of
// list, on the embedded default (written to dir) with the file layered
// over it, named by the file without its extension, and returns them with
// the legend's words for them. A variant may leave out what counts (a
// processor alone), so its counts are not checked.
func startVariants(dir, list string, start func(string, []string, ...load.StartOption) (*load.Collector, error)) ([]*load.Collector, string, error) {
	if list == "" {
		return nil, "", nil
	}
	local, err := load.WriteEmbeddedDefault(dir)
	if err != nil {
		return nil, "", err
	}
	taken := map[string]bool{"default": true, "passthrough": true, "durable": true, "before": true}
	var vs []*load.Collector
	var legend string
	for _, f := range strings.Split(list, ",") {
		abs, err := filepath.Abs(f)
		if err != nil {
			return vs, legend, fmt.Errorf("load: --variant %s: %w", f, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return vs, legend, fmt.Errorf("load: --variant: %w", err)
		}
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if taken[name] {
			return vs, legend, fmt.Errorf("load: --variant %s: another collector of this run is named %q; rename the file", f, name)
		}
		taken[name] = true
		c, err := start(name, []string{local, abs})
		if err != nil {
			return vs, legend, err
		}
		c.PromURL = "" // it may count nothing: the default's counts are the ones checked
		vs = append(vs, c)
		legend += "; " + name + ": the embedded default with " + filepath.Base(f) + " layered over it (counts not checked)"
	}
	return vs, legend, nil
}

// peers are the collectors --compare measures the default against.
type peers struct {
	pass, durable *load.Collector
	sink          *load.Sink
}

// startPeers starts the stock pass-through and the durable stock peer, and
// the sink the peer exports to, on loopback. The sink is returned even with
// an error, for the caller to close.
func startPeers(dir string, start func(string, []string, ...load.StartOption) (*load.Collector, error)) (peers, error) {
	var p peers
	passCfg, durableCfg := filepath.Join(dir, "passthrough.yaml"), filepath.Join(dir, "durablepeer.yaml")
	if err := os.WriteFile(passCfg, load.Passthrough, 0o644); err != nil {
		return p, fmt.Errorf("load: %w", err)
	}
	if err := os.WriteFile(durableCfg, load.DurablePeer, 0o644); err != nil {
		return p, fmt.Errorf("load: %w", err)
	}
	var err error
	if p.pass, err = start("passthrough", []string{passCfg}); err != nil {
		return p, err
	}
	p.pass.PromURL = "" // it counts nothing
	if p.sink, err = load.StartSink("127.0.0.1:0"); err != nil {
		return p, err
	}
	if p.durable, err = start("durable", []string{durableCfg}, load.WithEnv(collectorconfig.EnvTracesForward+"="+p.sink.URL)); err != nil {
		return p, err
	}
	p.durable.PromURL, p.durable.Sink = "", p.sink
	return p, nil
}

// writeProfiles, for collectors started with --profile, fetches each one's
// heap profile, stops them all gracefully (the CPU profile is written at
// the stop) and returns the files written.
func writeProfiles(ctx context.Context, cs []*load.Collector) ([]string, error) {
	var files []string
	for _, c := range cs {
		if c.PprofURL == "" {
			continue
		}
		if err := c.WriteHeapProfile(ctx); err != nil {
			return files, err
		}
		files = append(files, c.HeapProfile)
	}
	if len(files) == 0 {
		return nil, nil
	}
	for _, c := range cs {
		if err := c.Stop(); err != nil {
			return files, err
		}
		if fi, err := os.Stat(c.CPUProfile); err != nil || fi.Size() == 0 {
			return files, fmt.Errorf("the %s collector stopped without writing its CPU profile %s (its log: %s)", c.Name, c.CPUProfile, c.LogFile())
		}
		files = append(files, c.CPUProfile)
	}
	sort.Strings(files)
	return files, nil
}

// breakdowns breaks down the CPU profile of each collector that wrote one.
func breakdowns(cs []*load.Collector) ([]load.SideBreakdown, error) {
	var out []load.SideBreakdown
	for _, c := range cs {
		if c.PprofURL == "" {
			continue
		}
		shares, err := load.Breakdown(c.CPUProfile)
		if err != nil {
			return nil, err
		}
		out = append(out, load.SideBreakdown{Name: c.Name, Shares: shares})
	}
	return out, nil
}

// printProfileBreakdowns is --breakdown: the CPU profiles named, broken
// down side by side, each named by its file (without .cpu.pprof); with the
// turns each collector was sent (turns > 0), per span and per request sent.
func printProfileBreakdowns(stdout, stderr io.Writer, files []string, turns int, asJSON bool) int {
	names := map[string]int{}
	for _, f := range files {
		names[filepath.Base(f)]++
	}
	var bs []load.SideBreakdown
	for _, f := range files {
		shares, err := load.Breakdown(f)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitFailed
		}
		name := filepath.Base(f)
		if names[name] > 1 { // default.cpu.pprof of two runs: named by their folders
			name = filepath.Join(filepath.Base(filepath.Dir(f)), name)
		}
		bs = append(bs, load.SideBreakdown{Name: strings.TrimSuffix(name, ".cpu.pprof"), Shares: shares})
	}
	if asJSON {
		_ = json.NewEncoder(stdout).Encode(bs)
		return exitOK
	}
	printBreakdowns(stdout, bs, float64(turns*load.SpansPerTurn), float64(turns*load.RequestsPerTurn))
	return exitOK
}

// printBreakdowns prints the breakdowns side by side: a row for each part
// any collector spent CPU on, its CPU-µs per span and per request sent
// (with spans and requests; else its CPU seconds) and its share.
func printBreakdowns(w io.Writer, bs []load.SideBreakdown, spans, requests float64) {
	if len(bs) == 0 {
		return
	}
	unit, width := "CPU seconds", 16
	figures := func(sec float64) string { return fmt.Sprintf("%.2f", sec) }
	// The total stands under the parts' figures, not their shares.
	const shareWidth = len(" (00.0 %)")
	if spans > 0 && requests > 0 {
		unit, width = "CPU-µs per span sent, per request sent", 25
		figures = func(sec float64) string { return fmt.Sprintf("%.2f %7.1f", sec*1e6/spans, sec*1e6/requests) }
	}
	fmt.Fprintf(w, "  where the CPU went, from each profile (the whole run: warmup, settles and scrapes included), %s (share):\n", unit)
	col := " %" + strconv.Itoa(width) + "s"
	fmt.Fprintf(w, "    %-48s", "")
	for _, b := range bs {
		fmt.Fprintf(w, col, b.Name)
	}
	fmt.Fprintln(w)
	total := make([]float64, len(bs))
	for i := range bs[0].Shares {
		spent := false
		for _, b := range bs {
			spent = spent || b.Shares[i].Seconds > 0
		}
		if !spent {
			continue
		}
		fmt.Fprintf(w, "    %-48s", bs[0].Shares[i].Part)
		for j, b := range bs {
			sh := b.Shares[i]
			total[j] += sh.Seconds
			fmt.Fprintf(w, col, fmt.Sprintf("%s (%4.1f %%)", figures(sh.Seconds), 100*sh.Fraction))
		}
		fmt.Fprintln(w)
	}
	all := fmt.Sprintf("    %-48s", "all")
	for _, t := range total {
		f := figures(t)
		all += fmt.Sprintf(col, fmt.Sprintf("%-*s", len(f)+shareWidth, f))
	}
	fmt.Fprintln(w, strings.TrimRight(all, " "))
}

func printProfiles(w io.Writer, files []string) {
	if len(files) == 0 {
		return
	}
	fmt.Fprintln(w, "  profiles, from each collector's start to its stop (the figures above include the profiler's own cost; go tool pprof -top FILE):")
	for _, f := range files {
		fmt.Fprintf(w, "    %s\n", f)
	}
}

// printComparison prints a side-by-side run as a table: each collector,
// then the first one's ratio to each other.
func printComparison(w io.Writer, cmp load.Comparison, legend string) {
	fmt.Fprintf(w, "%s side by side: %s (%s) to each after %d to warm up, %s (--concurrency), %s rotating which goes first\n",
		plural.N(len(cmp.Sides), "collector"), plural.N(cmp.Turns, "turn"), plural.N(cmp.Spans, "span"), cmp.Warmup,
		plural.N(cmp.Concurrency, "sender"), plural.N(cmp.Rounds, "round"))
	fmt.Fprintf(w, "machine: %d CPUs, load average %.2f before, %.2f after\n", cmp.Machine.CPUs, cmp.Machine.LoadBefore, cmp.Machine.LoadAfter)
	if cmp.Machine.CPUs > 0 && cmp.Machine.LoadBefore > float64(cmp.Machine.CPUs) {
		fmt.Fprintln(w, "  (busy before the run: each collector's CPU is its own, but what it costs shifts with what else runs; read the ratios, and how far the rounds spread)")
	}
	// The first column is as wide as its longest label (a variant's ratio
	// may be longer than default/passthrough).
	width := 20
	for _, r := range cmp.Ratios {
		width = max(width, utf8.RuneCountInString(r.Of+"/"+r.To))
	}
	row := "  %-" + strconv.Itoa(width) + "s %11s %13s %8s %10s %10s %8s %8s %11s %11s %6s\n"
	fmt.Fprintf(w, row, "", "CPU-µs/span", "rounds", "outside", "req p50 ms", "req p99 ms", "turns/s", "refused", "alloc KB/sp", "commits/req", "exact")
	for _, s := range cmp.Sides {
		lo, hi := load.MinMax(s.RoundCPUPerSpan)
		exact := "-"
		if s.Checked {
			exact = yesNo(s.Exact)
		}
		alloc := "-"
		if s.AllocPerSpan > 0 {
			alloc = fmt.Sprintf("%.1f", s.AllocPerSpan/1024)
		}
		commits := "-"
		if s.CommitsPerRequest > 0 {
			commits = fmt.Sprintf("%.3f", s.CommitsPerRequest)
		}
		fmt.Fprintf(w, row, s.Name, f2(s.CPUPerSpan), f2(lo)+"–"+f2(hi), f2(s.OutsideCPUPerSpan), f2(s.RequestP50Ms), f2(s.RequestP99Ms),
			fmt.Sprintf("%.0f", s.TurnsPerSec), fmt.Sprint(s.Refused), alloc, commits, exact)
	}
	for _, r := range cmp.Ratios {
		fmt.Fprintf(w, row, r.Of+"/"+r.To, f2(r.CPUPerSpan), f2(r.RoundsMin)+"–"+f2(r.RoundsMax), "", f2(r.RequestP50Ms), f2(r.RequestP99Ms), f2(r.TurnsPerSec), "", "", "", "")
	}
	fmt.Fprintf(w, "  %s\n", legend)
	fmt.Fprintln(w, "  rounds: the least and greatest of one round; outside: CPU between the collector's rounds, per span (background, or work left after the settle)")
	fmt.Fprintln(w, "  commits/req: the shared store's transactions over the rounds, per request accepted (- without shared_storage)")
	for _, s := range cmp.Sides {
		for _, d := range s.Differences {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, d)
		}
	}
	printProfiles(w, cmp.Profiles)
	printBreakdowns(w, cmp.Breakdowns, cmp.SpansSent(), cmp.RequestsSent())
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
