package distro

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"gopkg.in/yaml.v3"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// exposureConf is a configuration with an OTLP receiver, a Prometheus
// exporter and the verdict page, each listener set by the case, all in one
// pipeline (unless the case leaves the page out of it).
func exposureConf(t *testing.T, otlp, prom, page string, pageInPipeline bool) *confmap.Conf {
	t.Helper()
	traces := "[verdicts]"
	if !pageInPipeline {
		traces = "[nop]"
	}
	doc := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
%s
exporters:
  prometheus:
%s
  verdicts:
    path: v.jsonl
%s
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: %s
    metrics:
      receivers: [otlp]
      exporters: [prometheus]
`, indent(otlp, 6), indent(prom, 4), indent(page, 4), traces)
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return confmap.NewFromStringMap(m)
}

func indent(s string, n int) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.Trim(s, "\n"), "\n") {
		b.WriteString(strings.Repeat(" ", n) + l + "\n")
	}
	return b.String()
}

func TestExposureCheck(t *testing.T) {
	const (
		httpLoopback = "http: {endpoint: 127.0.0.1:4318}"
		promLoopback = "endpoint: 127.0.0.1:9464"
		pageLoopback = "http: {endpoint: 127.0.0.1:9465}"
		authn        = "auth: {authenticator: bearertokenauth}"
	)
	for _, c := range []struct {
		name            string
		otlp, prom, pg  string
		pageOutOfPipes  bool
		allow           string
		want            []string // substrings of the error; none: it passes
		warn            []string // substrings of the warnings logged
		notInTheMessage string
	}{
		{name: "every listener on loopback", otlp: httpLoopback, prom: promLoopback, pg: pageLoopback},
		{name: "localhost and ::1 are loopback", otlp: "http: {endpoint: 'localhost:4318'}\ngrpc: {endpoint: '[::1]:4317'}", prom: promLoopback, pg: pageLoopback},
		{name: "the receiver's defaults are loopback", otlp: "http:\ngrpc:", prom: promLoopback, pg: "http:"},
		{name: "a Unix socket", otlp: "http: {endpoint: /tmp/otlp.sock, transport: unix}", prom: promLoopback, pg: pageLoopback},
		{name: "OTLP/HTTP on every interface", otlp: "http: {endpoint: 0.0.0.0:4318}", prom: promLoopback, pg: pageLoopback,
			want: []string{`receivers::otlp::protocols::http listens on "0.0.0.0:4318"`, "can send turns",
				"set receivers::otlp::protocols::http::auth::authenticator", "PERCAUSE_ALLOW_UNAUTHENTICATED=otlp"}},
		{name: "OTLP/gRPC with an empty host", otlp: httpLoopback + "\ngrpc: {endpoint: ':4317'}", prom: promLoopback, pg: pageLoopback,
			want: []string{`receivers::otlp::protocols::grpc listens on ":4317"`, "receivers::otlp::protocols::grpc::auth::authenticator"}},
		{name: "a host name is not loopback", otlp: "http: {endpoint: 'collector:4318'}", prom: promLoopback, pg: pageLoopback,
			want: []string{`"collector:4318"`}},
		{name: "OTLP beyond loopback with an authenticator", otlp: "http: {endpoint: 0.0.0.0:4318, " + authn + "}\ngrpc: {endpoint: 0.0.0.0:4317, " + authn + "}",
			prom: promLoopback, pg: pageLoopback},
		{name: "the Prometheus endpoint on every interface", otlp: httpLoopback, prom: "endpoint: 0.0.0.0:9464", pg: pageLoopback,
			want: []string{`exporters::prometheus listens on "0.0.0.0:9464"`, "read the verdict counters",
				"set exporters::prometheus::auth::authenticator", "scrape config's authorization", "PERCAUSE_ALLOW_UNAUTHENTICATED=prometheus"}},
		{name: "the Prometheus endpoint with an authenticator", otlp: httpLoopback, prom: "endpoint: 0.0.0.0:9464\n" + authn, pg: pageLoopback},
		{name: "the page on every interface", otlp: httpLoopback, prom: promLoopback, pg: "http: {endpoint: 0.0.0.0:9465}",
			want: []string{`exporters::verdicts::http listens on "0.0.0.0:9465"`, "read the verdicts",
				"set exporters::verdicts::http::auth::authenticator", "no opt-out"}, notInTheMessage: "PERCAUSE_ALLOW_UNAUTHENTICATED="},
		{name: "the page with an authenticator", otlp: httpLoopback, prom: promLoopback, pg: "http: {endpoint: 0.0.0.0:9465, " + authn + "}"},
		{name: "a page no pipeline uses is not started", otlp: httpLoopback, prom: promLoopback, pg: "http: {endpoint: 0.0.0.0:9465}", pageOutOfPipes: true},
		{name: "every one exposed, each named", otlp: "http: {endpoint: 0.0.0.0:4318}", prom: "endpoint: 0.0.0.0:9464", pg: "http: {endpoint: 0.0.0.0:9465}",
			want: []string{"receivers::otlp::protocols::http listens", "exporters::prometheus listens", "exporters::verdicts::http listens"}},
		{name: "allowed: OTLP and Prometheus, with a warning each", otlp: "http: {endpoint: 0.0.0.0:4318}", prom: "endpoint: 0.0.0.0:9464", pg: pageLoopback,
			allow: "otlp, prometheus",
			warn:  []string{"receivers::otlp::protocols::http 0.0.0.0:4318", "exporters::prometheus 0.0.0.0:9464"}},
		{name: "allowing one leaves the other refused", otlp: "http: {endpoint: 0.0.0.0:4318}", prom: "endpoint: 0.0.0.0:9464", pg: pageLoopback,
			allow: "prometheus", want: []string{"receivers::otlp::protocols::http listens"}, warn: []string{"exporters::prometheus 0.0.0.0:9464"}},
		{name: "the page cannot be allowed", otlp: httpLoopback, prom: promLoopback, pg: "http: {endpoint: 0.0.0.0:9465}",
			allow: "verdicts", want: []string{"PERCAUSE_ALLOW_UNAUTHENTICATED names verdicts, which it cannot allow", "no opt-out"}},
		{name: "allowing what is not exposed is said", otlp: httpLoopback, prom: promLoopback, pg: pageLoopback,
			allow: "otlp", warn: []string{"names a component with no listener it allows (none beyond loopback without an authenticator) otlp"}},
		{name: "a malformed list", otlp: httpLoopback, prom: promLoopback, pg: pageLoopback,
			allow: "otlp/", want: []string{`PERCAUSE_ALLOW_UNAUTHENTICATED: "otlp/" is not a component ID`}},
		{name: "a misspelt name is refused, with the names it accepts", otlp: "http: {endpoint: 0.0.0.0:4318}", prom: promLoopback, pg: pageLoopback,
			allow: "otpl", want: []string{`PERCAUSE_ALLOW_UNAUTHENTICATED: "otpl" is not a word it accepts; it accepts otlp, prometheus`}},
		{name: "every misspelt name is named", otlp: httpLoopback, prom: promLoopback, pg: pageLoopback,
			allow: "otlp, promethus, jaeger", want: []string{`"promethus", "jaeger" are not words it accepts`}},
		{name: "a named instance is a word it accepts", otlp: httpLoopback, prom: promLoopback, pg: pageLoopback,
			allow: "otlp/phones", warn: []string{"names a component with no listener it allows (none beyond loopback without an authenticator) otlp/phones"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			conv := &exposureCheck{logger: zap.New(core), allow: c.allow}
			err := conv.Convert(context.Background(), exposureConf(t, c.otlp, c.prom, c.pg, !c.pageOutOfPipes))
			switch {
			case len(c.want) == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case len(c.want) > 0 && err == nil:
				t.Fatalf("passed, want an error with %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if c.notInTheMessage != "" && err != nil && strings.Contains(err.Error(), c.notInTheMessage) {
				t.Errorf("the error offers %q:\n%v", c.notInTheMessage, err)
			}
			var warned []string
			for _, e := range logs.All() {
				line := e.Message
				for _, f := range e.Context {
					line += " " + f.String
				}
				warned = append(warned, line)
			}
			if len(warned) != len(c.warn) {
				t.Errorf("warnings %q, want %d", warned, len(c.warn))
			}
			for _, w := range c.warn {
				found := false
				for _, got := range warned {
					found = found || strings.Contains(got, w)
				}
				if !found {
					t.Errorf("no warning says %q: %q", w, warned)
				}
			}
		})
	}
}

// collectorEnv is the embedded default's environment on free loopback
// ports and a temporary data folder, with overrides.
func collectorEnv(t *testing.T, overrides ...string) []string {
	t.Helper()
	dir := t.TempDir()
	port := func() string { return fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)) }
	env := append(os.Environ(),
		collectorconfig.EnvOTLPEndpoint+"="+port(),
		collectorconfig.EnvPromEndpoint+"="+port(),
		collectorconfig.EnvPageEndpoint+"="+port(),
		collectorconfig.EnvHealthEndpoint+"="+port(),
		fmt.Sprintf("%s=%d", collectorconfig.EnvTelemetryPort, testenv.FreePort(t)),
		collectorconfig.EnvDataDir+"="+filepath.Join(dir, "data"),
		collectorconfig.EnvVerdictFile+"="+filepath.Join(dir, "data", "verdicts.jsonl"),
	)
	return append(env, overrides...)
}

// runBinary runs the percause binary to its end (at most 30 s: a refusal comes at once).
func runBinary(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.PercauseBin(t), args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("percause %s still ran after 30 s:\n%s", strings.Join(args, " "), out)
	}
	return string(out), err
}

// TestExposedListenersRefused: the real binary on the embedded default,
// with OTLP in or the Prometheus endpoint moved to every interface, will
// not start and validate fails, each naming the listener, its endpoint and
// the setting that fixes it; with the listener allowed by
// PERCAUSE_ALLOW_UNAUTHENTICATED it starts and logs a warning naming it.
func TestExposedListenersRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	for _, c := range []struct {
		env, listener, setting, allow string
	}{
		{collectorconfig.EnvOTLPEndpoint, "receivers::otlp::protocols::http", "receivers::otlp::protocols::http::auth::authenticator", "otlp"},
		{collectorconfig.EnvPromEndpoint, "exporters::prometheus", "exporters::prometheus::auth::authenticator", "prometheus"},
	} {
		t.Run(c.listener, func(t *testing.T) {
			exposed := fmt.Sprintf("0.0.0.0:%d", testenv.FreePort(t))
			for _, args := range [][]string{{"collector"}, {"collector", "validate"}} {
				out, err := runBinary(t, collectorEnv(t, c.env+"="+exposed), args...)
				if err == nil {
					t.Fatalf("percause %s with %s=%s succeeded, want a refusal:\n%s", strings.Join(args, " "), c.env, exposed, out)
				}
				for _, w := range []string{fmt.Sprintf("%s listens on %q", c.listener, exposed), "without an authenticator", "set " + c.setting,
					EnvAllowUnauthenticated + "=" + c.allow} {
					if !strings.Contains(out, w) {
						t.Errorf("percause %s refused without saying %q:\n%s", strings.Join(args, " "), w, out)
					}
				}
			}
			allowed := []string{c.env + "=" + exposed, EnvAllowUnauthenticated + "=" + c.allow}
			if out, err := runBinary(t, collectorEnv(t, allowed...), "collector", "validate"); err != nil {
				t.Fatalf("validate with %s=%s: %v\n%s", EnvAllowUnauthenticated, c.allow, err, out)
			}
			col := testenv.StartCollector(t,
				testenv.WithCollectorEnv(c.env, exposed),
				testenv.WithCollectorEnv(EnvAllowUnauthenticated, c.allow))
			testenv.WaitFor(t, 10*time.Second, "the warning", func() bool {
				out := col.Output()
				return strings.Contains(out, "listening beyond loopback without an authenticator, as "+EnvAllowUnauthenticated+" allows") &&
					strings.Contains(out, fmt.Sprintf(`"listener": %q, "endpoint": %q`, c.listener, exposed))
			})
		})
	}
}
