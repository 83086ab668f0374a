package up

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/internal/leaf/loopback"
)

// Environment variables `percause up` reads besides the collector's own
// (collectorconfig.Env*, which it honours and passes on unchanged).
const (
	// EnvPrometheusEndpoint is where Prometheus listens, host:port on loopback.
	EnvPrometheusEndpoint = "PERCAUSE_PROMETHEUS_ENDPOINT"
	// EnvAlertmanagerEndpoint is where Alertmanager listens, host:port on loopback.
	EnvAlertmanagerEndpoint = "PERCAUSE_ALERTMANAGER_ENDPOINT"
	// EnvNotifyURL is the notification target: every firing and every
	// resolved alert is posted to it (an ntfy topic URL, or any webhook).
	EnvNotifyURL = "PERCAUSE_NOTIFY_URL"
	// EnvNotifyToken, if set, is sent to the target as a bearer token (an
	// ntfy access token).
	EnvNotifyToken = "PERCAUSE_NOTIFY_TOKEN"
	// EnvNotifyFormat is the message's shape: ntfy (a text body with
	// headers, the default) or json (one JSON object).
	EnvNotifyFormat = "PERCAUSE_NOTIFY_FORMAT"
	// EnvPageURL is the verdict page's address as the phone opens it (for
	// example through `tailscale serve`); the notifications link to turns
	// under it. Default: the page's loopback address.
	EnvPageURL = "PERCAUSE_PAGE_URL"
	// EnvAlertWindow is how long a movement keeps an alert firing
	// (dashboards.DefaultAlertWindow, what the committed rules say).
	EnvAlertWindow = "PERCAUSE_ALERT_WINDOW"
	// EnvScrapeInterval is how often Prometheus scrapes the collector and
	// evaluates the rules.
	EnvScrapeInterval = "PERCAUSE_SCRAPE_INTERVAL"
	// EnvHeartbeat is the bound within which the phone is told that `up`
	// went silent (DefaultHeartbeat; "off" for none). The ntfy format
	// beats by default, the json format only when it is set.
	EnvHeartbeat = "PERCAUSE_HEARTBEAT"
	// EnvRestartLimit is how many restarts of one child RestartWindow
	// allows before `up` gives up (DefaultRestartLimit; 0: a child that
	// dies stops everything).
	EnvRestartLimit = "PERCAUSE_RESTART_LIMIT"
	// EnvMuteURL is the relay's address as the phone reaches it (for
	// example `tailscale serve` in front of EnvRelayEndpoint): when set, a
	// firing notification carries a "Mute" action posting there.
	EnvMuteURL = "PERCAUSE_MUTE_URL"
	// EnvRelayEndpoint is where the relay listens, host:port on loopback
	// (default: a free port, or DefaultRelayEndpoint with EnvMuteURL).
	EnvRelayEndpoint = "PERCAUSE_RELAY_ENDPOINT"
	// EnvAlertmanagerURL is the collector's setting for the Alertmanager
	// whose firing alerts its page shows; `up` sets it to its own.
	EnvAlertmanagerURL = "PERCAUSE_ALERTMANAGER_URL"
)

// Defaults. Prometheus and Alertmanager get ports next to the collector's
// (9464, 9465) rather than their own 9090 and 9093, which the Debian
// packages' services already hold on a machine where they run.
const (
	DefaultPrometheusEndpoint   = "127.0.0.1:9466"
	DefaultAlertmanagerEndpoint = "127.0.0.1:9467"
	DefaultRelayEndpoint        = "127.0.0.1:9468"
	// DefaultScrapeInterval: one collector on the same machine is cheap to
	// scrape; a heal reaches Alertmanager within about two intervals.
	DefaultScrapeInterval = 5 * time.Second
	FormatNtfy            = "ntfy"
	FormatJSON            = "json"
	DefaultNotifyFormat   = FormatNtfy
	// DefaultStartTimeout bounds each child's start (a collector's cold
	// start loads every component; Prometheus replays its write-ahead log).
	DefaultStartTimeout = 60 * time.Second
	// DefaultStopTimeout is how long a child gets after SIGTERM before it is
	// killed (the collector flushes its exporters).
	DefaultStopTimeout = 10 * time.Second
	// DefaultTurnWait is how long the relay waits for the verdict of the
	// turn that moved before it notifies without it (the metric that fires
	// the alert can arrive before the turn ends).
	DefaultTurnWait = 20 * time.Second
	// DefaultNotifyTimeout bounds one post to the target.
	DefaultNotifyTimeout = 10 * time.Second
)

// Endpoints are the collector's addresses, host:port, as local.yaml reads
// them from the environment.
type Endpoints struct {
	OTLP, Prom, Page, Health string
	// Telemetry is the collector's own metrics, on 127.0.0.1.
	Telemetry string
}

