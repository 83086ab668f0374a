package dashboards

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// TestAlertRulesWithAShortWindow runs every movement case of the promtool
// tests (pool_reset, the state verdict, Reconnecting) against the rules
// rendered with a 30 s window instead of 10 m, every time in the case
// scaled by the same factor: the window changes how long a movement keeps
// an alert firing, never what a movement is. A relaunch restarting at 0
// stays quiet, a launch born above 0 fires, and each alert resolves one
// window after the last movement. `percause up` renders its rules this way
// when PERCAUSE_ALERT_WINDOW is set.
func TestAlertRulesWithAShortWindow(t *testing.T) {
	if _, err := os.Stat(promtoolBin); err != nil {
		t.Skipf("%s not installed (apt-get install prometheus): %v", promtoolBin, err)
	}
	const window = "30s"
	def, _ := time.ParseDuration(DefaultAlertWindow)
	short, _ := time.ParseDuration(window)
	factor := def / short // 20: one minute becomes 3 s
	scale := func(s string) string {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("eval_time %q: %v", s, err)
		}
		return (d / factor).String()
	}
	files, err := Files(WithAlertWindow(window))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), files[PathPrometheusRules], 0o644); err != nil {
		t.Fatal(err)
	}
	var tests []ruleTest
	for _, tc := range ruleCases() {
		moved := true
		for _, ac := range tc.AlertRuleTests {
			moved = moved && ac.Alertname != AlertSynthesisTooSlow // its for: 2m does not scale with the window
		}
		if !moved {
			continue
		}
		tc.Interval = scale("1m")
		for i, ac := range tc.AlertRuleTests {
			ac.EvalTime = scale(ac.EvalTime)
			for j, ea := range ac.ExpAlerts {
				labels := map[string]string{}
				for k, v := range ea.ExpLabels {
					if k != "severity" && k != lCause { // the rule's own, added again by firesWithin
						labels[k] = v
					}
				}
				ac.ExpAlerts[j] = firesWithin(window, ac.Alertname, labels)
			}
			tc.AlertRuleTests[i] = ac
		}
		tests = append(tests, tc)
	}
	if len(tests) < 6 {
		t.Fatalf("only %d movement cases to scale", len(tests))
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(ruleTestFile{RuleFiles: []string{"alerts.yml"}, EvaluationInterval: scale("1m"), Tests: tests}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yml"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtoolBin, "test", "rules", "alerts_test.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules with a %s window: %v\n%s\n%s", window, err, out, buf.Bytes())
	}
}

// TestAlertWindowAndWebhookOptions: the window reaches every moved-within
// rule and its words, a window Prometheus would misread is refused, and a
// webhook appears in alertmanager.yml only when one is given.
func TestAlertWindowAndWebhookOptions(t *testing.T) {
	files, err := Files(WithAlertWindow("45s"), WithRulesPath("/data/alerts.yml"),
		WithAlertWebhook("http://127.0.0.1:1234/alerts", "/data/relay.token"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[45s]", "offset 45s", "within the last 45s"} {
		if !bytes.Contains(files[PathPrometheusRules], []byte(want)) {
			t.Errorf("rules with a 45s window lack %q", want)
		}
	}
	if bytes.Contains(files[PathPrometheusRules], []byte("10m")) {
		t.Errorf("rules with a 45s window still say 10m:\n%s", files[PathPrometheusRules])
	}
	if !bytes.Contains(files[PathPrometheusConfig], []byte("/data/alerts.yml")) {
		t.Errorf("prometheus.yml does not load the rules path:\n%s", files[PathPrometheusConfig])
	}
	var am struct {
		Receivers []struct {
			Name     string `yaml:"name"`
			Webhooks []struct {
				URL          string `yaml:"url"`
				SendResolved bool   `yaml:"send_resolved"`
				HTTP         struct {
					Authorization struct {
						Type            string `yaml:"type"`
						CredentialsFile string `yaml:"credentials_file"`
					} `yaml:"authorization"`
				} `yaml:"http_config"`
			} `yaml:"webhook_configs"`
		} `yaml:"receivers"`
	}
	if err := yaml.Unmarshal(files[PathAlertmanagerConfig], &am); err != nil {
		t.Fatal(err)
	}
	if len(am.Receivers) != 1 || len(am.Receivers[0].Webhooks) != 1 {
		t.Fatalf("alertmanager.yml with a webhook:\n%s", files[PathAlertmanagerConfig])
	}
	h := am.Receivers[0].Webhooks[0]
	if h.URL != "http://127.0.0.1:1234/alerts" || !h.SendResolved || h.HTTP.Authorization.Type != "Bearer" ||
		h.HTTP.Authorization.CredentialsFile != "/data/relay.token" {
		t.Errorf("webhook = %+v", h)
	}
	plain, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain[PathAlertmanagerConfig], []byte("webhook")) {
		t.Errorf("the committed alertmanager.yml has a webhook:\n%s", plain[PathAlertmanagerConfig])
	}
	for _, bad := range []string{"", "0m", "1m30s", "10", "-5m", "5d", "1.5m", "10M"} {
		if _, err := Files(WithAlertWindow(bad)); err == nil {
			t.Errorf("window %q accepted", bad)
		}
	}
	if _, err := Files(WithAlertWebhook("", "/x")); err == nil {
		t.Error("a credentials file without a webhook URL accepted")
	}
}
