package dashboards

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/percause/percause/instr/semconv"
)

// promtoolBin is the Debian package's promtool (CI installs it).
const promtoolBin = "/usr/bin/promtool"

// promtoolTestFile is the committed promtool test file, rendered from
// ruleCases; `promtool test rules` runs it as it is, without Go.
const promtoolTestFile = "testdata/promtool/alerts_test.yml"

type series struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

type expAlert struct {
	ExpLabels      map[string]string `yaml:"exp_labels"`
	ExpAnnotations map[string]string `yaml:"exp_annotations"`
}

type alertCase struct {
	EvalTime  string     `yaml:"eval_time"`
	Alertname string     `yaml:"alertname"`
	ExpAlerts []expAlert `yaml:"exp_alerts"`
}

type ruleTest struct {
	Name           string      `yaml:"name"`
	Interval       string      `yaml:"interval"`
	InputSeries    []series    `yaml:"input_series"`
	AlertRuleTests []alertCase `yaml:"alert_rule_test"`
}

type ruleTestFile struct {
	RuleFiles          []string   `yaml:"rule_files"`
	EvaluationInterval string     `yaml:"evaluation_interval"`
	Tests              []ruleTest `yaml:"tests"`
}

// fires is the alert expected with these labels (besides alertname and
// severity, added from the rule), annotations rendered from the rule.
func fires(name string, labels map[string]string) expAlert {
	return firesWithin(DefaultAlertWindow, name, labels)
}

// firesWithin is fires for the rules rendered with alert window w.
func firesWithin(w, name string, labels map[string]string) expAlert {
	var a Alert
	for _, x := range AlertsWithin(w) {
		if x.Name == name {
			a = x
		}
	}
	l := a.Labels() // the rule's own: its severity, and its cause
	for k, v := range labels {
		l[k] = v
	}
	render := func(s string) string {
		return regexp.MustCompile(`\{\{ \$labels\.([a-z_]+) \}\}`).ReplaceAllStringFunc(s, func(m string) string {
			return labels[regexp.MustCompile(`\$labels\.([a-z_]+)`).FindStringSubmatch(m)[1]]
		})
	}
	return expAlert{ExpLabels: l, ExpAnnotations: map[string]string{"summary": render(a.Summary), "description": render(a.Description)}}
}

// tally is inst with the installation's running tally (LabelTally), which
// a movement alert carries.
func tally(id, n string) map[string]string {
	return map[string]string{lInstallation: id, LabelTally: n}
}

