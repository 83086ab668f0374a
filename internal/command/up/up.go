package up

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/dashboards"
)

// What `up` writes under the data folder, beside the collector's own files.
const (
	// ConfigDir holds the configurations and the relay's token, rewritten
	// at every start from the generated files and the environment.
	ConfigDir = "up"
	// LogDir holds one log per child.
	LogDir = "logs"
	// PrometheusDir and AlertmanagerDir are their storage.
	PrometheusDir   = "prometheus"
	AlertmanagerDir = "alertmanager"
	// TokenFile (in ConfigDir) is the bearer token Alertmanager presents to
	// the relay: a new one at every start, readable by its owner only.
	TokenFile = "relay.token"
)

// The children, in the order they start; they stop in the reverse order:
// Prometheus first (nothing evaluates any more), then Alertmanager (its
// last notifications go out through the relay), the collector last.
const (
	nameCollector    = "collector"
	nameAlertmanager = "alertmanager"
	namePrometheus   = "prometheus"
)

// Paths are where `up` writes, all under the data folder.
type Paths struct {
	ConfigDir, LogDir, PrometheusData, AlertmanagerData string
	PrometheusConfig, Rules, AlertmanagerConfig, Token  string
}

// PathsIn lays the files out under dataDir.
func PathsIn(dataDir string) Paths {
	cfg := filepath.Join(dataDir, ConfigDir)
	return Paths{
		ConfigDir: cfg, LogDir: filepath.Join(dataDir, LogDir),
		PrometheusData: filepath.Join(dataDir, PrometheusDir), AlertmanagerData: filepath.Join(dataDir, AlertmanagerDir),
		PrometheusConfig: filepath.Join(cfg, "prometheus.yml"), Rules: filepath.Join(cfg, "alerts.yml"),
		AlertmanagerConfig: filepath.Join(cfg, "alertmanager.yml"), Token: filepath.Join(cfg, TokenFile),
	}
}

// logOf is a child's log file.
func (p Paths) logOf(name string) string { return filepath.Join(p.LogDir, name+".log") }

// writtenHeader heads each file WriteConfigs writes, above the generator's own.
const writtenHeader = "# Written by `percause up` at every start, from the dashboards generator and the environment: edits here are overwritten.\n"

