package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lf labFlags
	lf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause demo [--scale F]")
		fmt.Fprintln(stderr, "Starts the collector on the embedded default config (loopback only), a lab engine and a lab phone,")
		fmt.Fprintln(stderr, "runs every scenario and prints one line per turn: scenario, expected cause, verdict, evidence.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	opts, err := lf.options()
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "percause demo: %d scenarios at %g× time (a person-second lasts %.0f ms)\n",
		len(scenario.All), lf.scale, 1000/lf.scale)
	// Lines print as turns end; the verdict column fills in once the
	// collector has decided every turn, below.
	opts = append(opts, lab.WithTurnHook(func(t lab.TurnResult) {
		fmt.Fprintf(stdout, "  ran %-14s turn %d (trace %s)\n", t.Scenario, t.Turn, t.TraceID)
	}))
	res, err := lab.Run(ctx, scenario.All, opts...)
	if res != nil {
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "verdicts from the collector:")
		for _, t := range res.Turns {
			fmt.Fprintln(stdout, t.Line())
		}
		fmt.Fprintln(stdout)
		fmt.Fprintf(stdout, "%d turns, %d as expected, %d mismatched, in %.1f s\n",
			len(res.Turns), len(res.Turns)-res.Mismatches(), res.Mismatches(), res.Wall.Seconds())
		fmt.Fprintln(stdout, "where to look:")
		if res.Prometheus != "" {
			fmt.Fprintf(stdout, "  Prometheus endpoint  http://%s/metrics (percause_turns_total, percause_cause_implicated_total; gone when the demo exits)\n", res.Prometheus)
		}
		fmt.Fprintf(stdout, "  verdict file         %s\n", res.VerdictFile)
		fmt.Fprintf(stdout, "  dashboards           %s (docker compose up: Grafana provisioned with them)\n", filepath.Join("dashboards", ""))
	}
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	if res.Mismatches() > 0 {
		return 1
	}
	return 0
}
