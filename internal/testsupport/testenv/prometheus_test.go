package testenv

import (
	"strings"
	"testing"
	"time"
)

func TestPrometheusConfigYAML(t *testing.T) {
	got := prometheusYAML(promConfig{
		targets: []string{"127.0.0.1:9464", "127.0.0.1:8888"}, ruleFiles: []string{"/r/alerts.yml"},
		alertmanager: "127.0.0.1:9093", scrape: time.Second, eval: 2 * time.Second,
	})
	for _, want := range []string{
		"scrape_interval: 1s", "evaluation_interval: 2s", `- "/r/alerts.yml"`, `targets: ["127.0.0.1:9093"]`,
		"job_name: target-0", "job_name: target-1", "honor_labels: true", `targets: ["127.0.0.1:8888"]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
	if empty := prometheusYAML(promConfig{scrape: time.Second, eval: time.Second}); !strings.Contains(empty, "scrape_configs:\n  []") {
		t.Errorf("no targets:\n%s", empty)
	}
}

func TestStartPrometheusAnswersQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Prometheus")
	}
	p := StartPrometheus(t)
	got, err := p.Query("vector(42)")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Values) != 1 || got[0].Values[0] != 42 {
		t.Fatalf("vector(42) = %+v", got)
	}
	now := time.Now()
	rng, err := p.QueryRange("vector(1)", now.Add(-10*time.Second), now, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(rng) != 1 || len(rng[0].Values) != 3 {
		t.Fatalf("range query = %+v", rng)
	}
	if _, err := p.Query("sum(("); err == nil || !strings.Contains(err.Error(), "bad_data") {
		t.Fatalf("a bad query gives %v, want Prometheus's bad_data error", err)
	}
}

func TestStartAlertmanagerListsAlerts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Alertmanager")
	}
	a := StartAlertmanager(t)
	alerts, err := a.Alerts()
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 0 {
		t.Fatalf("a new Alertmanager holds alerts: %+v", alerts)
	}
}
