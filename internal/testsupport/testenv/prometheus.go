package testenv

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Debian packages' binaries (apt-get install prometheus
// prometheus-alertmanager); CI installs them.
const (
	PrometheusBin   = "/usr/bin/prometheus"
	AlertmanagerBin = "/usr/bin/prometheus-alertmanager"
)

// Defaults of a test Prometheus: short intervals so a test sees a sample,
// a rule evaluation and an alert within seconds.
const (
	DefaultScrapeInterval     = time.Second
	DefaultEvaluationInterval = time.Second
	prometheusStartTimeout    = 30 * time.Second
)

// RequirePrometheus skips the test when the Prometheus binary is missing.
func RequirePrometheus(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(PrometheusBin); err != nil {
		tb.Skipf("%s not installed (apt-get install prometheus; CI installs it): %v", PrometheusBin, err)
	}
}

// RequireAlertmanager skips tb when Alertmanager is not installed.
func RequireAlertmanager(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(AlertmanagerBin); err != nil {
		tb.Skipf("%s not installed (apt-get install prometheus-alertmanager; CI installs it): %v", AlertmanagerBin, err)
	}
}

// Prometheus is a real Prometheus server started for a test on a free
// loopback port with a temporary storage path.
type Prometheus struct {
	URL  string // http://127.0.0.1:PORT
	Dir  string // config and storage
	Proc *Process
}

type promConfig struct {
	targets      []string
	ruleFiles    []string
	alertmanager string
	scrape, eval time.Duration
}

// PrometheusOption configures StartPrometheusWith.
type PrometheusOption func(*promConfig)

// WithScrapeTargets adds host:port targets scraped at /metrics, each as its
// own job (target-N) with honor_labels, as the collector's exporter expects.
func WithScrapeTargets(targets ...string) PrometheusOption {
	return func(c *promConfig) { c.targets = append(c.targets, targets...) }
}

// WithRuleFiles loads alerting or recording rule files.
func WithRuleFiles(paths ...string) PrometheusOption {
	return func(c *promConfig) { c.ruleFiles = append(c.ruleFiles, paths...) }
}

// WithAlertmanagerTarget sends alerts to the Alertmanager at host:port.
func WithAlertmanagerTarget(hostport string) PrometheusOption {
	return func(c *promConfig) { c.alertmanager = hostport }
}

// StartPrometheus starts Prometheus scraping the given host:port targets.
func StartPrometheus(tb testing.TB, scrapeTargets ...string) *Prometheus {
	tb.Helper()
	return StartPrometheusWith(tb, WithScrapeTargets(scrapeTargets...))
}

// StartPrometheusWith starts Prometheus (with the remote-write receiver on)
// and waits until it is ready. It is stopped when the test ends.
func StartPrometheusWith(tb testing.TB, opts ...PrometheusOption) *Prometheus {
	tb.Helper()
	RequirePrometheus(tb)
	c := promConfig{scrape: DefaultScrapeInterval, eval: DefaultEvaluationInterval}
	for _, o := range opts {
		o(&c)
	}
	dir := tb.TempDir()
	cfg := prometheusYAML(c)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	port := FreePort(tb)
	p := &Prometheus{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Dir: dir}
	p.Proc = Start(tb, dir, PrometheusBin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+fmt.Sprintf("127.0.0.1:%d", port),
		"--web.enable-remote-write-receiver",
		"--log.level=warn",
	)
	waitReady(tb, p.Proc, p.URL+"/-/ready", prometheusStartTimeout)
	return p
}

func prometheusYAML(c promConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\n", c.scrape, c.eval)
	if len(c.ruleFiles) > 0 {
		b.WriteString("rule_files:\n")
		for _, f := range c.ruleFiles {
			fmt.Fprintf(&b, "  - %q\n", f)
		}
	}
	if c.alertmanager != "" {
		fmt.Fprintf(&b, "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%q]\n", c.alertmanager)
	}
	b.WriteString("scrape_configs:\n")
	for i, t := range c.targets {
		fmt.Fprintf(&b, "  - job_name: target-%d\n    honor_labels: true\n    static_configs:\n      - targets: [%q]\n", i, t)
	}
	if len(c.targets) == 0 {
		b.WriteString("  []\n")
	}
	return b.String()
}

func waitReady(tb testing.TB, proc *Process, readyURL string, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if proc.Exited() {
			tb.Fatalf("%s exited before it was ready:\n%s", proc.Name, proc.Output())
		}
		resp, err := http.Get(readyURL)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("%s not ready at %s after %s:\n%s", proc.Name, readyURL, timeout, proc.Output())
}

