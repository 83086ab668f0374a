package main

import (
	"errors"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// runBin runs the real binary and returns its stdout, stderr and exit code.
func runBin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(testenv.PercauseBin(t), args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestHelpOnStdout: help asked for is the output (stdout, exit 0), so
// `percause --help | less` and `percause lines --help | less` show it;
// help as the answer to a wrong call goes to stderr with exit 2.
func TestHelpOnStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "usage: percause <command>"},
		{[]string{"-h"}, "usage: percause <command>"},
		{[]string{"help"}, "  turn "},
		{[]string{"lines", "--help"}, "usage: percause lines"},
		{[]string{"lab", "--help"}, "usage: percause lab run"},
		{[]string{"lab", "run", "-h"}, "-scenario"},
		{[]string{"turn", "--help"}, "usage: percause turn"},
		{[]string{"poolsim", "-help"}, "usage: percause poolsim"},
		{[]string{"dashboards", "--help"}, "usage: percause dashboards"},
		{[]string{"collector", "--help"}, "percause collector [flags]"},
	} {
		out, errOut, code := runBin(t, c.args...)
		if code != exitOK || !strings.Contains(out, c.want) || errOut != "" {
			t.Errorf("percause %s: exit %d, stdout %q…, stderr %q; want exit 0 and %q on stdout alone", strings.Join(c.args, " "), code, clip(out), clip(errOut), c.want)
		}
	}
	if out, errOut, code := runBin(t); code != exitUsage || out != "" || !strings.Contains(errOut, "usage: percause <command>") {
		t.Errorf("percause alone: exit %d, stdout %q; want the usage on stderr and exit 2", code, clip(out))
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80]
	}
	return s
}

// TestUsageErrorsExit2: every kind of asking wrongly exits 2, and an
// unknown command or subcommand is named.
func TestUsageErrorsExit2(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"frob"}, `unknown command "frob"`},
		{[]string{"lab", "frob"}, `lab: unknown subcommand "frob"`},
		{[]string{"lab"}, "usage: percause lab run"},
		{[]string{"collector", "extra"}, `unknown command "extra"`},
		{[]string{"collector", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"collector", "validate", "extra"}, "accepts 0 arg(s)"},
		{[]string{"lines"}, "name at least one file"},
		{[]string{"lines", "--bogus", "x"}, "flag provided but not defined"},
		{[]string{"check", "extra"}, `unexpected argument "extra"`},
		{[]string{"dashboards", "--bogus"}, "flag provided but not defined"},
		{[]string{"load", "extra"}, `unexpected argument "extra"`},
		{[]string{"poolsim", "extra"}, `unexpected argument "extra"`},
		{[]string{"turn"}, "name one trace ID"},
		{[]string{"turn", "xyz"}, "is not a trace ID"},
		{[]string{"turn", "--file", "a", "--page", "http://127.0.0.1:1/", "0a00000000000000000000000000001f"}, "name one"},
		{[]string{"turn", "--page", "127.0.0.1:9465", "0a00000000000000000000000000001f"}, "--page must be the page's http(s) URL"},
	} {
		out, errOut, code := runBin(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.say) {
			t.Errorf("percause %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), code, clip(errOut), c.say)
		}
		if out != "" {
			t.Errorf("percause %s: a usage error printed %q on stdout", strings.Join(c.args, " "), clip(out))
		}
	}
	// A command asked rightly that fails exits 1.
	if _, errOut, code := runBin(t, "collector", "--config", "/nonexistent/percause.yaml"); code != exitFailed {
		t.Errorf("a collector with a missing config: exit %d (%s), want 1", code, clip(errOut))
	}
}

// TestVersion: --version prints the build: the version, the module, the
// commit the build info records and the toolchain.
func TestVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	for _, arg := range []string{"--version", "version"} {
		out, _, code := runBin(t, arg)
		if code != exitOK || !strings.HasPrefix(out, "percause ") || !strings.Contains(out, "module   github.com/percause/percause") ||
			!strings.Contains(out, runtime.Version()) {
			t.Errorf("percause %s: exit %d:\n%s", arg, code, out)
		}
		// Built in a git checkout, the binary knows its commit.
		if rev, err := exec.Command("git", "-C", testenv.RepoRoot(), "rev-parse", "HEAD").Output(); err == nil && !strings.Contains(out, "commit   "+strings.TrimSpace(string(rev))) {
			t.Logf("percause %s does not name HEAD (a binary from PERCAUSE_BIN may be older):\n%s", arg, out)
		}
	}
}

func TestVersionText(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/percause/percause", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-01T08:00:00Z"},
			{Key: "vcs.modified", Value: "true"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"}}}
	for _, c := range []struct {
		name, version string
		info          *debug.BuildInfo
		ok            bool
		want          []string
	}{
		{"stamped at link time", "1.2.3", info, true, []string{"percause 1.2.3\n", "commit   abc123 (with uncommitted changes)", "committed 2026-12-01T08:00:00Z", "go       go1.26.0 linux/arm64"}},
		{"the module's version", "dev", info, true, []string{"percause v0.3.0\n"}},
		{"a devel build", "dev", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "p", Version: "(devel)"}}, true,
			[]string{"percause dev\n", "  module   p\n", "go       go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH}},
		{"no build info", "dev", nil, false, []string{"percause dev (no build information)"}},
	} {
		got := versionText(c.version, c.info, c.ok)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
	}
	if got := versionText("dev", &debug.BuildInfo{Main: debug.Module{Path: "p"}}, true); strings.Contains(got, "commit") {
		t.Errorf("a build without VCS info names a commit: %q", got)
	}
}

func TestHelpAsked(t *testing.T) {
	for args, want := range map[string]bool{"": false, "-h": true, "--help": true, "run -help": true, "help": true,
		"x help": false, "-- -h": false, "--config a.yaml": false, "--scenario x -h": true} {
		if got := helpAsked(strings.Fields(args)); got != want {
			t.Errorf("helpAsked(%q) = %v, want %v", args, got, want)
		}
	}
}
