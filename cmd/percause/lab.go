package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/percause/percause/internal/leaf/envvars"
	"github.com/percause/percause/internal/leaf/plural"
	"github.com/percause/percause/lab"
	"github.com/percause/percause/lab/scenario"
)

func init() {
	register(subcommand{
		name:    "lab",
		summary: "run the lab's scenarios (a real engine, phone and fault injectors) through the collector",
		run: func(ctx context.Context, args []string) int {
			return runLab(ctx, args, os.Stdout, os.Stderr)
		},
	})
}

// labFlags are the flags lab run and demo share.
type labFlags struct {
	scale    float64
	otlp     string
	verdicts string
	workDir  string
}

func (f *labFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&f.scale, "scale", lab.DefaultScale, "person-seconds per wall second (5: five seconds of a person's time in one; higher is quicker and more sensitive to a busy machine)")
	fs.StringVar(&f.otlp, "otlp", "", "OTLP/HTTP base `URL` of a running collector (default: start percause collector on the embedded config)")
	fs.StringVar(&f.verdicts, "verdicts", "", "the running collector's verdict `FILE` (with --otlp)")
	fs.StringVar(&f.workDir, "work-dir", "", "keep spools and the collector's data in `DIR` (default: a temporary folder)")
}

// options checks the flags and turns them into lab options; the collector
// started by the lab is this very binary. An error is a usage error (exit 2).
func (f *labFlags) options() ([]lab.Option, error) {
	if !(f.scale > 0) || math.IsInf(f.scale, 0) {
		return nil, fmt.Errorf("--scale must be a positive finite number of person-seconds per wall second, got %v", f.scale)
	}
	opts := []lab.Option{lab.WithScale(f.scale)}
	if f.otlp != "" || f.verdicts != "" {
		if f.otlp == "" || f.verdicts == "" {
			return nil, errors.New("--otlp and --verdicts go together")
		}
		opts = append(opts, lab.WithCollector(f.otlp, f.verdicts))
	} else {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding this binary to start the collector: %w", err)
		}
		opts = append(opts, lab.WithCollectorBinary(self))
	}
	if f.workDir != "" {
		opts = append(opts, lab.WithWorkDir(f.workDir))
	}
	return opts, nil
}

// mismatchLine says how many of the turns differ from their scenario's
// expectation: "1 of 1 turn differs from its scenario's expectation".
func mismatchLine(n, turns int) string {
	return fmt.Sprintf("%d of %s %s from %s scenario's expectation", n, plural.N(turns, "turn"),
		plural.Word(n, "differs", "differ"), plural.Word(n, "its", "their"))
}

func runLab(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "usage: percause lab run --scenario NAME|all [--json] [--scale F] [--otlp URL --verdicts FILE]")
		fmt.Fprintf(stderr, "scenarios: %s\n", strings.Join(scenario.Names(), ", "))
	}
	if len(args) == 0 || args[0] != "run" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			usage()
			envvars.Help(stderr, "lab")
			return exitOK
		}
		if len(args) > 0 {
			fmt.Fprintf(stderr, "lab: unknown subcommand %q (lab has one: run)\n", args[0])
		}
		usage()
		return exitUsage
	}
	fs := flag.NewFlagSet("lab run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lf labFlags
	lf.register(fs)
	name := fs.String("scenario", "", "the scenario to run, or all")
	asJSON := fs.Bool("json", false, "print one JSON object per turn")
	fs.Usage = func() { usage(); fs.PrintDefaults(); envvars.Help(stderr, "lab") }
	if code, ok := parseFlags(fs, args[1:], stderr); !ok {
		return code
	}
	if *name == "" {
		fmt.Fprintln(stderr, "lab run: --scenario is required")
		usage()
		return 2
	}
	scs, err := scenario.Lookup(*name)
	if err != nil {
		fmt.Fprintf(stderr, "lab run: %v\n", err)
		return 2
	}
	opts, err := lf.options()
	if err != nil {
		fmt.Fprintf(stderr, "lab run: %v\n", err)
		return 2
	}
	res, err := lab.Run(ctx, scs, opts...)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "lab run: interrupted")
		return exitInterrupted
	}
	if res != nil {
		if *asJSON {
			if werr := lab.WriteJSON(stdout, res.Turns); werr != nil {
				fmt.Fprintf(stderr, "lab run: %v\n", werr)
				return 1
			}
		} else {
			for _, t := range res.Turns {
				fmt.Fprintln(stdout, t.Line())
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "lab run: %v\n", err)
		return 1
	}
	if n := res.Mismatches(); n > 0 {
		fmt.Fprintf(stderr, "lab run: %s\n", mismatchLine(n, len(res.Turns)))
		return 1
	}
	return 0
}
