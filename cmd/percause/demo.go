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

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/envvars"
	"github.com/percause/percause/internal/leaf/plural"
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
		envvars.Help(stderr, "demo")
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

	fmt.Fprintf(stdout, "percause demo: %s at %g× time (a person-second lasts %.0f ms)\n",
		plural.N(len(scenario.All), "scenario"), lf.scale, 1000/lf.scale)
	opts = append(opts, lab.WithTurnHook(func(t lab.TurnResult) {
		fmt.Fprintf(stdout, "  ran %-14s turn %d  trace %s\n", t.Scenario, t.Turn, t.TraceID)
	}))
	res, err := lab.Run(ctx, scenario.All, opts...)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "demo: interrupted")
		return 130
	}
	if res != nil {
		printDemo(stdout, res, prom, page, verdictFile, lf.workDir != "", *hold)
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

// demoLegend says how to read a verdict line: every expectation the table
// can print, why some turns rightly expect none, and the detail.
var demoLegend = fmt.Sprintf(`how to read a line: scenario, turn, what the scenario expects, the collector's verdict, ok or MISMATCH, the detail.
  expected CAUSE               the primary cause the verdict must name: network, synthesis, bluetooth, wait, pool, state
                               (docs/domain.md has every rule)
  expected none                no rule may fire: a healthy turn; the turns around a fault (bluetooth's first, leak's first
                               three, before a count has risen three turns in a row, stale-pool's before and after the
                               heal); a wait the phone says on its status line that no rule reads (voice-late, held-post,
                               stale-post: the line is judged, the verdict is none); a dictation whose post left in time
  expected unknown             the rules cannot read the turn: an underrun whose take never reached the collector
                               (lost-takes: the evidence names the missing take), or bad input
  expected link STATUS         the lost-link line the phone must have shown: engine_restarting ("Pippa is restarting…"),
                               device_offline ("This device is offline."), stale_connection ("Pippa is answering on a fresh
                               connection…"). The phone decides it (instr/linkstatus), not the verdict processor; where the
                               reply still played without an underrun no rule fires, and "verdict none" is right
  expected missed checks none|some
                               what the progress checks must show: the burst starves them on one shared pool of six, and
                               never with the lanes split (docs/queueing.md)
  expected shows WAIT          a wait line the phone must show: mic_opening ("Opening the microphone…" and the stage it
                               waits for), not_sent ("not sent for 4s (6 other calls open)"), voice_late ("Getting her voice
                               ready…" and what the bulk lane's own probe found). The waits and stale_connection are held
                               both ways: shown where their fault is injected, a MISMATCH on any other turn
  no CAUSE in the expectation  the turn judges only what it lists (engine-restart, offline: the status line and the checks;
                               burst on one pool: the checks must starve, whatever the verdict)
  the detail                   the link (wifi, cell/lte), then "post S s": her last word to her recording having left the
                               phone (the done reading allows %g s: the end-of-speech window plus the upload), the checks,
                               the status lines shown (as each last read), and the verdict's evidence
`, semconv.DefaultPostBudget.Seconds())

// printDemo prints the table, the legend and where to look: kept says the
// verdict file outlives the demo (--work-dir), held that the collector
// stays up after the run (--hold).
func printDemo(w io.Writer, res *lab.Result, prom, page, verdictFile string, kept, held bool) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "verdicts from the collector:")
	for _, t := range res.Turns {
		fmt.Fprintln(w, t.Line())
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, demoLegend)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%s: %d as expected, %d mismatched; %.1f s\n",
		plural.N(len(res.Turns), "turn"), len(res.Turns)-res.Mismatches(), res.Mismatches(), res.Wall.Seconds())
	if prom != "" && !held {
		fmt.Fprintln(w, "where to look (the verdict page and the metrics endpoint stay up only with --hold; without it they stop when the demo exits):")
	} else {
		fmt.Fprintln(w, "where to look:")
	}
	if prom != "" {
		note := "up until the demo exits; --hold keeps it"
		if held {
			note = "up while the demo holds; Ctrl-C stops it"
		}
		fmt.Fprintf(w, "  verdict page         http://%s/  in a browser: the done reading, turns by cause, each turn's evidence (%s)\n", page, note)
		fmt.Fprintf(w, "  Prometheus endpoint  http://%s/metrics  percause_turns_total, percause_cause_implicated_total, pippa_* (%s)\n", prom, note)
	}
	switch {
	case kept:
		fmt.Fprintf(w, "  verdict file         %s\n", verdictFile)
	case held && verdictFile != "":
		fmt.Fprintf(w, "  verdict file         %s  (removed when the demo exits; --work-dir DIR keeps it)\n", verdictFile)
	default:
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
