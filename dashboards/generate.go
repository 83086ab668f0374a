package dashboards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"gopkg.in/yaml.v3"
)

// Environment variables the generated files read at run time (never a
// value in the repository).
const (
	// EnvAlertWebhookURL is where Grafana's contact point posts alerts
	// (for example an ntfy topic the phone subscribes to).
	EnvAlertWebhookURL = "PERCAUSE_ALERT_WEBHOOK_URL"
)

// GeneratedDir is the folder, under the dashboards/ folder, that Generate
// writes: every file it makes is rewritten on every run (see PathManifest
// for what it removes).
const GeneratedDir = "generated"

// Paths of the generated files, relative to GeneratedDir. The compose file
// mounts them.
const (
	PathOverviewJSON         = "grafana/dashboards/voice-lane.json"
	PathPipelineJSON         = "grafana/dashboards/pipeline.json"
	PathGrafanaDatasources   = "grafana/provisioning/datasources/percause.yaml"
	PathGrafanaDashboards    = "grafana/provisioning/dashboards/percause.yaml"
	PathGrafanaAlertRules    = "grafana/provisioning/alerting/rules.yaml"
	PathGrafanaContactPoints = "grafana/provisioning/alerting/contact-points.yaml"
	PathPrometheusRules      = "prometheus/alerts.yml"
	PathPrometheusConfig     = "prometheus/prometheus.yml"
	PathAlertmanagerConfig   = "alertmanager/alertmanager.yml"
)

// Defaults: the addresses of the compose stack's services, as seen from
// inside the compose network.
const (
	DefaultPrometheusURL      = "http://prometheus:9090"
	DefaultJaegerURL          = "http://jaeger:16686"
	DefaultAlertmanagerURL    = "http://alertmanager:9093"
	DefaultAlertmanagerTarget = "alertmanager:9093"
	DefaultVerdictsTarget     = "collector:9464"
	DefaultCollectorTelemetry = "collector:8888"
	// GrafanaDashboardsPath is where the compose file mounts the dashboard JSON.
	GrafanaDashboardsPath = "/var/lib/grafana/dashboards/percause"
	// PrometheusRulesPath is where the compose file mounts alerts.yml.
	PrometheusRulesPath = "/etc/prometheus/rules/alerts.yml"
	// DefaultScrapeInterval is how often the compose Prometheus scrapes and evaluates.
	DefaultScrapeInterval = "15s"
)

type config struct {
	prometheusURL, jaegerURL, alertmanagerURL string
	alertmanagerTarget                        string
	verdictsTarget, telemetryTarget           string
	scrapeInterval                            string
	rulesPath                                 string
	alertWindow                               string
	webhookURL, webhookCredentialsFile        string
	groupInterval                             string
}

// Option changes where the generated provisioning points.
type Option func(*config)

// WithPrometheusURL sets the Prometheus address Grafana's datasource uses.
func WithPrometheusURL(u string) Option { return func(c *config) { c.prometheusURL = u } }

// WithJaegerURL sets the Jaeger query address Grafana's datasource uses.
func WithJaegerURL(u string) Option { return func(c *config) { c.jaegerURL = u } }

// WithAlertmanager sets the Alertmanager Grafana reads (URL) and Prometheus
// sends to (host:port).
func WithAlertmanager(url, target string) Option {
	return func(c *config) { c.alertmanagerURL, c.alertmanagerTarget = url, target }
}

// WithScrapeTargets sets the collector's verdict/metrics endpoint and its
// own telemetry endpoint (host:port) that Prometheus scrapes.
func WithScrapeTargets(verdicts, telemetry string) Option {
	return func(c *config) { c.verdictsTarget, c.telemetryTarget = verdicts, telemetry }
}

// WithScrapeInterval sets Prometheus's scrape and rule evaluation interval.
func WithScrapeInterval(d string) Option { return func(c *config) { c.scrapeInterval = d } }

// WithRulesPath sets where Prometheus's configuration finds alerts.yml
// (PrometheusRulesPath, where the compose file mounts it).
func WithRulesPath(p string) Option { return func(c *config) { c.rulesPath = p } }