// ruleCases: every alert firing and every case that must stay quiet, in
// particular a relaunch restarting the pool_reset tally at 0. Samples are a
// minute apart; "_" is no sample (the series does not exist yet or any more).
func ruleCases() []ruleTest {
	pool := func(launch, lane, values string) series {
		return series{Series: `pippa_pool_resets_total{app_installation_id="i1",service_instance_id="` + launch + `",pippa_lane="` + lane + `"}`, Values: values}
	}
	return []ruleTest{
		{
			Name: "pool_reset moves within a launch: fires for the window, then resolves",
			InputSeries: []series{
				pool("l1", semconv.LaneControl, "0x10 1x30"),
				pool("l1", semconv.LaneBulk, "0x40"),
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "5m", Alertname: AlertPoolResetMoved},
				{EvalTime: "12m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i1", "1"))}},
				{EvalTime: "19m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i1", "1"))}},
				{EvalTime: "25m", Alertname: AlertPoolResetMoved},
			},
		},
		{
			// Every movement is told: the second heal while the alert
			// fires is a new alert (tally 2) in the same group, which
			// Alertmanager notifies; the alert at tally 1 resolves. The
			// window runs from the last heal (at 17m here).
			Name: "a second heal inside the window: a new alert at the new tally replaces the first",
			InputSeries: []series{
				pool("l1", semconv.LaneControl, "0x10 1x5 2x25"),
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "12m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i1", "1"))}},
				{EvalTime: "18m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i1", "2"))}},
				{EvalTime: "26m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i1", "2"))}},
				{EvalTime: "28m", Alertname: AlertPoolResetMoved},
			},
		},
		{
			Name: "relaunch: the old launch's tally of 2 stops, the new launch restarts at 0: quiet",
			InputSeries: []series{
				pool("l1", semconv.LaneControl, "2x20 _x20"),
				pool("l2", semconv.LaneControl, "_x20 0x20"),
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "15m", Alertname: AlertPoolResetMoved},
				{EvalTime: "21m", Alertname: AlertPoolResetMoved},
				{EvalTime: "25m", Alertname: AlertPoolResetMoved},
				{EvalTime: "35m", Alertname: AlertPoolResetMoved},
			},
		},
		{
			// The collector keeps serving a launch's last tally for a day
			// (metric_expiration), so the old launch's series goes on beside
			// the new one: two flat series, neither moving.
			Name: "relaunch while the old launch's tally is still exported: quiet",
			InputSeries: []series{
				pool("l1", semconv.LaneControl, "3x40"),
				pool("l1", semconv.LaneBulk, "1x40"),
				pool("l2", semconv.LaneControl, "_x20 0x20"),
				pool("l2", semconv.LaneBulk, "_x20 0x20"),
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "15m", Alertname: AlertPoolResetMoved},
				{EvalTime: "21m", Alertname: AlertPoolResetMoved},
				{EvalTime: "25m", Alertname: AlertPoolResetMoved},
				{EvalTime: "35m", Alertname: AlertPoolResetMoved},
			},
		},
		{
			// The new launch heals: that is movement, whatever the old
			// launch's tally was.
			Name: "the new launch's tally moves after a relaunch: fires",
			InputSeries: []series{
				pool("l1", semconv.LaneControl, "3x40"),
				pool("l2", semconv.LaneControl, "_x20 0x5 1x15"),
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "24m", Alertname: AlertPoolResetMoved},
				{EvalTime: "27m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i1", "4"))}},
			},
		},
		{
			Name: "a launch whose first export already carries a heal (a new series born at 1): fires",
			InputSeries: []series{
				pool("l1", semconv.LaneControl, "2x20 _x20"),
				pool("l2", semconv.LaneControl, "_x20 1x20"),
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "15m", Alertname: AlertPoolResetMoved},
				{EvalTime: "22m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i1", "3"))}},
				{EvalTime: "35m", Alertname: AlertPoolResetMoved},
			},
		},
		{
			Name: "pool_reset moves on one installation only: the alert names it",
			InputSeries: []series{
				{Series: `pippa_pool_resets_total{app_installation_id="i1",service_instance_id="a",pippa_lane="bulk"}`, Values: "0x30"},
				{Series: `pippa_pool_resets_total{app_installation_id="i2",service_instance_id="b",pippa_lane="bulk"}`, Values: "0x10 1x10 2x10"},
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "22m", Alertname: AlertPoolResetMoved, ExpAlerts: []expAlert{fires(AlertPoolResetMoved, tally("i2", "2"))}},
			},
		},
		{
			Name: "a live count growing turn over turn: the state verdict fires; other causes are quiet",
			InputSeries: []series{
				{Series: `percause_cause_implicated_total{app_installation_id="i1",percause_cause="network"}`, Values: "1+1x30"},
				{Series: `percause_cause_implicated_total{app_installation_id="i1",percause_cause="state"}`, Values: "_x15 1x15"},
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "10m", Alertname: AlertLiveCountGrowing},
				{EvalTime: "17m", Alertname: AlertLiveCountGrowing, ExpAlerts: []expAlert{fires(AlertLiveCountGrowing, tally("i1", "1"))}},
				{EvalTime: "29m", Alertname: AlertLiveCountGrowing},
			},
		},
		{
			Name: "synthesis slower than real time for 2 minutes fires; faster than real time is quiet",
			InputSeries: []series{
				// Slow engine launch: 1 take a minute at rate 0.8.
				{Series: `pippa_tts_take_rate_sum{service_name="pippa-engine",service_instance_id="slow"}`, Values: "0+0.8x40"},
				{Series: `pippa_tts_take_rate_count{service_name="pippa-engine",service_instance_id="slow"}`, Values: "0+1x40"},
				// Fast engine launch: rate 1.6.
				{Series: `pippa_tts_take_rate_sum{service_name="pippa-engine",service_instance_id="fast"}`, Values: "0+1.6x40"},
				{Series: `pippa_tts_take_rate_count{service_name="pippa-engine",service_instance_id="fast"}`, Values: "0+1x40"},
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "1m", Alertname: AlertSynthesisTooSlow},
				{EvalTime: "20m", Alertname: AlertSynthesisTooSlow, ExpAlerts: []expAlert{
					fires(AlertSynthesisTooSlow, map[string]string{lLaunch: "slow"}),
				}},
			},
		},
		{
			// The engine's installation, when it sets one, is the alert's
			// label: the page links the alert to that installation.
			Name: "synthesis slower than real time names the engine's installation",
			InputSeries: []series{
				{Series: `pippa_tts_take_rate_sum{service_name="pippa-engine",app_installation_id="i1",service_instance_id="slow"}`, Values: "0+0.8x40"},
				{Series: `pippa_tts_take_rate_count{service_name="pippa-engine",app_installation_id="i1",service_instance_id="slow"}`, Values: "0+1x40"},
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "20m", Alertname: AlertSynthesisTooSlow, ExpAlerts: []expAlert{
					fires(AlertSynthesisTooSlow, map[string]string{lLaunch: "slow", lInstallation: "i1"}),
				}},
			},
		},
		{
			Name: "Reconnecting fired (a status counter born at 1); other statuses are quiet",
			InputSeries: []series{
				{Series: `pippa_link_status_changes_total{app_installation_id="i1",service_instance_id="a",pippa_link_status="ok"}`, Values: "1+1x30"},
				{Series: `pippa_link_status_changes_total{app_installation_id="i1",service_instance_id="a",pippa_link_status="reconnecting"}`, Values: "_x10 1x10 2x10"},
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "5m", Alertname: AlertReconnectingFired},
				{EvalTime: "12m", Alertname: AlertReconnectingFired, ExpAlerts: []expAlert{fires(AlertReconnectingFired, tally("i1", "1"))}},
				{EvalTime: "25m", Alertname: AlertReconnectingFired, ExpAlerts: []expAlert{fires(AlertReconnectingFired, tally("i1", "2"))}},
				{EvalTime: "33m", Alertname: AlertReconnectingFired},
			},
		},
		{
			// The processor's drop counter is born at its first drop (1),
			// as every reason of it is: the first turn the phone never
			// reported is told, and so is a later one after a quiet window;
			// other reasons (a duplicate span, a take without an ID) are not.
			Name: "the engine served turns whose phone never reported (a drop counter born at 1); other drops are quiet",
			InputSeries: []series{
				{Series: `otelcol_processor_verdict_dropped_total{processor="verdict",reason="duplicate_span"}`, Values: "1+1x40"},
				{Series: `otelcol_processor_verdict_dropped_total{processor="verdict",reason="no_turn"}`, Values: "_x10 1x20 2x10"},
			},
			AlertRuleTests: []alertCase{
				{EvalTime: "5m", Alertname: AlertPhoneSilent},
				{EvalTime: "11m", Alertname: AlertPhoneSilent, ExpAlerts: []expAlert{fires(AlertPhoneSilent, nil)}},
				{EvalTime: "19m", Alertname: AlertPhoneSilent, ExpAlerts: []expAlert{fires(AlertPhoneSilent, nil)}},
				{EvalTime: "25m", Alertname: AlertPhoneSilent},
				{EvalTime: "31m", Alertname: AlertPhoneSilent, ExpAlerts: []expAlert{fires(AlertPhoneSilent, nil)}},
				{EvalTime: "45m", Alertname: AlertPhoneSilent},
			},
		},
	}
}