// Config is everything `up` needs to start. FromEnv fills it; the binaries
// come from flags or PATH (FindBinaries).
type Config struct {
	// Self is the percause binary that runs the collector.
	Self string
	// Prometheus and Alertmanager are their binaries.
	Prometheus, Alertmanager string

	Collector            Endpoints
	PrometheusEndpoint   string
	AlertmanagerEndpoint string
	// DataDir and VerdictFile are absolute: the children and the relay read
	// the same files whatever their working folder.
	DataDir, VerdictFile string

	NotifyURL, NotifyToken, NotifyFormat string
	PageURL                              string
	AlertWindow                          string
	ScrapeInterval                       time.Duration
	// Heartbeat is the silence bound (0: no heartbeat); RestartLimit the
	// restarts allowed of one child inside RestartWindow.
	Heartbeat    time.Duration
	RestartLimit int
	// MuteURL and RelayEndpoint: see EnvMuteURL, EnvRelayEndpoint.
	MuteURL, RelayEndpoint string

	// Env is the environment every child starts with (the caller's own);
	// the collector gets the data folder, the verdict file and
	// EnvAlertmanagerURL on top.
	Env []string
}

// envDefault matches local.yaml's ${env:NAME:-default}.
var envDefault = regexp.MustCompile(`\$\{env:([A-Z0-9_]+):-([^}]*)\}`)

// collectorDefaults are local.yaml's defaults by variable: the one place
// they are written, so `up` scrapes and prints what the collector listens on.
func collectorDefaults() map[string]string {
	out := map[string]string{}
	for _, m := range envDefault.FindAllSubmatch(collectorconfig.Local, -1) {
		if _, seen := out[string(m[1])]; !seen {
			out[string(m[1])] = string(m[2])
		}
	}
	return out
}

// FromEnv reads the configuration from getenv (os.Getenv), with the
// collector's settings defaulted as local.yaml defaults them. Relative
// paths are made absolute against wd. It does not validate.
func FromEnv(getenv func(string) string, wd string) (Config, error) {
	defs := collectorDefaults()
	get := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return defs[name]
	}
	orDefault := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(wd, p)
	}
	c := Config{
		Collector: Endpoints{
			OTLP:      get(collectorconfig.EnvOTLPEndpoint),
			Prom:      get(collectorconfig.EnvPromEndpoint),
			Page:      get(collectorconfig.EnvPageEndpoint),
			Health:    get(collectorconfig.EnvHealthEndpoint),
			Telemetry: "127.0.0.1:" + get(collectorconfig.EnvTelemetryPort),
		},
		PrometheusEndpoint:   orDefault(EnvPrometheusEndpoint, DefaultPrometheusEndpoint),
		AlertmanagerEndpoint: orDefault(EnvAlertmanagerEndpoint, DefaultAlertmanagerEndpoint),
		DataDir:              abs(get(collectorconfig.EnvDataDir)),
		VerdictFile:          abs(get(collectorconfig.EnvVerdictFile)),
		NotifyURL:            getenv(EnvNotifyURL),
		NotifyToken:          getenv(EnvNotifyToken),
		NotifyFormat:         orDefault(EnvNotifyFormat, DefaultNotifyFormat),
		AlertWindow:          orDefault(EnvAlertWindow, dashboards.DefaultAlertWindow),
		ScrapeInterval:       DefaultScrapeInterval,
	}
	c.PageURL = orDefault(EnvPageURL, "http://"+c.Collector.Page+"/")
	c.MuteURL = getenv(EnvMuteURL)
	c.RelayEndpoint = getenv(EnvRelayEndpoint)
	if c.RelayEndpoint == "" && c.MuteURL != "" {
		c.RelayEndpoint = DefaultRelayEndpoint
	}
	c.RestartLimit = DefaultRestartLimit
	if v := getenv(EnvRestartLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, fmt.Errorf("%s=%q: want a whole number, 0 or more", EnvRestartLimit, v)
		}
		c.RestartLimit = n
	}
	switch v := getenv(EnvHeartbeat); {
	case v == "off" || v == "0":
	case v != "":
		d, err := time.ParseDuration(v)
		if err != nil {
			return c, fmt.Errorf("%s=%q: %w", EnvHeartbeat, v, err)
		}
		c.Heartbeat = d
	case c.NotifyFormat == FormatNtfy:
		c.Heartbeat = DefaultHeartbeat
	}
	if v := getenv(EnvScrapeInterval); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return c, fmt.Errorf("%s=%q: %w", EnvScrapeInterval, v, err)
		}
		c.ScrapeInterval = d
	}
	return c, nil
}

