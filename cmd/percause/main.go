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
	"sort"
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
// it returns ok false the subcommand ends with code: 0 after -h, 2 after a
// bad flag (the flag package has said why) or a stray argument.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: percause <command> [flags]")
	fmt.Fprintln(os.Stderr)
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, subcommands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	c, ok := subcommands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "percause: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := c.run(ctx, os.Args[2:])
	stop()
	os.Exit(code)
}
