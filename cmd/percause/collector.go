package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/collector/otelcol"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/distro"
)

// version is the distribution's version, set at link time
// (-ldflags "-X main.version=…").
var version = "dev"

func init() {
	register(subcommand{
		name:    "collector",
		summary: "the collector distribution (otelcol flags and subcommands; --config FILE, default: embedded local.yaml)",
		run:     runCollector,
	})
}

// runCollector hands the remaining arguments to otelcol's own command, so
// every collector flag and subcommand (validate, components, print-config,
// featuregate) works as in any distribution. Without --config it runs the
// embedded default.
func runCollector(ctx context.Context, args []string) int {
	var defaults []string
	if !hasConfigFlag(args) {
		defaults = []string{"yaml:" + string(collectorconfig.Local)}
	}
	cmd := otelcol.NewCommand(distro.Settings(version, defaults...))
	cmd.SetArgs(args)
	cmd.SilenceErrors = true // reported once, below
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "percause collector: %v\n", err)
		return 1
	}
	return 0
}

// hasConfigFlag reports whether the arguments name a configuration.
func hasConfigFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--config" || a == "-config" || strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config=") {
			return true
		}
	}
	return false
}
