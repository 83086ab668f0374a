package main

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/command/up"
	"github.com/percause/percause/internal/leaf/envvars"
)

// helpOf runs each command with -h in process and returns what it wrote.
// Every registered command is here: one added without it fails
// TestEveryHelpListsItsEnvironment.
var helpOf = map[string]func(ctx context.Context, stdout, stderr io.Writer) int{
	"collector": func(ctx context.Context, o, e io.Writer) int { return runCollectorTo(ctx, []string{"--help"}, o, e) },
	"up": func(ctx context.Context, o, e io.Writer) int {
		return runUp(ctx, []string{"-h"}, func(string) string { return "" }, exec.LookPath, o, e)
	},
	"turn": func(ctx context.Context, o, e io.Writer) int {
		return runTurn(ctx, []string{"-h"}, func(string) string { return "" }, o, e)
	},
	"demo": func(ctx context.Context, o, e io.Writer) int { return runDemo(ctx, []string{"-h"}, o, e) },
	"lab":  func(ctx context.Context, o, e io.Writer) int { return runLab(ctx, []string{"run", "-h"}, o, e) },
	"load": func(ctx context.Context, o, e io.Writer) int { return runLoad(ctx, []string{"-h"}, o, e) },
	"lines": func(ctx context.Context, o, e io.Writer) int {
		return runLines(ctx, []string{"-h"}, strings.NewReader(""), o, e)
	},
	"dashboards": func(_ context.Context, o, e io.Writer) int { return runDashboardsTo([]string{"-h"}, o, e) },
	"check":      func(ctx context.Context, o, e io.Writer) int { return runCheck(ctx, []string{"-h"}, o, e) },
	"poolsim":    func(_ context.Context, o, e io.Writer) int { return runPoolsim([]string{"-h"}, o, e) },
}

func help(t *testing.T, name string) string {
	t.Helper()
	var out, errb strings.Builder
	if code := helpOf[name](context.Background(), &out, &errb); code != exitOK {
		t.Fatalf("percause %s -h: exit %d\n%s%s", name, code, out.String(), errb.String())
	}
	return out.String() + errb.String()
}

// TestEveryHelpListsItsEnvironment: every command's --help lists each
// PERCAUSE_* variable envvars' table says it reads, with its default (or
// what unset means), and a command that reads none lists none; every
// command the table names is one of the binary's.
func TestEveryHelpListsItsEnvironment(t *testing.T) {
	var registered, helped []string
	for name := range subcommands {
		registered = append(registered, name)
	}
	for name := range helpOf {
		helped = append(helped, name)
	}
	sort.Strings(registered)
	sort.Strings(helped)
	if !slices.Equal(registered, helped) {
		t.Fatalf("the commands %v, the help test runs %v: add the new one to helpOf", registered, helped)
	}
	listing := 0
	for _, c := range envvars.Commands {
		if _, ok := subcommands[c.Name]; !ok {
			t.Errorf("envvars names the command %q, which percause does not have", c.Name)
		}
	}
	for _, name := range registered {
		got := help(t, name)
		vars := envvars.ForCommand(name)
		if len(vars) == 0 {
			if strings.Contains(got, "environment:") || strings.Contains(got, "PERCAUSE_") {
				t.Errorf("percause %s reads no PERCAUSE_* variable, its help lists some:\n%s", name, got)
			}
			continue
		}
		listing++
		if !strings.Contains(got, "\nenvironment: ") || !strings.Contains(got, envvars.DocPath) {
			t.Errorf("percause %s --help has no environment section:\n%s", name, got)
		}
		for _, v := range vars {
			want := "  " + v.Name + "=" + v.Default + "\n"
			if v.Default == "" {
				want = "  " + v.Name + "  (unset: " + v.Unset + ")\n"
			}
			if !strings.Contains(got, want) {
				t.Errorf("percause %s --help lacks %q", name, want)
			}
		}
	}
	if listing != len(envvars.Commands) {
		t.Errorf("%d commands list their environment, the table names %d", listing, len(envvars.Commands))
	}
}

// flagLine is a flag in the flag package's defaults: "  -name PLACEHOLDER".
var flagLine = regexp.MustCompile(`(?m)^  -([\w-]+)(?: (.+))?$`)

// placeholder is what a flag's value is called: the flag package's type
// name, or a word in capitals from the usage's backquotes.
var placeholder = regexp.MustCompile(`^(string|int|uint|float|duration|value|int64|uint64|[A-Z][A-Z0-9_:.,|/-]*)$`)

// TestFlagPlaceholders: every flag's value is named as the usage line
// names it (-otlp URL, not the first words the help happens to quote).
func TestFlagPlaceholders(t *testing.T) {
	for name := range helpOf {
		got := help(t, name)
		for _, m := range flagLine.FindAllStringSubmatch(got, -1) {
			if m[2] != "" && !placeholder.MatchString(m[2]) {
				t.Errorf("percause %s: -%s's value is called %q", name, m[1], m[2])
			}
		}
	}
	for name, want := range map[string][]string{
		"demo":  {"  -otlp URL\n", "  -verdicts FILE\n", "  -work-dir DIR\n"},
		"lab":   {"  -otlp URL\n", "  -verdicts FILE\n"},
		"load":  {"  -otlp URL\n", "  -baseline BIN\n", "  -variant FILES\n"},
		"check": {"  -listen HOST:PORT\n"},
	} {
		got := help(t, name)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("percause %s --help lacks %q", name, w)
			}
		}
	}
}