// WriteConfigs renders Prometheus's configuration, the alert rules and
// Alertmanager's configuration from the dashboards generator (the same
// code as the committed files, with this machine's addresses and the
// configured window) into the data folder. relayURL and tokenFile are the
// relay's ("" when notifications have no target).
func WriteConfigs(c Config, p Paths, relayURL, tokenFile string) error {
	files, err := dashboards.Files(
		dashboards.WithScrapeTargets(c.Collector.Prom, c.Collector.Telemetry),
		dashboards.WithAlertmanager("http://"+c.AlertmanagerEndpoint, c.AlertmanagerEndpoint),
		dashboards.WithScrapeInterval(fmt.Sprintf("%ds", int(c.ScrapeInterval/time.Second))),
		dashboards.WithRulesPath(p.Rules),
		dashboards.WithAlertWindow(c.AlertWindow),
		dashboards.WithAlertWebhook(relayURL, tokenFile),
	)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.ConfigDir, 0o755); err != nil {
		return err
	}
	for path, gen := range map[string]string{
		p.PrometheusConfig:   dashboards.PathPrometheusConfig,
		p.Rules:              dashboards.PathPrometheusRules,
		p.AlertmanagerConfig: dashboards.PathAlertmanagerConfig,
	} {
		b := append([]byte(writtenHeader), files[gen]...)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkFree reports every address something else already listens on, so
// `up` says which setting to change instead of a child failing to bind.
func checkFree(c Config) error {
	var errs []error
	for _, e := range []struct{ what, env, addr string }{
		{"the collector's OTLP receiver", collectorconfig.EnvOTLPEndpoint, c.Collector.OTLP},
		{"the collector's Prometheus endpoint", collectorconfig.EnvPromEndpoint, c.Collector.Prom},
		{"the verdict page", collectorconfig.EnvPageEndpoint, c.Collector.Page},
		{"the collector's health check", collectorconfig.EnvHealthEndpoint, c.Collector.Health},
		{"the collector's own metrics", collectorconfig.EnvTelemetryPort, c.Collector.Telemetry},
		{"Prometheus", EnvPrometheusEndpoint, c.PrometheusEndpoint},
		{"Alertmanager", EnvAlertmanagerEndpoint, c.AlertmanagerEndpoint},
	} {
		ln, err := net.Listen("tcp", e.addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s cannot listen on %s (%v): is another collector, Prometheus or `percause up` running? Set %s to move it", e.what, e.addr, err, e.env))
			continue
		}
		ln.Close()
	}
	return errors.Join(errs...)
}

// Run starts the collector, Alertmanager and Prometheus (and the relay when
// notifications have a target), prints where everything is, and runs until
// ctx ends (SIGINT, SIGTERM) or a child dies. Either way it stops every
// child it started, in order, by process ID. It returns nil after a stop
// asked for through ctx, and an error naming the child otherwise.
func Run(ctx context.Context, c Config, out io.Writer) (err error) {
	if err := c.Validate(); err != nil {
		return err
	}
	p := PathsIn(c.DataDir)
	for _, d := range []string{c.DataDir, p.ConfigDir, p.LogDir, p.PrometheusData, p.AlertmanagerData, filepath.Dir(c.VerdictFile)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := checkFree(c); err != nil {
		return err
	}

	var started []*child // the collector first
	stopChild := func(ch *child) {
		if ch.exited() {
			return
		}
		if ch.stop(DefaultStopTimeout) {
			fmt.Fprintf(out, "killed %s (pid %d): it did not stop within %s of SIGTERM\n", ch.name, ch.pid(), DefaultStopTimeout)
		} else {
			fmt.Fprintf(out, "stopped %s (pid %d)\n", ch.name, ch.pid())
		}
	}

	// The relay first: Alertmanager's configuration names its address.
	var rl *relay
	var srv *http.Server
	relayURL, tokenFile := "", ""
	if c.NotifyURL != "" {
		token, err := randomToken()
		if err != nil {
			return err
		}
		tokenFile = p.Token
		if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
			return err
		}
		if err := os.Chmod(tokenFile, 0o600); err != nil { // a file left by an earlier start keeps its mode
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("the relay: %w", err)
		}
		rl = newRelay(c, token, out)
		srv = &http.Server{Handler: rl, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		relayURL = "http://" + ln.Addr().String() + RelayPath
	}
	stopRelay := func() {
		if srv == nil {
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), DefaultStopTimeout)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
		fmt.Fprintf(out, "stopped the relay: %d posts from Alertmanager, %d notifications sent, %d failed, %d posts refused\n",
			rl.received.Load(), rl.sent.Load(), rl.failed.Load(), rl.refused.Load())
	}
	// In order: Prometheus, Alertmanager, the relay, the collector.
	stop := func() {
		for i := len(started) - 1; i >= 1; i-- {
			stopChild(started[i])
		}
		stopRelay()
		if len(started) > 0 {
			stopChild(started[0])
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()

	if err := WriteConfigs(c, p, relayURL, tokenFile); err != nil {
		return err
	}

	collectorEnv := append(append([]string(nil), c.Env...),
		collectorconfig.EnvDataDir+"="+c.DataDir,
		collectorconfig.EnvVerdictFile+"="+c.VerdictFile,
		EnvAlertmanagerURL+"=http://"+c.AlertmanagerEndpoint,
	)
	steps := []struct {
		name, bin string
		args, env []string
		ready     string
	}{
		{nameCollector, c.Self, []string{"collector"}, collectorEnv, "http://" + c.Collector.Health + "/"},
		{nameAlertmanager, c.Alertmanager, []string{
			"--config.file=" + p.AlertmanagerConfig,
			"--storage.path=" + p.AlertmanagerData,
			"--web.listen-address=" + c.AlertmanagerEndpoint,
			"--web.external-url=http://" + c.AlertmanagerEndpoint + "/",
			"--cluster.listen-address=", // no gossip port (it would listen on every interface)
		}, c.Env, "http://" + c.AlertmanagerEndpoint + "/-/ready"},
		{namePrometheus, c.Prometheus, []string{
			"--config.file=" + p.PrometheusConfig,
			"--storage.tsdb.path=" + p.PrometheusData,
			"--web.listen-address=" + c.PrometheusEndpoint,
			"--web.external-url=http://" + c.PrometheusEndpoint + "/",
		}, c.Env, "http://" + c.PrometheusEndpoint + "/-/ready"},
	}
	for _, s := range steps {
		ch, err := startChild(s.name, s.bin, s.args, s.env, p.logOf(s.name))
		if err != nil {
			return err
		}
		started = append(started, ch)
		fmt.Fprintf(out, "started %s (pid %d), waiting until it answers\n", s.name, ch.pid())
		if err := ch.waitReady(ctx, s.ready, DefaultStartTimeout); err != nil {
			if ctx.Err() != nil {
				stop()
				return nil
			}
			return err
		}
	}
	printWhere(out, c, p, started)

	died := make(chan *child, len(started))
	for _, ch := range started {
		go func() {
			<-ch.done
			select {
			case <-ch.stopping:
			default:
				died <- ch
			}
		}()
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(out, "stopping, in order: prometheus, alertmanager, the relay, the collector")
		stop()
		return nil
	case ch := <-died:
		return fmt.Errorf("%s (pid %d) exited (%v); the others are stopped. The end of %s:\n%s",
			ch.name, ch.pid(), ch.err, ch.log, indent(ch.logTail(15)))
	}
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func printWhere(w io.Writer, c Config, p Paths, started []*child) {
	fmt.Fprintln(w, "percause up: the collector, Prometheus and Alertmanager, on loopback")
	fmt.Fprintf(w, "  verdict page   http://%s/   (links in notifications: %s)\n", c.Collector.Page, c.PageURL)
	fmt.Fprintf(w, "  OTLP/HTTP in   http://%s   the phone's and the engine's exporters send here\n", c.Collector.OTLP)
	fmt.Fprintf(w, "  Prometheus     http://%s/   scrapes the collector and evaluates the alert rules every %s\n", c.PrometheusEndpoint, c.ScrapeInterval)
	fmt.Fprintf(w, "  Alertmanager   http://%s/   every alert; a movement keeps its alert firing for %s\n", c.AlertmanagerEndpoint, c.AlertWindow)
	if c.NotifyURL != "" {
		fmt.Fprintf(w, "  notifications  to %s (%s, %s format): each firing and each resolved alert\n", redact(c.NotifyURL), EnvNotifyURL, c.NotifyFormat)
	} else {
		fmt.Fprintf(w, "  notifications  none: %s is unset, so alerts show only in Alertmanager (http://%s/) and on the verdict page\n", EnvNotifyURL, c.AlertmanagerEndpoint)
	}
	fmt.Fprintf(w, "  data folder    %s\n", c.DataDir)
	fmt.Fprintf(w, "  configs        %s, %s, %s (written at every start)\n", p.PrometheusConfig, p.Rules, p.AlertmanagerConfig)
	for _, ch := range started {
		fmt.Fprintf(w, "  %-13s  pid %d, log %s\n", ch.name, ch.pid(), ch.log)
	}
	fmt.Fprintln(w, "running; Ctrl-C stops all three")
}
