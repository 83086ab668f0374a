package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// testEnv is the environment a person sets before `docker compose up`: the
// two required variables.
var testEnv = []string{"GRAFANA_ADMIN_PASSWORD=test-only-password", "PERCAUSE_OTLP_TOKEN=test-only-token"}

func loadCompose(t *testing.T, env []string) (*types.Project, error) {
	t.Helper()
	root := testenv.RepoRoot()
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root),
		cli.WithEnv(env),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

func mustLoad(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadCompose(t, testEnv)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

func TestComposeHasTheWholeStack(t *testing.T) {
	p := mustLoad(t)
	for _, name := range []string{"collector", "prometheus", "alertmanager", "grafana", "jaeger"} {
		if _, err := p.GetService(name); err != nil {
			t.Errorf("service %s: %v", name, err)
		}
	}
	c, _ := p.GetService("collector")
	if c.Build == nil || c.Build.Dockerfile == "" {
		t.Errorf("collector is not built from this repository: %+v", c.Build)
	} else if _, err := os.Stat(filepath.Join(c.Build.Context, c.Build.Dockerfile)); err != nil {
		t.Errorf("collector Dockerfile: %v", err)
	}
}

// TestComposeMountsExist: every bind mount's source is in the repository,
// so `docker compose up` never creates an empty folder in place of a file.
func TestComposeMountsExist(t *testing.T) {
	p := mustLoad(t)
	root := testenv.RepoRoot()
	n := 0
	for _, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			n++
			if !strings.HasPrefix(v.Source, root) {
				t.Errorf("%s mounts %s from outside the repository", s.Name, v.Source)
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s mounts %s: %v", s.Name, v.Source, err)
			}
			if !v.ReadOnly {
				t.Errorf("%s mounts %s read-write; configuration is mounted read-only", s.Name, v.Source)
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d bind mounts found", n)
	}
}

// TestComposeMountsTheGeneratedFiles: Prometheus reads the generated rules
// and configuration, Grafana the generated provisioning and dashboards, at
// the paths the generated files refer to.
func TestComposeMountsTheGeneratedFiles(t *testing.T) {
	p := mustLoad(t)
	gen := filepath.Join(testenv.RepoRoot(), "dashboards", dashboards.GeneratedDir)
	want := map[string]map[string]string{
		"prometheus": {
			filepath.Join(gen, dashboards.PathPrometheusConfig): "/etc/prometheus/prometheus.yml",
			filepath.Join(gen, dashboards.PathPrometheusRules):  dashboards.PrometheusRulesPath,
		},
		"alertmanager": {
			filepath.Join(gen, dashboards.PathAlertmanagerConfig): "/etc/alertmanager/alertmanager.yml",
		},
		"grafana": {
			filepath.Join(gen, filepath.Dir(dashboards.PathOverviewJSON)):       dashboards.GrafanaDashboardsPath,
			filepath.Join(gen, filepath.Dir(dashboards.PathGrafanaDatasources)): "/etc/grafana/provisioning/datasources",
			filepath.Join(gen, filepath.Dir(dashboards.PathGrafanaDashboards)):  "/etc/grafana/provisioning/dashboards",
			filepath.Join(gen, filepath.Dir(dashboards.PathGrafanaAlertRules)):  "/etc/grafana/provisioning/alerting",
		},
	}
	for svc, mounts := range want {
		s, err := p.GetService(svc)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, v := range s.Volumes {
			got[v.Source] = v.Target
		}
		for src, dst := range mounts {
			if got[src] != dst {
				t.Errorf("%s: want %s mounted at %s, got %q", svc, src, dst, got[src])
			}
		}
	}
	g, _ := p.GetService("grafana")
	if home := g.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home == nil ||
		*home != dashboards.GrafanaDashboardsPath+"/"+filepath.Base(dashboards.PathOverviewJSON) {
		t.Errorf("Grafana's home dashboard is not the overview: %v", home)
	}
}

// TestComposePortsOnLoopback: by default nothing listens beyond this machine.
func TestComposePortsOnLoopback(t *testing.T) {
	p := mustLoad(t)
	n := 0
	for _, s := range p.Services {
		for _, port := range s.Ports {
			n++
			if port.HostIP != "127.0.0.1" {
				t.Errorf("%s publishes %d on %q, not 127.0.0.1", s.Name, port.Target, port.HostIP)
			}
		}
	}
	if n == 0 {
		t.Fatal("no published ports")
	}
	// PERCAUSE_BIND moves them all, e.g. to the tailnet address.
	p2, err := loadCompose(t, append(testEnv, "PERCAUSE_BIND=100.64.0.7"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p2.Services {
		for _, port := range s.Ports {
			if port.HostIP != "100.64.0.7" {
				t.Errorf("%s ignores PERCAUSE_BIND: %q", s.Name, port.HostIP)
			}
		}
	}
}

// TestComposeGrafanaSecurity: anonymous access is off and the admin
// password comes only from the environment (compose refuses to load
// without it).
func TestComposeGrafanaSecurity(t *testing.T) {
	p := mustLoad(t)
	g, _ := p.GetService("grafana")
	if v := g.Environment["GF_AUTH_ANONYMOUS_ENABLED"]; v == nil || *v != "false" {
		t.Errorf("GF_AUTH_ANONYMOUS_ENABLED = %v, want false", v)
	}
	if v := g.Environment["GF_SECURITY_ADMIN_PASSWORD"]; v == nil || *v != "test-only-password" {
		t.Errorf("admin password is not taken from GRAFANA_ADMIN_PASSWORD: %v", v)
	}
	if _, err := loadCompose(t, testEnv[1:]); err == nil || !strings.Contains(err.Error(), "GRAFANA_ADMIN_PASSWORD") {
		t.Errorf("compose loads without GRAFANA_ADMIN_PASSWORD (err %v); it must refuse", err)
	}
	c, _ := p.GetService("collector")
	if v := c.Environment["PERCAUSE_OTLP_TOKEN"]; v == nil || *v != "test-only-token" {
		t.Errorf("the collector's OTLP token is not taken from PERCAUSE_OTLP_TOKEN: %v", v)
	}
	if _, err := loadCompose(t, testEnv[:1]); err == nil || !strings.Contains(err.Error(), "PERCAUSE_OTLP_TOKEN") {
		t.Errorf("compose loads without PERCAUSE_OTLP_TOKEN (err %v); it must refuse", err)
	}
}

// TestComposeHoldsNoSecret: no password, token or key is written in the
// compose file or the generated provisioning.
func TestComposeHoldsNoSecret(t *testing.T) {
	root := testenv.RepoRoot()
	secret := regexp.MustCompile(`(?i)(password|token|secret|api[_-]?key)\s*[:=]\s*["']?[A-Za-z0-9+/_\-]{6,}`)
	var files []string
	files = append(files, filepath.Join(root, "docker-compose.yml"))
	_ = filepath.WalkDir(filepath.Join(root, "dashboards", dashboards.GeneratedDir), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range secret.FindAllString(string(b), -1) {
			if strings.Contains(m, "${") || strings.Contains(m, "$"+"{") {
				continue
			}
			t.Errorf("%s: looks like a secret: %q", f, m)
		}
	}
}

// TestComposeCollectorConfigValidates runs `percause collector validate`
// on the configuration the compose file mounts.
func TestComposeCollectorConfigValidates(t *testing.T) {
	p := mustLoad(t)
	c, _ := p.GetService("collector")
	var cfg string
	for _, v := range c.Volumes {
		if v.Target == "/etc/percause/collector.yaml" {
			cfg = v.Source
		}
	}
	if cfg == "" {
		t.Fatal("the collector service mounts no /etc/percause/collector.yaml")
	}
	if testing.Short() {
		t.Skip("-short: needs the percause binary")
	}
	bin := testenv.PercauseBin(t)
	cmd := exec.Command(bin, "collector", "validate", "--config", cfg)
	cmd.Env = append(os.Environ(), envOf(c)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("percause collector validate --config %s: %v\n%s", cfg, err, out)
	}
}

// envOf is the environment the compose file gives a service.
func envOf(s types.ServiceConfig) []string {
	var env []string
	for k, v := range s.Environment {
		if v != nil {
			env = append(env, k+"="+*v)
		}
	}
	return env
}
