// Command percause is the single binary of the project: the collector
// distribution, the lab, the demo, the dashboards generator and the queueing
// model, each a subcommand registered by its own file in this package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
)

// subcommand is one `percause NAME` entry point. args excludes the binary and
// the subcommand name; run returns the process exit code.
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string) int
}

var subcommands = map[string]subcommand{}

// register is called from init() in each subcommand's file.
func register(c subcommand) {
	if _, dup := subcommands[c.name]; dup {
		panic("percause: subcommand registered twice: " + c.name)
	}
	subcommands[c.name] = c
}

// parseFlags parses a subcommand's flags and refuses stray arguments. When
// it returns ok false the subcommand ends with code: exitOK after -h,
// exitUsage after a bad flag (the flag package has said why) or a stray
// argument.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}

// Exit codes, one per kind of outcome, the same for every subcommand
// (README.md, "Exit codes").
const (
	// exitOK: the command did what it was asked, and found nothing wrong.
	exitOK = 0
	// exitFailed: it ran and failed: an error reading, writing or
	// reaching something, or what it checks was found wrong (a verdict
	// that differs from its scenario, a turn not found).
	exitFailed = 1
	// exitUsage: it was asked wrongly (an unknown command, subcommand or
	// flag, a missing or stray argument); it did nothing.
	exitUsage = 2
	// exitInterrupted: it was stopped by SIGINT or SIGTERM (128 + SIGINT).
	exitInterrupted = 130
)

// usage writes the list of commands.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: percause <command> [flags]")
	fmt.Fprintln(w, "       percause <command> --help    a command's own flags")
	fmt.Fprintln(w, "       percause --version           the build: version, commit, Go")
	fmt.Fprintln(w)
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, subcommands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 done, 1 failed (or found wrong), 2 asked wrongly (usage), 130 interrupted.")
}

// helpAsked reports whether a subcommand's arguments ask for its help: -h,
// -help or --help before any "--", or help as the first.
func helpAsked(args []string) bool {
	if len(args) > 0 && args[0] == "help" {
		return true
	}
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

// versionText is what --version prints: the version stamped at link time
// (main.version) or, without one, the module's, then the commit and the
// toolchain the build info records.
func versionText(v string, info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return fmt.Sprintf("percause %s (no build information)\n", v)
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "percause %s\n", v)
	fmt.Fprintf(&b, "  module   %s\n", info.Main.Path)
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (with uncommitted changes)"
		}
		fmt.Fprintf(&b, "  commit   %s\n", rev)
	}
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "  committed %s\n", t)
	}
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	fmt.Fprintf(&b, "  go       %s %s/%s\n", info.GoVersion, goos, goarch)
	return b.String()
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		// Asked for nothing: a usage error, so the list goes to stderr.
		usage(os.Stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(os.Stdout)
		return exitOK
	case "-version", "--version", "version":
		info, ok := debug.ReadBuildInfo()
		fmt.Fprint(os.Stdout, versionText(version, info, ok))
		return exitOK
	}
	c, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "percause: unknown command %q\n\n", args[0])
		usage(os.Stderr)
		return exitUsage
	}
	if helpAsked(args[1:]) {
		// A subcommand writes its help where it writes errors (the flag
		// package's way); asked for, help is the output, so it goes to
		// stdout: `percause lines --help | less`.
		os.Stderr = os.Stdout
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.run(ctx, args[1:])
}
