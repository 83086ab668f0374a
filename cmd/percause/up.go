package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/percause/percause/internal/command/up"
	"github.com/percause/percause/internal/leaf/envvars"
)

func init() {
	register(subcommand{
		name:    "up",
		summary: "the collector, Prometheus and Alertmanager on loopback, alerts sent to PERCAUSE_NOTIFY_URL (a phone's ntfy topic)",
		run: func(ctx context.Context, args []string) int {
			return runUp(ctx, args, os.Getenv, exec.LookPath, os.Stdout, os.Stderr)
		},
	})
}

const upUsage = `usage: percause up [--prometheus PATH] [--alertmanager PATH]
Starts, on loopback, the collector on the embedded default, a Prometheus that scrapes it and evaluates
the generated alert rules, and an Alertmanager that sends every firing and resolved alert to
PERCAUSE_NOTIFY_URL (an ntfy topic the phone subscribes to, or any webhook). Ctrl-C stops all three.
`

func runUp(ctx context.Context, args []string, getenv func(string) string, lookPath func(string) (string, error), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prom := fs.String("prometheus", "", "the Prometheus binary (default: prometheus on PATH)")
	am := fs.String("alertmanager", "", "the Alertmanager binary (default: alertmanager or prometheus-alertmanager on PATH)")
	fs.Usage = func() { fmt.Fprint(stderr, upUsage); fs.PrintDefaults(); envvars.Help(stderr, "up") }
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "up: %v\n", err)
		return 1
	}
	cfg, err := up.FromEnv(getenv, wd)
	if err != nil {
		fmt.Fprintf(stderr, "up: %v\n", err)
		return 2
	}
	if cfg.Prometheus, cfg.Alertmanager, err = up.FindBinaries(*prom, *am, lookPath); err != nil {
		fmt.Fprintf(stderr, "up: %v\n", err)
		return 2
	}
	if cfg.Self, err = os.Executable(); err != nil {
		fmt.Fprintf(stderr, "up: finding this binary to start the collector: %v\n", err)
		return 1
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "up: %v\n", err)
		return 2
	}
	cfg.Env = os.Environ()
	if err := up.Run(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "up: %v\n", err)
		return 1
	}
	return 0
}
