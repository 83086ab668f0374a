package dashboards

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testenv"
)

// The end-to-end proof: the real collector (percause collector on its
// embedded default configuration), a real Prometheus scraping it and
// evaluating the generated alert rules, a real Alertmanager, fed by the
// real SDK with one scenario per cause. Every query of every panel,
// annotation, variable and rule is read against it.

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
)

// collector is a running `percause collector` with free loopback ports.
type collector struct {
	otlpURL, promTarget, telemetryTarget string
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
	t.Setenv("PERCAUSE_DATA_DIR", dir)
	t.Setenv("PERCAUSE_VERDICT_FILE", filepath.Join(dir, "verdicts.jsonl"))
	t.Setenv("PERCAUSE_VERDICT_WAIT", "2s")
	proc := testenv.Start(t, dir, bin, "collector")
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
	}
}

// knownEmpty are queries that need a part the test pipeline does not have,
// each with the reason. Everything else must return data.
var knownEmpty = map[string]string{
	"Exporter queues":           "the embedded default (local.yaml) has no exporter with a sending queue; the compose stack's Jaeger exporter has one",
	"Send failures by exporter": "nothing fails to send in a healthy test pipeline",
	"Evictions and drops":       "nothing is dropped in a healthy test pipeline",
	"Spans refused":             "nothing is refused in a healthy test pipeline",
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

	// The clean installation's first launch, before everything else: its
	// second launch (a reboot) comes at the end.
	sc := scenarios()
	clean := sc[len(sc)-1]
	first := f.launch(t, clean.installation)
	clean.run(t, f, first)
	must(t, first.ForceFlush(context.Background()))
	firstAt := time.Now()

	launches := map[string]*instr.SDK{clean.installation: first}
	for _, s := range sc[:len(sc)-1] {
		p := f.launch(t, s.installation)
		s.run(t, f, p)
		must(t, p.ForceFlush(context.Background()))
		launches[s.installation] = p
	}
	must(t, f.engine.ForceFlush(context.Background()))

	// A second, plain turn on every launch once the first round's series
	// are in Prometheus: quantiles and means read growth, and a series'
	// growth needs a later sample (its birth is counted from 0).
	time.Sleep(3 * time.Second)
	for _, s := range sc {
		if s.cause == semconv.CauseUnknown {
			continue
		}
		f.turn(t, launches[s.installation], turn{units: []unit{{lead: 0.2}}, deviceUptime: 90000, appUptime: 3600})
		must(t, launches[s.installation].ForceFlush(context.Background()))
	}
	must(t, f.engine.ForceFlush(context.Background()))

	t.Run("each scenario's verdict reaches Prometheus", func(t *testing.T) {
		for _, s := range sc {
			prom.WaitForQuery(t, settle, fmt.Sprintf(`%s{%s=%q,%s=%q}`, promTurns, lInstallation, s.installation, lCause, s.cause))
		}
	})
	if t.Failed() {
		names, _ := prom.SeriesNames()
		t.Fatalf("series in Prometheus: %v", names)
	}

	t.Run("the pool-reset alert reaches Alertmanager within its window", func(t *testing.T) {
		window, _ := time.ParseDuration(DefaultAlertWindow)
		testenv.WaitFor(t, window, "PercausePoolResetMoved in Alertmanager", func() bool {
			alerts, err := am.Alerts()
			if err != nil {
				return false
			}
			for _, a := range alerts {
				if a.Labels["alertname"] == AlertPoolResetMoved && a.Labels[lInstallation] == "e2e-pool" {
					return true
				}
			}
			return false
		})
		alerts, _ := am.Alerts()
		for _, a := range alerts {
			if a.Labels["alertname"] == AlertPoolResetMoved && a.Labels[lInstallation] != "e2e-pool" {
				t.Errorf("pool alert on an installation whose pool never healed: %v", a.Labels)
			}
		}
	})

	// The reboot: a second launch of the clean installation with a lower
	// device uptime, once the first is annotationWindow old.
	if wait := time.Until(firstAt.Add(relaunchAfter)); wait > 0 {
		t.Logf("waiting %s so the relaunch is %s after the first launch", wait.Round(time.Second), annotationWindow)
		time.Sleep(wait)
	}
	second := f.launch(t, clean.installation)
	f.turn(t, second, turn{units: []unit{{}}, deviceUptime: 120, appUptime: 30})
	must(t, second.ForceFlush(context.Background()))
	prom.WaitForQuery(t, settle, fmt.Sprintf(`count(count by (%s) (%s{%s=%q}))  > 1`, lLaunch, mTurns.prom(), lInstallation, clean.installation))

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
		for _, s := range sc {
			// Turns by primary cause, for the scenario's installation only.
			expr := expandFor(sumGrowth(sel(promTurns, verdictScope), stepWindow, lCause), s.installation)
			res, err := prom.QueryRange(expr, start, time.Now(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got := maxBy(res, lCause); got[s.cause] <= 0 {
				t.Errorf("%s: turns by primary cause show %v, want %s", s.name, got, s.cause)
			}
			if s.cause == semconv.CauseNone {
				continue
			}
			// The cause row's verdict panel, for that installation.
			if s.cause == semconv.CauseUnknown {
				continue // no row: unknown is a verdict about missing data
			}
			expr = expandFor(implicated(s.cause, stepWindow), s.installation)
			res, err = prom.QueryRange(expr, start, time.Now(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if !hasPositive(res) {
				t.Errorf("%s: the %s row shows no turn implicating %s\n  %s", s.name, s.cause, s.cause, expr)
			}
			// And no other scenario's installation implicates it as primary.
			for _, o := range sc {
				if o.installation == s.installation {
					continue
				}
				e := expandFor(sumGrowth(sel(promTurns, with(verdictScope, eq(lCause, s.cause))), stepWindow), o.installation)
				r, err := prom.QueryRange(e, start, time.Now(), time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if hasPositive(r) {
					t.Errorf("scenario %s shows primary cause %s", o.name, s.cause)
				}
			}
		}
	})

	t.Run("relaunch and reboot annotations mark the second launch", func(t *testing.T) {
		for _, e := range []struct{ name, expr string }{{"relaunch", relaunchExpr()}, {"reboot", rebootExpr()}} {
			expr := expandFor(e.expr, clean.installation)
			res, err := prom.QueryRange(expr, time.Now().Add(-30*time.Second), time.Now(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if !hasValue(res) {
				t.Errorf("no %s annotation for the clean installation's second launch\n  %s", e.name, expr)
			}
			for _, r := range res {
				if r.Metric[lInstallation] != clean.installation {
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
