package dashboards

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// The end-to-end proof: the real collector (percause collector on its
// embedded default configuration, plus one exporter to a closed port), a
// real Prometheus scraping it and evaluating the generated alert rules, and
// a real Alertmanager, fed by the lab's scenarios (`percause lab run`, one
// installation each) and by the real SDK for what no scenario produces.
// Every query of every panel, annotation, variable and rule is read against
// it.

const (
	// e2eRateInterval and e2eRange stand in for $__rate_interval and
	// $__range: wide enough to cover the whole test.
	e2eRateInterval = "2m"
	e2eRange        = "30m"
	// settle bounds how long the pipeline may take to show a turn's verdict.
	settle = 60 * time.Second
	// relaunchAfter: the reboot annotation compares a new launch with what
	// the installation reported annotationWindow before; the second launch
	// comes once that much time has passed since the first.
	relaunchAfter = time.Minute + 5*time.Second
	// e2eMaxAge is the verdict processor's max_age in the test (2m in the
	// default): how long a take waits for a turn that never comes.
	e2eMaxAge = 20 * time.Second
)

// collector is a running `percause collector` with free loopback ports.
type collector struct {
	otlpURL, promTarget, telemetryTarget, verdictFile string
}

func startCollector(t *testing.T) collector {
	t.Helper()
	bin := testenv.PercauseBin(t)
	dir := t.TempDir()
	otlp, prom, tel, health := testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
	t.Setenv("PERCAUSE_OTLP_ENDPOINT", fmt.Sprintf("127.0.0.1:%d", otlp))
	t.Setenv("PERCAUSE_PROM_ENDPOINT", fmt.Sprintf("127.0.0.1:%d", prom))
	t.Setenv("PERCAUSE_TELEMETRY_PORT", fmt.Sprint(tel))
	t.Setenv("PERCAUSE_HEALTH_ENDPOINT", fmt.Sprintf("127.0.0.1:%d", health))
	t.Setenv("PERCAUSE_PAGE_ENDPOINT", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)))
	t.Setenv("PERCAUSE_DATA_DIR", dir)
	t.Setenv("PERCAUSE_VERDICT_FILE", filepath.Join(dir, "verdicts.jsonl"))
	t.Setenv("PERCAUSE_VERDICT_WAIT", "2s")
	cfg := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(cfg, withDeadExporter(t, collectorconfig.Local), 0o644); err != nil {
		t.Fatal(err)
	}
	proc := testenv.Start(t, dir, bin, "collector", "--config", cfg)
	testenv.WaitFor(t, 60*time.Second, "the collector's health check", func() bool {
		if proc.Exited() {
			t.Fatalf("collector exited:\n%s", proc.Output())
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", health))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return collector{
		otlpURL:         fmt.Sprintf("http://127.0.0.1:%d", otlp),
		promTarget:      fmt.Sprintf("127.0.0.1:%d", prom),
		telemetryTarget: fmt.Sprintf("127.0.0.1:%d", tel),
		verdictFile:     filepath.Join(dir, "verdicts.jsonl"),
	}
}

// exportersOf is a pipeline's exporter list: as written, or, where the
// pipeline takes it from the environment (${env:NAME:-[a, b]}), its default.
func exportersOf(t *testing.T, v any) []any {
	t.Helper()
	if list, ok := v.([]any); ok {
		return list
	}
	ref, _ := v.(string)
	i := strings.Index(ref, ":-")
	if !strings.HasPrefix(ref, "${env:") || i < 0 || !strings.HasSuffix(ref, "}") {
		t.Fatalf("pipeline exporters %q: neither a list nor an environment reference with a default", ref)
	}
	var list []any
	if err := yaml.Unmarshal([]byte(ref[i+2:len(ref)-1]), &list); err != nil {
		t.Fatalf("pipeline exporters default %q: %v", ref, err)
	}
	return list
}

// withDeadExporter is the embedded default plus one exporter (traces and
// metrics) with a sending queue whose endpoint refuses every connection: the
// exporter-queue and send-failure panels then have something to show, as
// they would with the compose stack's Jaeger down.
func withDeadExporter(t *testing.T, local []byte) []byte {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal(local, &cfg); err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t))
	cfg["exporters"].(map[string]any)["otlphttp/down"] = map[string]any{
		"endpoint":         dead,
		"sending_queue":    map[string]any{"enabled": true, "queue_size": 100},
		"retry_on_failure": map[string]any{"enabled": true, "initial_interval": "100ms", "max_interval": "200ms", "max_elapsed_time": "1s"},
	}
	for _, signal := range []string{"traces", "metrics"} {
		p := cfg["service"].(map[string]any)["pipelines"].(map[string]any)[signal].(map[string]any)
		p["exporters"] = append(exportersOf(t, p["exporters"]), "otlphttp/down")
	}
	// A take whose turn never comes is dropped at max_age (reason no_turn,
	// what PercausePhoneSilentWhileServed reads): within the test's time.
	cfg["processors"].(map[string]any)["verdict"].(map[string]any)["max_age"] = e2eMaxAge.String()
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// knownEmpty are queries that need a failure the test pipeline does not
// have, each with the reason. Everything else must return data.
var knownEmpty = map[string]string{
	"Evictions and drops":     "nothing is dropped in a healthy test pipeline",
	"Spans refused":           "nothing is refused in a healthy test pipeline",
	"Batches senders dropped": "no sender drops a batch in a healthy test pipeline",
}

