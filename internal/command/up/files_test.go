package up

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/internal/testsupport/testenv"
)

func testConfig(t *testing.T, env map[string]string) Config {
	t.Helper()
	c, err := FromEnv(envOf(env), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDefaultRulesAreTheCommittedOnes: with the default window, the rules
// `up` loads are the committed dashboards/generated/prometheus/alerts.yml,
// byte for byte under the line that says who wrote them.
func TestDefaultRulesAreTheCommittedOnes(t *testing.T) {
	c := testConfig(t, nil)
	p := PathsIn(c.DataDir)
	if err := WriteConfigs(c, p, "", ""); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p.Rules)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "dashboards", dashboards.GeneratedDir, dashboards.PathPrometheusRules))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, []byte(writtenHeader)) || !bytes.Equal(got[len(writtenHeader):], want) {
		t.Errorf("%s is not the committed rules under its header:\n%s", p.Rules, got)
	}
	am, err := os.ReadFile(p.AlertmanagerConfig)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(am, []byte("webhook")) {
		t.Errorf("without a notification target, alertmanager.yml has a webhook:\n%s", am)
	}
}

// TestWrittenConfigsPassTheirCheckers: what `up` writes, with a short
// window and the relay's webhook, passes `promtool check config` (which
// also checks the rules it loads) and `amtool check-config`.
func TestWrittenConfigsPassTheirCheckers(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Skip("amtool not installed (apt-get install prometheus-alertmanager)")
	}
	c := testConfig(t, map[string]string{EnvAlertWindow: "30s", EnvNotifyURL: "https://ntfy.sh/t"})
	p := PathsIn(c.DataDir)
	if err := os.MkdirAll(p.ConfigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Token, []byte("t0ken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteConfigs(c, p, "http://127.0.0.1:40000"+RelayPath, p.Token); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{promtool, "check", "config", p.PrometheusConfig}, {amtool, "check-config", p.AlertmanagerConfig}} {
		out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(cmd, " "), err, out)
		}
	}
	am, _ := os.ReadFile(p.AlertmanagerConfig)
	for _, want := range []string{"url: http://127.0.0.1:40000/alerts", "send_resolved: true", "credentials_file: " + p.Token} {
		if !bytes.Contains(am, []byte(want)) {
			t.Errorf("alertmanager.yml lacks %q:\n%s", want, am)
		}
	}
	if bytes.Contains(am, []byte("t0ken")) || bytes.Contains(am, []byte("ntfy.sh")) {
		t.Errorf("alertmanager.yml holds the token or the target:\n%s", am)
	}
	rules, _ := os.ReadFile(p.Rules)
	if !bytes.Contains(rules, []byte("increase(pippa_pool_resets_total[30s])")) {
		t.Errorf("the rules do not have the 30s window:\n%s", rules)
	}
}
