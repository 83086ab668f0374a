package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/percause/percause/dashboards"
)

func init() {
	register(subcommand{
		name:    "dashboards",
		summary: "regenerate the dashboards, alert rules and provisioning under dashboards/",
		run:     runDashboards,
	})
}

// modulePath identifies the repository's go.mod when looking for the root.
const modulePath = "module github.com/percause/percause"

func runDashboards(_ context.Context, args []string) int {
	fs := flag.NewFlagSet("dashboards", flag.ContinueOnError)
	dir := fs.String("dir", "", "repository root (default: the nearest folder up from here holding percause's go.mod)")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := generateDashboards(*dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "percause dashboards:", err)
		return 1
	}
	return 0
}

func generateDashboards(root string, out io.Writer) error {
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if root, err = findRepoRoot(wd); err != nil {
			return err
		}
	}
	target := filepath.Join(root, "dashboards")
	if st, err := os.Stat(target); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not percause's repository root (no dashboards/ folder)", root)
	}
	if err := dashboards.Generate(target); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", filepath.Join(target, dashboards.GeneratedDir))
	return nil
}

// findRepoRoot walks up from dir to the folder whose go.mod declares this module.
func findRepoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte(modulePath)) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no percause repository above " + dir + " (run it inside the repository or pass --dir)")
		}
	}
}
