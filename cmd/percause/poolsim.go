package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/percause/percause/internal/command/poolsim"
)

func init() {
	register(subcommand{
		name:    "poolsim",
		summary: "the queueing model: one pool of six against traffic by kind (reference table by default)",
		run: func(_ context.Context, args []string) int {
			return runPoolsim(args, os.Stdout, os.Stderr)
		},
	})
}

// runPoolsim prints the reference table when no flag is given, or one row
// for the case the flags describe (unset flags keep their defaults: two
// pools, a healthy engine, takes 14,19,24,30, words until the stream ends).
func runPoolsim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("poolsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	takes := fs.String("takes", "14,19,24,30", "take stream lengths in seconds, comma-separated")
	pools := fs.String("pools", "two", "one (a single pool of six) or two (control and bulk)")
	engine := fs.String("engine", "up", "up (answers checks in 0.2 s) or gone (never answers)")
	words := fs.String("words-until", "", "when her streamed words end, in seconds (default: 40.4 with the engine up, none when gone)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause poolsim [--takes 14,19,24,30] [--pools one|two] [--engine up|gone] [--words-until SECONDS]")
		fmt.Fprintln(stderr, "Without flags it prints the three reference rows of the model.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NFlag() == 0 {
		fmt.Fprint(stdout, poolsim.Table())
		return 0
	}
	c := poolsim.Case{WordsUntil: -1}
	var errs []error
	switch *pools {
	case "one":
	case "two":
		c.TwoPools = true
	default:
		errs = append(errs, fmt.Errorf("--pools: want one or two, got %q", *pools))
	}
	switch *engine {
	case "up":
	case "gone":
		c.EngineGone = true
	default:
		errs = append(errs, fmt.Errorf("--engine: want up or gone, got %q", *engine))
	}
	t, err := poolsim.ParseTakes(*takes)
	if err != nil {
		errs = append(errs, fmt.Errorf("--takes: %w", err))
	}
	c.Takes = t
	if *words != "" {
		d, err := poolsim.ParseSeconds(*words)
		if err != nil {
			errs = append(errs, fmt.Errorf("--words-until: %v", err))
		}
		c.WordsUntil = d
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(stderr, "poolsim: %v\n", err)
		return 2
	}
	r, err := poolsim.Run(c)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 2
	}
	fmt.Fprintln(stdout, r.Row())
	return 0
}