// WithAlertWindow sets how long a movement keeps an alert firing
// (DefaultAlertWindow): a whole number of seconds, minutes or hours, as
// Prometheus writes a duration ("30s", "10m", "1h"). The committed files
// use the default.
func WithAlertWindow(w string) Option { return func(c *config) { c.alertWindow = w } }

// WithAlertWebhook gives Alertmanager's receiver a webhook: it posts every
// firing and every resolved alert to url, with the bearer token read from
// credentialsFile ("" for none). The committed alertmanager.yml has no
// webhook: a URL with a target is written only where a running stack keeps
// its own files (percause up's data folder).
func WithAlertWebhook(url, credentialsFile string) Option {
	return func(c *config) { c.webhookURL, c.webhookCredentialsFile = url, credentialsFile }
}

// WithGroupInterval sets how long Alertmanager waits before it notifies a
// group again when its alerts changed (DefaultGroupInterval). A movement
// while its alert fires is a new alert in the group (LabelTally), so this
// bounds how much later than the first a second movement is told:
// `percause up` sets it to its scrape interval.
func WithGroupInterval(d string) Option { return func(c *config) { c.groupInterval = d } }

// DefaultGroupInterval is the committed alertmanager.yml's group_interval.
const DefaultGroupInterval = "1m"

// alertWindowPattern is a Prometheus duration of one unit, which both
// PromQL and Grafana's relative ranges read.
var alertWindowPattern = regexp.MustCompile(`^[1-9][0-9]*[smh]$`)

// CheckAlertWindow reports whether w is a window WithAlertWindow takes.
func CheckAlertWindow(w string) error {
	if !alertWindowPattern.MatchString(w) {
		return fmt.Errorf("alert window %q is not a whole number of s, m or h (such as 10m)", w)
	}
	return nil
}

func newConfig(opts []Option) (config, error) {
	c := config{
		prometheusURL:      DefaultPrometheusURL,
		jaegerURL:          DefaultJaegerURL,
		alertmanagerURL:    DefaultAlertmanagerURL,
		alertmanagerTarget: DefaultAlertmanagerTarget,
		verdictsTarget:     DefaultVerdictsTarget,
		telemetryTarget:    DefaultCollectorTelemetry,
		scrapeInterval:     DefaultScrapeInterval,
		rulesPath:          PrometheusRulesPath,
		alertWindow:        DefaultAlertWindow,
		groupInterval:      DefaultGroupInterval,
	}
	for _, o := range opts {
		o(&c)
	}
	return c, c.Validate()
}

// Validate reports the first empty setting.
func (c config) Validate() error {
	for name, v := range map[string]string{
		"Prometheus URL": c.prometheusURL, "Jaeger URL": c.jaegerURL, "Alertmanager URL": c.alertmanagerURL,
		"Alertmanager target": c.alertmanagerTarget, "verdicts scrape target": c.verdictsTarget,
		"collector telemetry scrape target": c.telemetryTarget, "scrape interval": c.scrapeInterval,
		"rules path": c.rulesPath, "group interval": c.groupInterval,
	} {
		if v == "" {
			return fmt.Errorf("dashboards: %s is empty", name)
		}
	}
	if err := CheckAlertWindow(c.alertWindow); err != nil {
		return fmt.Errorf("dashboards: %w", err)
	}
	if c.webhookURL == "" && c.webhookCredentialsFile != "" {
		return errors.New("dashboards: a webhook credentials file without a webhook URL")
	}
	return nil
}