func renderPromtoolTests(t *testing.T) []byte {
	t.Helper()
	tests := ruleCases()
	for i := range tests {
		tests[i].Interval = "1m"
	}
	f := ruleTestFile{
		RuleFiles:          []string{"../../" + GeneratedDir + "/" + PathPrometheusRules},
		EvaluationInterval: "1m",
		Tests:              tests,
	}
	var buf bytes.Buffer
	buf.WriteString("# Rendered from promtool_test.go (go test ./dashboards -run Promtool -update). Run: promtool test rules " + filepath.Base(promtoolTestFile) + "\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAlertRulesWithPromtool runs `promtool test rules` on the committed
// test file against the generated rules.
func TestAlertRulesWithPromtool(t *testing.T) {
	want := renderPromtoolTests(t)
	if *update {
		if err := os.MkdirAll(filepath.Dir(promtoolTestFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(promtoolTestFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(promtoolTestFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./dashboards -run Promtool -update", promtoolTestFile)
	}
	if _, err := os.Stat(promtoolBin); err != nil {
		t.Skipf("%s not installed (apt-get install prometheus): %v", promtoolBin, err)
	}
	cmd := exec.Command(promtoolBin, "test", "rules", filepath.Base(promtoolTestFile))
	cmd.Dir = filepath.Dir(promtoolTestFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