func TestEveryQueryAgainstARealPipeline(t *testing.T) {
	testenv.RequirePrometheus(t)
	if testing.Short() {
		t.Skip("-short: starts the collector, Prometheus and Alertmanager")
	}
	col := startCollector(t)
	am := testenv.StartAlertmanager(t)
	rules, err := filepath.Abs(filepath.Join(GeneratedDir, PathPrometheusRules))
	if err != nil {
		t.Fatal(err)
	}
	prom := testenv.StartPrometheusWith(t,
		testenv.WithScrapeTargets(col.promTarget, col.telemetryTarget),
		testenv.WithRuleFiles(rules),
		testenv.WithAlertmanagerTarget(am.HostPort),
	)
	start := time.Now()
	f := newFeeder(t, col.otlpURL)

	// Someone talks to the engine while the phone's reports do not reach
	// home: the engine's take of a turn whose voice.turn never comes.
	f.take(t, context.Background(), "orphan", 0, 1)
	must(t, f.engine.ForceFlush(context.Background()))
	orphanAt := time.Now()

	// The feeder's clean installation launches first: its second launch (a
	// reboot) comes at the end, annotationWindow later.
	clean := f.launch(t, feedClean)
	f.turn(t, clean, turn{units: []unit{{}, {}}, deviceUptime: 90000, appUptime: 3600})
	must(t, clean.ForceFlush(context.Background()))
	firstAt := time.Now()

	// The lab's scenarios, one `percause lab run` each: every run is an
	// installation of its own, found as the one that appears in Prometheus.
	var runs []labRun
	known := map[string]bool{feedClean: true}
	for _, name := range labScenarios {
		turns := runLab(t, name, col)
		inst := newInstallation(t, prom, known)
		runs = append(runs, labRun{scenario: name, installation: inst, turns: turns})
	}
	// What no lab scenario produces: a turn whose take never arrives (a
	// forced verdict, unknown) and a Reconnecting verdict.
	extra := f.launch(t, feedExtra)
	f.turn(t, extra, turn{units: []unit{{underruns: 1, silent: 0.8, noTake: true}}})
	recordLinkStatus(t, extra, semconv.LinkStatusReconnecting)
	must(t, extra.ForceFlush(context.Background()))
	must(t, f.engine.ForceFlush(context.Background()))

	t.Run("each scenario's verdicts reach Prometheus", func(t *testing.T) {
		for _, r := range runs {
			for _, c := range primaryCauses(r.turns) {
				prom.WaitForQuery(t, settle, fmt.Sprintf(`%s{%s=%q,%s=%q}`, promTurns, lInstallation, r.installation, lCause, c))
			}
		}
		prom.WaitForQuery(t, settle, fmt.Sprintf(`%s{%s=%q,%s=%q}`, promTurns, lInstallation, feedExtra, lCause, semconv.CauseUnknown))
	})
	if t.Failed() {
		names, err := prom.SeriesNames()
		t.Fatalf("series in Prometheus: %v %v", names, err)
	}

	t.Run("the verdict counters count every turn", func(t *testing.T) {
		for _, r := range runs {
			want := map[string]float64{}
			for _, lt := range r.turns {
				want[lt.Cause]++
			}
			res, err := prom.Query(fmt.Sprintf(`sum by (%s) (%s{%s=%q})`, lCause, promTurns, lInstallation, r.installation))
			if err != nil {
				t.Fatal(err)
			}
			if got := maxBy(res, lCause); !equalCounts(got, want) {
				// The Prometheus exporter adds a delta only when it starts
				// where the previous one ended; otherwise each batch replaces
				// the count (docs/decisions/0200-…).
				t.Errorf("%s: %s by primary cause is %v, the lab's verdicts %v", r.scenario, promTurns, got, want)
			}
		}
	})

	t.Run("a phone silent while its engine serves it reaches Alertmanager", func(t *testing.T) {
		var firing time.Time
		testenv.WaitFor(t, e2eMaxAge+2*time.Minute, AlertPhoneSilent+" in Alertmanager", func() bool {
			alerts, err := am.Alerts()
			if err != nil {
				return false
			}
			for _, a := range alerts {
				if a.Labels["alertname"] == AlertPhoneSilent {
					firing = a.StartsAt
					return true
				}
			}
			return false
		})
		t.Logf("the orphan take to %s firing: %s (max_age %s, then a scrape and an evaluation)", AlertPhoneSilent, firing.Sub(orphanAt).Round(100*time.Millisecond), e2eMaxAge)
	})

	t.Run("the pool-reset alert reaches Alertmanager within its window", func(t *testing.T) {
		window, _ := time.ParseDuration(DefaultAlertWindow)
		testenv.WaitFor(t, window, "PercausePoolResetMoved in Alertmanager", func() bool {
			alerts, err := am.Alerts()
			if err != nil {
				return false
			}
			for _, a := range alerts {
				if a.Labels["alertname"] == AlertPoolResetMoved && a.Labels[lInstallation] == installationOf(runs, "stale-pool") {
					return true
				}
			}
			return false
		})
		// Only installations whose pool healed may be named.
		healed := map[string]bool{}
		for _, r := range runs {
			for _, lt := range r.turns {
				if lt.Readings.PoolResets > 0 {
					healed[r.installation] = true
				}
			}
		}
		alerts, _ := am.Alerts()
		for _, a := range alerts {
			if a.Labels["alertname"] == AlertPoolResetMoved && !healed[a.Labels[lInstallation]] {
				t.Errorf("pool alert on an installation whose pool never healed: %v", a.Labels)
			}
		}
	})

	// The reboot: a second launch of the feeder's clean installation with a lower
	// device uptime, once the first is annotationWindow old.
	if wait := time.Until(firstAt.Add(relaunchAfter)); wait > 0 {
		t.Logf("waiting %s so the relaunch is %s after the first launch", wait.Round(time.Second), annotationWindow)
		time.Sleep(wait)
	}
	second := f.launch(t, feedClean)
	f.turn(t, second, turn{units: []unit{{}}, deviceUptime: 120, appUptime: 30})
	must(t, second.ForceFlush(context.Background()))
	prom.WaitForQuery(t, settle, fmt.Sprintf(`count(count by (%s) (%s{%s=%q})) > 1`, lLaunch, mTurns.prom(), lInstallation, feedClean))

	t.Run("every query returns data", func(t *testing.T) {
		end := time.Now().Add(time.Second)
		for _, q := range allQueries(t) {
			title := strings.Trim(strings.TrimPrefix(q.Where, "panel "), `"`)
			expr := expand(q.Expr, e2eRateInterval, e2eRange)
			res, err := prom.QueryRange(expr, start, end, time.Second)
			if err != nil {
				t.Errorf("%s %s: %v\n  %s", q.File, q.Where, err, expr)
				continue
			}
			has := hasValue(res)
			if why, ok := knownEmpty[title]; ok {
				t.Logf("%s: %d series (may be empty: %s)", q.Where, len(res), why)
				continue
			}
			if !has {
				t.Errorf("%s %s returned no data\n  %s", q.File, q.Where, expr)
			}
		}
	})

	t.Run("the cause panels show each scenario's cause", func(t *testing.T) {
		now := time.Now()
		for _, r := range runs {
			primary, implicatedAll := map[string]bool{}, map[string]bool{}
			for _, lt := range r.turns {
				primary[lt.Cause] = true
				for _, c := range lt.Causes {
					implicatedAll[c] = true
				}
			}
			// Turns by primary cause, for the scenario's installation: the
			// causes the lab's verdicts name, and no other.
			expr := expandFor(sumGrowth(sel(promTurns, verdictScope), stepWindow, lCause), r.installation)
			res, err := prom.QueryRange(expr, start, now, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			shown := maxBy(res, lCause)
			for c := range primary {
				if shown[c] <= 0 {
					t.Errorf("%s: turns by primary cause show %v, missing %s", r.scenario, shown, c)
				}
			}
			for c, v := range shown {
				if v > 0 && !primary[c] {
					t.Errorf("%s: turns by primary cause show %s, which no verdict of the scenario gave", r.scenario, c)
				}
			}
			// Each cause row's verdict panel shows the turns implicating its
			// cause, and only on scenarios that implicated it.
			for _, c := range causeRows {
				expr := expandFor(implicated(c, stepWindow), r.installation)
				res, err := prom.QueryRange(expr, start, now, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if got := hasPositive(res); got != implicatedAll[c] {
					t.Errorf("%s: the %s row shows turns implicating it: %v, verdicts implicating it: %v\n  %s",
						r.scenario, c, got, implicatedAll[c], expr)
				}
			}
		}
	})

	t.Run("the Bluetooth share shows the bluetooth scenario's turns", func(t *testing.T) {
		inst := installationOf(runs, "bluetooth")
		labelled, err := prom.Query(fmt.Sprintf(`%s{%s!=""}`, mTurns.prom(), lBluetooth))
		if err != nil {
			t.Fatal(err)
		}
		if len(labelled) == 0 {
			t.Fatalf("%s carries no %s label: the SDK's turn counter must say whether the route was Bluetooth", mTurns.prom(), lBluetooth)
		}
		res, err := prom.QueryRange(expandFor(bluetoothShareExpr(), inst), start, time.Now(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !hasPositive(res) {
			t.Errorf("the bluetooth scenario shows no turn on a Bluetooth route")
		}
	})

	t.Run("relaunch and reboot annotations mark the second launch", func(t *testing.T) {
		for _, e := range []struct{ name, expr string }{{"relaunch", relaunchExpr()}, {"reboot", rebootExpr()}} {
			expr := expandFor(e.expr, feedClean)
			res, err := prom.QueryRange(expr, time.Now().Add(-30*time.Second), time.Now(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if !hasValue(res) {
				t.Errorf("no %s annotation for the clean installation's second launch\n  %s", e.name, expr)
			}
			for _, r := range res {
				if r.Metric[lInstallation] != feedClean {
					t.Errorf("%s annotation for %v", e.name, r.Metric)
				}
			}
		}
	})
}

// expandFor expands the variables with installation selected.
func expandFor(expr, installation string) string {
	return expand(strings.ReplaceAll(expr, "$"+varInstallation, installation), e2eRateInterval, e2eRange)
}

func hasValue(res []testenv.Sample) bool {
	for _, r := range res {
		for _, v := range r.Values {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

func hasPositive(res []testenv.Sample) bool {
	for _, r := range res {
		for _, v := range r.Values {
			if v > 0 {
				return true
			}
		}
	}
	return false
}

// maxBy is each label value's highest sample.
func maxBy(res []testenv.Sample, label string) map[string]float64 {
	out := map[string]float64{}
	for _, r := range res {
		for _, v := range r.Values {
			if v > out[r.Metric[label]] {
				out[r.Metric[label]] = v
			}
		}
	}
	return out
}

// causeRows are the causes with a row (and its verdict panel) on the overview.
var causeRows = []string{semconv.CauseNetwork, semconv.CauseSynthesis, semconv.CauseState, semconv.CausePool, semconv.CauseBluetooth, semconv.CauseWait}

// labScenarios are run one by one through `percause lab run`.
var labScenarios = []string{"healthy", "network", "synthesis", "bluetooth", "leak", "stale-pool", "late-words", "engine-restart", "offline", "burst"}

// The feeder's own installations.
const (
	feedClean = "e2e-clean" // launched twice: a relaunch after a reboot
	feedExtra = "e2e-extra" // a missing take and a Reconnecting verdict
)

// labTurn is one line of `percause lab run --json`.
type labTurn struct {
	Scenario string   `json:"scenario"`
	Turn     int      `json:"turn"`
	Expected string   `json:"expected"`
	Cause    string   `json:"cause"`
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	TraceID  string   `json:"trace_id"`
	Readings struct {
		PoolResets int `json:"pool_resets"`
	} `json:"readings"`
}

type labRun struct {
	scenario, installation string
	turns                  []labTurn
}

func installationOf(runs []labRun, scenario string) string {
	for _, r := range runs {
		if r.scenario == scenario {
			return r.installation
		}
	}
	return ""
}

// runLab runs one lab scenario against the test's collector.
func runLab(t *testing.T, name string, col collector) []labTurn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.PercauseBin(t), "lab", "run", "--scenario", name, "--json",
		"--otlp", col.otlpURL, "--verdicts", col.verdictFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var turns []labTurn
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var lt labTurn
		if jerr := json.Unmarshal(line, &lt); jerr != nil {
			t.Fatalf("lab run %s: %v in %q", name, jerr, line)
		}
		turns = append(turns, lt)
	}
	if len(turns) == 0 {
		t.Fatalf("lab run %s: no turns (%v)\n%s", name, err, stderr.String())
	}
	if err != nil {
		// A mismatch with the scenario's expectation is the lab's finding,
		// not this test's: the dashboards must show what the verdicts say.
		t.Logf("lab run %s: %v\n%s", name, err, stderr.String())
	}
	return turns
}

// newInstallation waits for an installation Prometheus has not shown
// before, and marks it known.
func newInstallation(t *testing.T, prom *testenv.Prometheus, known map[string]bool) string {
	t.Helper()
	var found string
	testenv.WaitFor(t, settle, "a new installation in Prometheus", func() bool {
		res, err := prom.Query(fmt.Sprintf("group by (%s) (%s)", lInstallation, mTurns.prom()))
		if err != nil {
			return false
		}
		for _, r := range res {
			if id := r.Metric[lInstallation]; id != "" && !known[id] {
				found = id
				return true
			}
		}
		return false
	})
	known[found] = true
	return found
}

// equalCounts compares turn counts by cause (absent = 0).
func equalCounts(got, want map[string]float64) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	for k, v := range got {
		if v != want[k] {
			return false
		}
	}
	return true
}

// primaryCauses are the distinct primary causes of a run's turns.
func primaryCauses(turns []labTurn) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range turns {
		if !seen[t.Cause] {
			seen[t.Cause] = true
			out = append(out, t.Cause)
		}
	}
	return out
}
