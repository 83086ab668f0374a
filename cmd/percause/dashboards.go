package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/internal/leaf/envvars"
)

func init() {
	register(subcommand{
		name:    "dashboards",
		summary: "regenerate the dashboards, alert rules and provisioning under dashboards/",
		run:     runDashboards,
	})
}

// modulePath is the module a percause checkout's go.mod declares.
const modulePath = "github.com/percause/percause"

func runDashboards(_ context.Context, args []string) int {
	return runDashboardsTo(args, os.Stdout, os.Stderr)
}

func runDashboardsTo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboards", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "a percause checkout's root (default: the nearest folder up from here whose go.mod declares "+modulePath+")")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: percause dashboards [--dir ROOT]")
		fmt.Fprintln(stderr, "Regenerates ROOT/dashboards/generated: the dashboards, alert rules and provisioning. Files there that it did")
		fmt.Fprintln(stderr, "not generate are left alone.")
		fs.PrintDefaults()
		envvars.Help(stderr, "dashboards")
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	root, err := checkoutRoot(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "percause dashboards:", err)
		return 2
	}
	if err := generateDashboards(root, stdout); err != nil {
		fmt.Fprintln(stderr, "percause dashboards:", err)
		return 1
	}
	return 0
}

// checkoutRoot is dir when it is a percause checkout, or, with dir empty,
// the checkout the working directory is in.
func checkoutRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		return findRepoRoot(wd)
	}
	if err := isCheckout(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// isCheckout reports why dir is not a percause checkout: its go.mod must
// declare this module, and it must have the dashboards/ folder.
func isCheckout(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s is not a percause checkout: %w", dir, err)
	}
	if m := moduleOf(b); m != modulePath {
		return fmt.Errorf("%s is not a percause checkout: its go.mod declares module %q, not %s", dir, m, modulePath)
	}
	if st, err := os.Stat(filepath.Join(dir, "dashboards")); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a percause checkout: it has no dashboards/ folder", dir)
	}
	return nil
}

// moduleOf is the module path a go.mod declares ("" when none).
func moduleOf(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if unq, err := strconv.Unquote(rest); err == nil {
			return unq
		}
		return rest
	}
	return ""
}

// generateDashboards writes root/dashboards/generated; root is a checkout.
func generateDashboards(root string, out io.Writer) error {
	if err := isCheckout(root); err != nil {
		return err
	}
	target := filepath.Join(root, "dashboards")
	if err := dashboards.Generate(target); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", filepath.Join(target, dashboards.GeneratedDir))
	return nil
}

// findRepoRoot walks up from dir to the first percause checkout.
func findRepoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if isCheckout(d) == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no percause checkout at or above " + dir + " (run it inside one or pass --dir)")
		}
	}
}
