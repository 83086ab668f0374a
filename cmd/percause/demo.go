package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/percause/percause/lab"
	"github.com/percause/percause/lab/scenario"
)

func init() {
	register(subcommand{
		name:    "demo",
		summary: "every cause's scenario through the real pipeline, one line per turn; non-zero exit on any mismatch",
		run: func(ctx context.Context, args []string) int {
			return runDemo(ctx, args, os.Stdout, os.Stderr)
		},
	})
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("demo", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var lf labFlags
	lf.register(fset)
	hold := fset.Bool("hold", false, "keep the collector, its verdict page and its Prometheus endpoint up after the run until interrupted")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause demo [--scale F] [--hold] [--work-dir DIR]")
		fmt.Fprintln(stderr, "Starts the collector on the embedded default config (loopback only), a lab engine and a lab phone,")
		fmt.Fprintln(stderr, "runs every scenario and prints one line per turn: scenario, expected cause, verdict, evidence.")
		fset.PrintDefaults()
	}
	if code, ok := parseFlags(fset, args, stderr); !ok {
		return code
	}
	opts, err := lf.options()
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 2
	}

	// The demo starts the collector itself (unless one is given) so it can
	// say where to look, and keep it up with --hold.
	work := lf.workDir
	if work == "" {
		if work, err = os.MkdirTemp("", "percause-demo-"); err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return 1
		}
		defer os.RemoveAll(work)
	}
	opts = append(opts, lab.WithWorkDir(work))
	prom, page, verdictFile := "", "", lf.verdicts
	if lf.otlp == "" {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "demo: finding this binary to start the collector: %v\n", err)
			return 1
		}
		col, err := lab.StartCollector(ctx, self, filepath.Join(work, "collector"))
		if err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return 1
		}
		defer col.Stop()
		prom, page, verdictFile = col.Prometheus, col.Page, col.VerdictFile
		opts = append(opts, lab.WithCollector(col.OTLP, col.VerdictFile))
	}

	fmt.Fprintf(stdout, "percause demo: %d scenarios at %g× time (a person-second lasts %.0f ms)\n",
		len(scenario.All), lf.scale, 1000/lf.scale)
	opts = append(opts, lab.WithTurnHook(func(t lab.TurnResult) {
		fmt.Fprintf(stdout, "  ran %-14s turn %d  trace %s\n", t.Scenario, t.Turn, t.TraceID)
	}))
	res, err := lab.Run(ctx, scenario.All, opts...)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "demo: interrupted")
		return 130
	}
	if res != nil {
		printDemo(stdout, res, prom, page, verdictFile, lf.workDir != "" || *hold, *hold)
	}
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	if *hold && prom != "" {
		fmt.Fprintf(stdout, "holding the collector up: the verdict page is at http://%s/ ; interrupt (Ctrl-C) to stop\n", page)
		<-ctx.Done()
	}
	if res.Mismatches() > 0 {
		return 1
	}
	return 0
}

// demoLegend says how to read a verdict line, the lost-link lines above all:
// there the scenario checks the phone's status line, and the verdict is
// rightly none.
const demoLegend = `how to read a line: scenario, turn, what the scenario expects, the collector's verdict, ok or MISMATCH, the evidence.
  expected CAUSE               the primary cause the verdict must name (docs/domain.md has every rule)
  expected link STATUS         the status line the phone must have shown when the link was lost: engine_restarting
                               ("Pippa is restarting…"), device_offline ("This device is offline."). The phone decides it
                               (instr/linkstatus), not the verdict processor; the reply still played without an underrun,
                               so no rule fires and "verdict none" is right
  expected missed checks none|some
                               what the progress checks must show: the burst starves them on one shared pool of six, and
                               never with the lanes split (docs/queueing.md)
`

func printDemo(w io.Writer, res *lab.Result, prom, page, verdictFile string, kept, held bool) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "verdicts from the collector:")
	for _, t := range res.Turns {
		fmt.Fprintln(w, t.Line())
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, demoLegend)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%d turns: %d as expected, %d mismatched; %.1f s\n",
		len(res.Turns), len(res.Turns)-res.Mismatches(), res.Mismatches(), res.Wall.Seconds())
	fmt.Fprintln(w, "where to look:")
	if prom != "" {
		note := "up until the demo exits; --hold keeps it"
		if held {
			note = "up while the demo holds"
		}
		fmt.Fprintf(w, "  verdict page         http://%s/  in a browser: the done reading, turns by cause, each turn's evidence (%s)\n", page, note)
		fmt.Fprintf(w, "  Prometheus endpoint  http://%s/metrics  percause_turns_total, percause_cause_implicated_total, pippa_* (%s)\n", prom, note)
	}
	if kept {
		fmt.Fprintf(w, "  verdict file         %s\n", verdictFile)
	} else {
		fmt.Fprintln(w, "  verdict file         kept with --work-dir DIR (every percause.verdict span, OTLP JSON lines)")
	}
	fmt.Fprintln(w, "  dashboards           dashboards/ (generated by `percause dashboards`; `docker compose up` serves them in Grafana)")
	for _, f := range dashboardFiles("dashboards") {
		fmt.Fprintf(w, "                       %s\n", f)
	}
	fmt.Fprintln(w, "alerts on a phone: `percause up` runs the collector with Prometheus and Alertmanager and sends each alert to PERCAUSE_NOTIFY_URL (an ntfy topic; README, \"On a trip\")")
}

// dashboardFiles lists the generated dashboards under dir, if the demo runs
// from a checkout.
func dashboardFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".json" {
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