// Sample is one series of a query result: its labels and its values (one
// for an instant query, one per step for a range query).
type Sample struct {
	Metric map[string]string
	Values []float64
}

type apiResponse struct {
	Status    string          `json:"status"`
	Error     string          `json:"error"`
	ErrorType string          `json:"errorType"`
	Data      json.RawMessage `json:"data"`
}

type apiResult struct {
	ResultType string `json:"resultType"`
	Result     []struct {
		Metric map[string]string `json:"metric"`
		Value  []any             `json:"value"`
		Values [][]any           `json:"values"`
	} `json:"result"`
}

func (p *Prometheus) get(path string, q url.Values) (json.RawMessage, error) {
	resp, err := http.Get(p.URL + path + "?" + q.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r apiResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s: %s", path, r.ErrorType, r.Error)
	}
	return r.Data, nil
}

func parseResult(data json.RawMessage) ([]Sample, error) {
	var r apiResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	var out []Sample
	for _, s := range r.Result {
		smp := Sample{Metric: s.Metric}
		pairs := s.Values
		if s.Value != nil {
			pairs = [][]any{s.Value}
		}
		for _, v := range pairs {
			if len(v) != 2 {
				continue
			}
			str, _ := v[1].(string)
			f, err := strconv.ParseFloat(str, 64)
			if err != nil {
				return nil, fmt.Errorf("sample value %q: %w", str, err)
			}
			smp.Values = append(smp.Values, f)
		}
		out = append(out, smp)
	}
	return out, nil
}

// Query evaluates expr at the current time.
func (p *Prometheus) Query(expr string) ([]Sample, error) {
	data, err := p.get("/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return nil, err
	}
	return parseResult(data)
}

// QueryRange evaluates expr from start to end every step.
func (p *Prometheus) QueryRange(expr string, start, end time.Time, step time.Duration) ([]Sample, error) {
	data, err := p.get("/api/v1/query_range", url.Values{
		"query": {expr},
		"start": {strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64)},
		"end":   {strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	})
	if err != nil {
		return nil, err
	}
	return parseResult(data)
}

// WaitForQuery polls expr until it returns at least one series.
func (p *Prometheus) WaitForQuery(tb testing.TB, timeout time.Duration, expr string) []Sample {
	tb.Helper()
	var got []Sample
	var lastErr error
	WaitFor(tb, timeout, "Prometheus to answer "+expr, func() bool {
		got, lastErr = p.Query(expr)
		return lastErr == nil && len(got) > 0
	})
	return got
}

// SeriesNames lists every metric name Prometheus holds.
func (p *Prometheus) SeriesNames() ([]string, error) {
	data, err := p.get("/api/v1/label/__name__/values", url.Values{})
	if err != nil {
		return nil, err
	}
	var names []string
	return names, json.Unmarshal(data, &names)
}

// Alertmanager is a real Alertmanager started for a test on loopback, with
// clustering off.
type Alertmanager struct {
	URL      string // http://127.0.0.1:PORT
	HostPort string // for Prometheus's alerting config
	Proc     *Process
}

// StartAlertmanager starts Alertmanager with a single receiver that sends
// nowhere; a test reads alerts from its API.
func StartAlertmanager(tb testing.TB) *Alertmanager {
	tb.Helper()
	RequireAlertmanager(tb)
	dir := tb.TempDir()
	cfgPath := filepath.Join(dir, "alertmanager.yml")
	cfg := "route:\n  receiver: test\n  group_wait: 0s\nreceivers:\n  - name: test\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	port := FreePort(tb)
	a := &Alertmanager{URL: fmt.Sprintf("http://127.0.0.1:%d", port), HostPort: fmt.Sprintf("127.0.0.1:%d", port)}
	a.Proc = Start(tb, dir, AlertmanagerBin,
		"--config.file="+cfgPath,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+a.HostPort,
		"--cluster.listen-address=",
		"--log.level=warn",
	)
	waitReady(tb, a.Proc, a.URL+"/-/ready", prometheusStartTimeout)
	return a
}

// AMAlert is an alert as Alertmanager's API v2 lists it.
type AMAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

// Alerts lists the alerts Alertmanager holds.
func (a *Alertmanager) Alerts() ([]AMAlert, error) {
	resp, err := http.Get(a.URL + "/api/v2/alerts")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("alertmanager: %s: %s", resp.Status, b)
	}
	var out []AMAlert
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