// Files renders every generated file, keyed by its path under GeneratedDir.
// The output depends on nothing but the code and the options: no time, no
// map order, no environment.
func Files(opts ...Option) (map[string][]byte, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var errs []error
	add := func(path string, render func() ([]byte, error)) {
		b, err := render()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			return
		}
		files[path] = b
	}
	alerts := AlertsWithin(c.alertWindow)
	add(PathOverviewJSON, func() ([]byte, error) { return dashboardJSON(Overview()) })
	add(PathPipelineJSON, func() ([]byte, error) { return dashboardJSON(Pipeline()) })
	add(PathGrafanaDatasources, func() ([]byte, error) { return yamlOf(c.datasources()) })
	add(PathGrafanaDashboards, func() ([]byte, error) { return yamlOf(dashboardProvider()) })
	add(PathGrafanaAlertRules, func() ([]byte, error) {
		rules, err := grafanaAlertRules(alerts)
		if err != nil {
			return nil, err
		}
		return yamlOf(rules)
	})
	add(PathGrafanaContactPoints, func() ([]byte, error) {
		cps, err := grafanaContactPoints()
		if err != nil {
			return nil, err
		}
		return yamlOf(cps)
	})
	add(PathPrometheusRules, func() ([]byte, error) { return yamlOf(PrometheusRules(alerts)) })
	add(PathPrometheusConfig, func() ([]byte, error) { return yamlOf(c.prometheusConfig()) })
	add(PathAlertmanagerConfig, func() ([]byte, error) { return yamlOf(c.alertmanagerConfig()) })
	add(PathReference, func() ([]byte, error) {
		return reference([][]byte{files[PathOverviewJSON], files[PathPipelineJSON]}, alerts)
	})
	return files, errors.Join(errs...)
}

// PathManifest is the generated list of every file Generate writes, one
// slash path a line. Generate removes a file only when the manifest it wrote
// last time lists it and this run no longer makes it: a file in
// GeneratedDir that the generator did not write is never removed.
const PathManifest = "MANIFEST"

const manifestHeader = "# The files `percause dashboards` writes here. It removes only files it listed here and no longer makes.\n"

func manifest(files map[string][]byte) []byte {
	paths := make([]string, 0, len(files)+1)
	for p := range files {
		paths = append(paths, p)
	}
	paths = append(paths, PathManifest)
	sort.Strings(paths)
	var b bytes.Buffer
	b.WriteString(manifestHeader)
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readManifest returns the paths the previous run listed; none when there
// is no manifest. A line that is not a local slash path (an absolute path,
// one with "..") is ignored: the manifest never names a file outside
// GeneratedDir.
func readManifest(root string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, PathManifest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || !filepath.IsLocal(filepath.FromSlash(line)) ||
			path.Clean(line) != line {
			continue
		}
		paths = append(paths, line)
	}
	return paths, nil
}

// Generate writes every file under dir/GeneratedDir (dir is the
// dashboards/ folder) and its manifest. Of what is already there, it
// replaces the files it makes, removes the files its previous manifest
// listed that it no longer makes, and leaves everything else alone.
func Generate(dir string, opts ...Option) error {
	files, err := Files(opts...)
	if err != nil {
		return err
	}
	root := filepath.Join(dir, GeneratedDir)
	previous, err := readManifest(root)
	if err != nil {
		return err
	}
	files[PathManifest] = manifest(files)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return err
		}
	}
	for _, p := range previous {
		if _, still := files[p]; still {
			continue
		}
		if err := removeStale(root, p); err != nil {
			return err
		}
	}
	return nil
}

// removeStale removes root/p, a regular file an earlier run generated, and
// then each folder above it that this left empty, up to root.
func removeStale(root, p string) error {
	full := filepath.Join(root, filepath.FromSlash(p))
	st, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return nil
	}
	if err := os.Remove(full); err != nil {
		return err
	}
	for d := filepath.Dir(full); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil { // not empty: it holds something else
			break
		}
	}
	return nil
}

const generatedHeader = "# Generated by `percause dashboards` (package dashboards). Do not edit: change the Go code and regenerate.\n"

