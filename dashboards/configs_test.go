package dashboards

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// amtoolBin is the Debian package's amtool (with prometheus-alertmanager).
const amtoolBin = "/usr/bin/amtool"

// TestGeneratedConfigsPassTheirCheckers runs `promtool check config` on the
// compose stack's prometheus.yml (its rule file path pointed at the
// generated rules, as the compose mount does) and `amtool check-config` on
// alertmanager.yml.
func TestGeneratedConfigsPassTheirCheckers(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "alerts.yml")
	if err := os.WriteFile(rules, files[PathPrometheusRules], 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(files[PathPrometheusConfig]), PrometheusRulesPath, rules, 1)
	if cfg == string(files[PathPrometheusConfig]) {
		t.Fatalf("prometheus.yml does not load %s", PrometheusRulesPath)
	}
	promCfg := filepath.Join(dir, "prometheus.yml")
	amCfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(promCfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(amCfg, files[PathAlertmanagerConfig], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bin  string
		args []string
	}{
		{promtoolBin, []string{"check", "config", promCfg}},
		{amtoolBin, []string{"check-config", amCfg}},
	} {
		if _, err := os.Stat(c.bin); err != nil {
			t.Skipf("%s not installed: %v", c.bin, err)
		}
		out, err := exec.Command(c.bin, c.args...).CombinedOutput()
		if err != nil {
			t.Errorf("%s %s: %v\n%s", filepath.Base(c.bin), strings.Join(c.args, " "), err, out)
		}
	}
}
