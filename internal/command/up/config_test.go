package up

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestFromEnvDefaultsAreLocalYAMLs: with nothing set, `up` scrapes, prints
// and checks the addresses the embedded default listens on, and its own
// defaults.
func TestFromEnvDefaultsAreLocalYAMLs(t *testing.T) {
	c, err := FromEnv(envOf(nil), "/home/me")
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoints{OTLP: "127.0.0.1:4318", Prom: "127.0.0.1:9464", Page: "127.0.0.1:9465", Health: "127.0.0.1:13133", Telemetry: "127.0.0.1:8888"}
	if c.Collector != want {
		t.Errorf("collector endpoints %+v, want local.yaml's %+v", c.Collector, want)
	}
	for got, want := range map[string]string{
		c.DataDir: "/home/me/percause-data", c.VerdictFile: "/home/me/percause-data/verdicts.jsonl",
		c.PrometheusEndpoint: DefaultPrometheusEndpoint, c.AlertmanagerEndpoint: DefaultAlertmanagerEndpoint,
		c.PageURL: "http://127.0.0.1:9465/", c.AlertWindow: "10m", c.NotifyFormat: FormatNtfy, c.NotifyURL: "",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if c.ScrapeInterval != DefaultScrapeInterval {
		t.Errorf("scrape interval %s", c.ScrapeInterval)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// TestFromEnvHonoursTheCollectorsVariables: the same PERCAUSE_* settings
// as `percause collector`, and up's own.
func TestFromEnvHonoursTheCollectorsVariables(t *testing.T) {
	c, err := FromEnv(envOf(map[string]string{
		"PERCAUSE_OTLP_ENDPOINT": "127.0.0.1:5318", "PERCAUSE_PROM_ENDPOINT": "127.0.0.1:5464",
		"PERCAUSE_PAGE_ENDPOINT": "127.0.0.1:5465", "PERCAUSE_HEALTH_ENDPOINT": "127.0.0.1:5133",
		"PERCAUSE_TELEMETRY_PORT": "5888", "PERCAUSE_DATA_DIR": "data", "PERCAUSE_VERDICT_FILE": "/v/verdicts.jsonl",
		EnvPrometheusEndpoint: "127.0.0.1:6090", EnvAlertmanagerEndpoint: "[::1]:6093",
		EnvNotifyURL: "https://ntfy.sh/topic", EnvNotifyToken: "tk", EnvNotifyFormat: "json",
		EnvPageURL: "https://laptop.tailnet.ts.net:9465/", EnvAlertWindow: "2m", EnvScrapeInterval: "2s",
	}), "/w")
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoints{OTLP: "127.0.0.1:5318", Prom: "127.0.0.1:5464", Page: "127.0.0.1:5465", Health: "127.0.0.1:5133", Telemetry: "127.0.0.1:5888"}
	if c.Collector != want || c.DataDir != "/w/data" || c.VerdictFile != "/v/verdicts.jsonl" ||
		c.PrometheusEndpoint != "127.0.0.1:6090" || c.AlertmanagerEndpoint != "[::1]:6093" ||
		c.NotifyURL != "https://ntfy.sh/topic" || c.NotifyToken != "tk" || c.NotifyFormat != FormatJSON ||
		c.PageURL != "https://laptop.tailnet.ts.net:9465/" || c.AlertWindow != "2m" || c.ScrapeInterval != 2*time.Second {
		t.Errorf("config %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("does not validate: %v", err)
	}
	if c.alertWindow() != 2*time.Minute {
		t.Errorf("alert window %s", c.alertWindow())
	}
	if _, err := FromEnv(envOf(map[string]string{EnvScrapeInterval: "often"}), "/w"); err == nil {
		t.Error("a scrape interval that does not parse is accepted")
	}
}

// TestValidateNamesTheSetting: every refusal names the variable to change.
func TestValidateNamesTheSetting(t *testing.T) {
	base, err := FromEnv(envOf(nil), "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"Prometheus beyond loopback", func(c *Config) { c.PrometheusEndpoint = "0.0.0.0:9466" }, EnvPrometheusEndpoint + "=0.0.0.0:9466: not a loopback address"},
		{"Alertmanager beyond loopback", func(c *Config) { c.AlertmanagerEndpoint = "192.168.1.5:9467" }, EnvAlertmanagerEndpoint},
		{"a port out of range", func(c *Config) { c.PrometheusEndpoint = "127.0.0.1:70000" }, EnvPrometheusEndpoint},
		{"no port", func(c *Config) { c.Collector.OTLP = "127.0.0.1" }, "PERCAUSE_OTLP_ENDPOINT"},
		{"a relative data folder", func(c *Config) { c.DataDir = "data" }, "PERCAUSE_DATA_DIR"},
		{"a notification URL without a scheme", func(c *Config) { c.NotifyURL = "ntfy.sh/topic" }, EnvNotifyURL},
		{"a notification URL of another scheme", func(c *Config) { c.NotifyURL = "ftp://ntfy.sh/topic" }, EnvNotifyURL},
		{"a token without a target", func(c *Config) { c.NotifyToken = "tk" }, EnvNotifyToken + " is set without " + EnvNotifyURL},
		{"an unknown format", func(c *Config) { c.NotifyFormat = "xml" }, EnvNotifyFormat},
		{"a page URL that is a path", func(c *Config) { c.PageURL = "/page" }, EnvPageURL},
		{"a window of two units", func(c *Config) { c.AlertWindow = "1m30s" }, EnvAlertWindow},
		{"a scrape interval under a second", func(c *Config) { c.ScrapeInterval = 500 * time.Millisecond }, EnvScrapeInterval},
		{"a scrape interval of a second and a half", func(c *Config) { c.ScrapeInterval = 1500 * time.Millisecond }, EnvScrapeInterval},
	} {
		c := base
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

// TestRedactHidesTheTopic: an ntfy topic is the secret of its
// subscription, and a URL may carry a password: neither is printed.
func TestRedactHidesTheTopic(t *testing.T) {
	for in, want := range map[string]string{
		"https://ntfy.sh/my-secret-topic":         "https://ntfy.sh/…",
		"https://user:pass@ntfy.example/t?x=1":    "https://ntfy.example/…",
		"http://127.0.0.1:8080":                   "http://127.0.0.1:8080/",
		"http://127.0.0.1:8080/":                  "http://127.0.0.1:8080/",
		"::not a url":                             "(a URL that does not parse)",
		"https://hooks.example/services/T0/B0/XX": "https://hooks.example/…",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFindBinaries: flags first, then PATH, Debian's name for
// Alertmanager too; a missing one names the install commands.
func TestFindBinaries(t *testing.T) {
	dir := t.TempDir()
	exe := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notExe := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExe, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	onPath := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, x := range names {
				if x == n {
					return "/usr/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	for _, tc := range []struct {
		name         string
		prom, am     string
		look         func(string) (string, error)
		wantP, wantA string
		missing      []string
	}{
		{"Debian's packages", "", "", onPath("prometheus", "prometheus-alertmanager"), "/usr/bin/prometheus", "/usr/bin/prometheus-alertmanager", nil},
		{"Homebrew's names", "", "", onPath("prometheus", "alertmanager", "prometheus-alertmanager"), "/usr/bin/prometheus", "/usr/bin/alertmanager", nil},
		{"flags over PATH", exe("p"), exe("a"), onPath("prometheus", "alertmanager"), filepath.Join(dir, "p"), filepath.Join(dir, "a"), nil},
		{"nothing installed", "", "", onPath(), "", "", []string{"prometheus (looked for prometheus on PATH)", "alertmanager (looked for alertmanager, prometheus-alertmanager on PATH)"}},
		{"Alertmanager missing", "", "", onPath("prometheus"), "", "", []string{"alertmanager (looked for"}},
		{"a flag naming no executable", notExe, "", onPath("prometheus", "alertmanager"), "", "", []string{"--prometheus " + notExe + " (not an executable file)"}},
		{"a flag naming nothing", filepath.Join(dir, "none"), "", onPath("prometheus", "alertmanager"), "", "", []string{"--prometheus"}},
	} {
		p, a, err := FindBinaries(tc.prom, tc.am, tc.look)
		if tc.missing == nil {
			if err != nil || p != tc.wantP || a != tc.wantA {
				t.Errorf("%s: %q %q %v, want %q %q", tc.name, p, a, err, tc.wantP, tc.wantA)
			}
			continue
		}
		var me *MissingError
		if !errors.As(err, &me) {
			t.Errorf("%s: %v, want a MissingError", tc.name, err)
			continue
		}
		for _, m := range tc.missing {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q does not say %q", tc.name, err, m)
			}
		}
		for _, cmd := range []string{"apt-get install prometheus prometheus-alertmanager", "brew install prometheus alertmanager"} {
			if !strings.Contains(err.Error(), cmd) {
				t.Errorf("%s: %q lacks the install command %q", tc.name, err, cmd)
			}
		}
	}
}