//lint:ignore SA1019 the v1 dashboard schema is what Grafana 11 file provisioning loads (docs/decisions/0300-dashboards-as-go-with-the-foundation-sdk.md)
func dashboardJSON(b *dashboard.DashboardBuilder) ([]byte, error) {
	d, err := b.Build()
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func yamlOf(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(generatedHeader)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (c config) datasources() map[string]any {
	return map[string]any{
		"apiVersion": 1,
		"datasources": []any{
			map[string]any{
				"name": "Prometheus", "uid": PrometheusUID, "type": "prometheus", "access": "proxy",
				"url": c.prometheusURL, "isDefault": true, "editable": false,
				"jsonData": map[string]any{
					"httpMethod":      "POST",
					"timeInterval":    c.scrapeInterval,
					"manageAlerts":    true,
					"alertmanagerUid": AlertmanagerUID,
				},
			},
			map[string]any{
				"name": "Jaeger", "uid": JaegerUID, "type": "jaeger", "access": "proxy",
				"url": c.jaegerURL, "editable": false,
			},
			map[string]any{
				"name": "Alertmanager", "uid": AlertmanagerUID, "type": "alertmanager", "access": "proxy",
				"url": c.alertmanagerURL, "editable": false,
				"jsonData": map[string]any{"implementation": "prometheus", "handleGrafanaManagedAlerts": false},
			},
		},
	}
}

// AlertmanagerUID is the UID of the provisioned Alertmanager datasource.
const AlertmanagerUID = "percause-alertmanager"

func dashboardProvider() map[string]any {
	return map[string]any{
		"apiVersion": 1,
		"providers": []any{map[string]any{
			"name": "percause", "folder": grafanaFolder, "type": "file",
			"disableDeletion": true, "allowUiUpdates": false, "updateIntervalSeconds": 60,
			"options": map[string]any{"path": GrafanaDashboardsPath},
		}},
	}
}

// Prometheus rule file shapes, with fields in the order people write them.
type promRuleFile struct {
	Groups []promRuleGroup `yaml:"groups"`
}

type promRuleGroup struct {
	Name  string     `yaml:"name"`
	Rules []promRule `yaml:"rules"`
}

type promRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// PrometheusRules is the Prometheus alerting rules file for alerts.
func PrometheusRules(alerts []Alert) promRuleFile {
	g := promRuleGroup{Name: "percause"}
	for _, a := range alerts {
		labels := a.Labels()
		if a.Tally != "" {
			labels[LabelTally] = tallyTemplate
		}
		g.Rules = append(g.Rules, promRule{
			Alert:       a.Name,
			Expr:        a.PromExpr(),
			For:         a.For,
			Labels:      labels,
			Annotations: map[string]string{"summary": a.Summary, "description": a.Description},
		})
	}
	return promRuleFile{Groups: []promRuleGroup{g}}
}

func (c config) prometheusConfig() map[string]any {
	job := func(name, target string) map[string]any {
		return map[string]any{
			"job_name": name,
			// The collector's exporter sets job and instance from each
			// series' service.name and service.instance.id: keep them.
			"honor_labels":   true,
			"static_configs": []any{map[string]any{"targets": []any{target}}},
		}
	}
	return map[string]any{
		"global": map[string]any{
			"scrape_interval":     c.scrapeInterval,
			"evaluation_interval": c.scrapeInterval,
		},
		"rule_files": []any{c.rulesPath},
		"alerting": map[string]any{
			"alertmanagers": []any{map[string]any{
				"static_configs": []any{map[string]any{"targets": []any{c.alertmanagerTarget}}},
			}},
		},
		"scrape_configs": []any{
			job("percause-verdicts", c.verdictsTarget),
			job("percause-collector", c.telemetryTarget),
		},
	}
}

// alertmanagerConfig routes every percause alert to one receiver. As
// committed it holds no address or token: `percause up` writes its own copy
// with a webhook to its relay (WithAlertWebhook); Grafana's contact point
// reads its URL from the environment instead.
func (c config) alertmanagerConfig() map[string]any {
	receiver := map[string]any{"name": "percause"}
	if c.webhookURL != "" {
		hook := map[string]any{"url": c.webhookURL, "send_resolved": true}
		if c.webhookCredentialsFile != "" {
			hook["http_config"] = map[string]any{"authorization": map[string]any{
				"type": "Bearer", "credentials_file": c.webhookCredentialsFile,
			}}
		}
		receiver["webhook_configs"] = []any{hook}
	}
	return map[string]any{
		"route": map[string]any{
			"receiver":        "percause",
			"group_by":        []any{"alertname", lInstallation},
			"group_wait":      "0s",
			"group_interval":  c.groupInterval,
			"repeat_interval": "4h",
		},
		"receivers": []any{receiver},
	}
}