// TestEnvironmentDefaultsAreTheCode: the defaults envvars' table gives
// up's variables are the ones up takes.
func TestEnvironmentDefaultsAreTheCode(t *testing.T) {
	def := func(name string) string {
		v, ok := envvars.Lookup(name)
		if !ok {
			t.Fatalf("envvars does not list %s", name)
		}
		return v.Default
	}
	heartbeat, err := time.ParseDuration(def(up.EnvHeartbeat))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, table, code string }{
		{up.EnvPrometheusEndpoint, def(up.EnvPrometheusEndpoint), up.DefaultPrometheusEndpoint},
		{up.EnvAlertmanagerEndpoint, def(up.EnvAlertmanagerEndpoint), up.DefaultAlertmanagerEndpoint},
		{up.EnvScrapeInterval, def(up.EnvScrapeInterval), up.DefaultScrapeInterval.String()},
		{up.EnvAlertWindow, def(up.EnvAlertWindow), dashboards.DefaultAlertWindow},
		{up.EnvHeartbeat, heartbeat.String(), up.DefaultHeartbeat.String()},
		{up.EnvRestartLimit, def(up.EnvRestartLimit), strconv.Itoa(up.DefaultRestartLimit)},
		{up.EnvNotifyFormat, def(up.EnvNotifyFormat), up.DefaultNotifyFormat},
	} {
		if c.table != c.code {
			t.Errorf("%s: the table says %s, up takes %s", c.name, c.table, c.code)
		}
	}
	if v, _ := envvars.Lookup(up.EnvRelayEndpoint); !strings.Contains(v.Unset, up.DefaultRelayEndpoint) {
		t.Errorf("%s: the table says %q, up takes %s with a mute URL", up.EnvRelayEndpoint, v.Unset, up.DefaultRelayEndpoint)
	}
	if v, _ := envvars.Lookup(up.EnvRestartLimit); !strings.Contains(v.Means, "within 10m") || up.RestartWindow != 10*time.Minute {
		t.Errorf("%s: the table says %q, up's window is %s", up.EnvRestartLimit, v.Means, up.RestartWindow)
	}
}

// TestCollectorRefusesAnUnknownWord: a word a list-valued variable the
// configuration reads does not accept stops the collector before it
// starts, named, with the words it accepts; a configuration that does not
// read the variable is not held to it.
func TestCollectorRefusesAnUnknownWord(t *testing.T) {
	t.Setenv("PERCAUSE_FORWARD_EXPORTERS", "[otlphtp/traces]")
	for _, args := range [][]string{nil, {"validate"}} {
		// Were it not refused, the collector would run: the timeout ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out, errb strings.Builder
		code := runCollectorTo(ctx, args, &out, &errb)
		cancel()
		if code != exitFailed || !strings.Contains(errb.String(), `PERCAUSE_FORWARD_EXPORTERS: "otlphtp/traces" is not a word it accepts; it accepts nop, otlphttp/traces`) {
			t.Errorf("percause collector %v: exit %d, stderr %q; want 1 and the word named", args, code, errb.String())
		}
	}
	getenv := func(k string) string {
		return map[string]string{"PERCAUSE_FORWARD_EXPORTERS": "[otlphtp/traces]", "PERCAUSE_METRICS_EXPORTERS": "[prometheus]"}[k]
	}
	root := filepath.Join("..", "..", "collector-config")
	for _, c := range []struct {
		args    []string
		refused bool
	}{
		{nil, true}, // the embedded default reads it
		{[]string{"--config", filepath.Join(root, "local.yaml")}, true},
		{[]string{"--config=file:" + filepath.Join(root, "local.yaml")}, true},
		{[]string{"--config", filepath.Join(root, "gateway.yaml")}, false},
		{[]string{"--config", filepath.Join(root, "compose.yaml")}, false}, // its own list, [prometheus], is right
		{[]string{"--config", "yaml:exporters: ${env:PERCAUSE_FORWARD_EXPORTERS}"}, true},
		{[]string{"--config", "/nonexistent.yaml"}, false}, // left to the collector
	} {
		err := checkListWords(getenv, c.args, []string{"yaml:" + "x: ${env:PERCAUSE_FORWARD_EXPORTERS:-[nop]}"})
		if (err != nil) != c.refused {
			t.Errorf("%v: %v, want refused %v", c.args, err, c.refused)
		}
	}
}

// TestCountsReadRight: the commands' messages say "1 turn" and "2 turns".
func TestCountsReadRight(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{mismatchLine(1, 1), "1 of 1 turn differs from its scenario's expectation"},
		{mismatchLine(1, 5), "1 of 5 turns differs from its scenario's expectation"},
		{mismatchLine(2, 5), "2 of 5 turns differ from their scenario's expectation"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	var b strings.Builder
	printReport(&b, load.Report{Turns: 1, Spans: 1, Requests: 1, Installations: 1, Launches: 1, Seconds: 1, TurnsPerSec: 1,
		Counted: map[string]float64{}, Series: 1, ProbeTurns: 1})
	for _, want := range []string{"1 turn (1 span, 1 request) from 1 installation in 1 launch,", "(1 series of percause_turns_total)", "1 more turn afterwards"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the load report lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printReport(&b, load.Report{Turns: 2, Spans: 3, Requests: 4, Installations: 2, Launches: 2})
	if want := "2 turns (3 spans, 4 requests) from 2 installations in 2 launches,"; !strings.Contains(b.String(), want) {
		t.Errorf("the load report lacks %q:\n%s", want, b.String())
	}
}