// Validate reports every setting `up` cannot start with.
func (c Config) Validate() error {
	var errs []error
	for _, e := range []struct{ name, addr string }{
		{collectorconfig.EnvOTLPEndpoint, c.Collector.OTLP},
		{collectorconfig.EnvPromEndpoint, c.Collector.Prom},
		{collectorconfig.EnvPageEndpoint, c.Collector.Page},
		{collectorconfig.EnvHealthEndpoint, c.Collector.Health},
		{collectorconfig.EnvTelemetryPort, c.Collector.Telemetry},
	} {
		if _, _, err := hostPort(e.addr); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.name, err))
		}
	}
	// Prometheus and Alertmanager run here without authentication: they
	// stay on loopback (publish them with `tailscale serve` if need be).
	for _, e := range []struct{ name, addr string }{
		{EnvPrometheusEndpoint, c.PrometheusEndpoint},
		{EnvAlertmanagerEndpoint, c.AlertmanagerEndpoint},
	} {
		host, _, err := hostPort(e.addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.name, err))
		} else if !loopback.Host(host) {
			errs = append(errs, fmt.Errorf("%s=%s: not a loopback address; Prometheus and Alertmanager run without authentication here", e.name, e.addr))
		}
	}
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		errs = append(errs, fmt.Errorf("%s: the data folder must be an absolute path, got %q", collectorconfig.EnvDataDir, c.DataDir))
	}
	if c.VerdictFile == "" || !filepath.IsAbs(c.VerdictFile) {
		errs = append(errs, fmt.Errorf("%s: the verdict file must be an absolute path, got %q", collectorconfig.EnvVerdictFile, c.VerdictFile))
	}
	if c.NotifyURL != "" {
		if err := checkHTTPURL(c.NotifyURL); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvNotifyURL, err))
		}
	} else if c.NotifyToken != "" {
		errs = append(errs, fmt.Errorf("%s is set without %s", EnvNotifyToken, EnvNotifyURL))
	}
	if c.NotifyFormat != FormatNtfy && c.NotifyFormat != FormatJSON {
		errs = append(errs, fmt.Errorf("%s=%q: want %s or %s", EnvNotifyFormat, c.NotifyFormat, FormatNtfy, FormatJSON))
	}
	if err := checkHTTPURL(c.PageURL); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvPageURL, err))
	}
	if err := dashboards.CheckAlertWindow(c.AlertWindow); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvAlertWindow, err))
	}
	if c.MuteURL != "" {
		if err := checkHTTPURL(c.MuteURL); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvMuteURL, err))
		}
		if c.NotifyURL == "" {
			errs = append(errs, fmt.Errorf("%s is set without %s", EnvMuteURL, EnvNotifyURL))
		}
	}
	if c.RelayEndpoint != "" {
		// The relay stays on loopback: what publishes it to the phone
		// (tailscale serve) authenticates the device; the mute's token
		// authorises the one silence.
		if host, _, err := hostPort(c.RelayEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvRelayEndpoint, err))
		} else if !loopback.Host(host) {
			errs = append(errs, fmt.Errorf("%s=%s: not a loopback address; publish the relay with tailscale serve and set %s", EnvRelayEndpoint, c.RelayEndpoint, EnvMuteURL))
		}
	}
	if c.Heartbeat != 0 && c.Heartbeat < MinHeartbeat {
		errs = append(errs, fmt.Errorf("%s: at least %s (ntfy delays a message by 10 s or more), or off; got %s", EnvHeartbeat, MinHeartbeat, c.Heartbeat))
	}
	if c.ScrapeInterval < time.Second || c.ScrapeInterval%time.Second != 0 {
		errs = append(errs, fmt.Errorf("%s: want whole seconds, at least 1s, got %s", EnvScrapeInterval, c.ScrapeInterval))
	}
	return errors.Join(errs...)
}

// alertWindow is the window as a duration (Validate has checked it).
func (c Config) alertWindow() time.Duration {
	n, _ := strconv.Atoi(c.AlertWindow[:len(c.AlertWindow)-1])
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour}[c.AlertWindow[len(c.AlertWindow)-1]]
	return time.Duration(n) * unit
}

func hostPort(addr string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q: the port must be 1 to 65535", addr)
	}
	return h, n, nil
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: want an http:// or https:// URL with a host", redact(s))
	}
	return nil
}

// redact is a URL fit to print: no user information, and no path, which
// for an ntfy topic is the secret (anyone who knows it can subscribe).
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(a URL that does not parse)"
	}
	out := u.Scheme + "://" + u.Host + "/"
	if u.Path != "" && u.Path != "/" {
		out += "…"
	}
	return out
}
