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
	"github.com/percause/percause/internal/leaf/plural"
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
		// A movement while its alert fires is told one interval later at most.
		dashboards.WithGroupInterval(fmt.Sprintf("%ds", int(c.ScrapeInterval/time.Second))),
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
		addr := c.RelayEndpoint
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("the relay cannot listen on %s (%v): set %s to move it", addr, err, EnvRelayEndpoint)
		}
		rl = newRelay(c, token, out)
		if c.MuteURL != "" {
			if rl.muteKey, err = loadMuteKey(filepath.Join(p.ConfigDir, MuteKeyFile)); err != nil {
				ln.Close()
				return fmt.Errorf("the mute key: %w", err)
			}
		}
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
		fmt.Fprintf(out, "stopped the relay: %s from Alertmanager, %s sent (%d of them %s), %d failed, %s refused\n",
			plural.N(rl.received.Load(), "post"), plural.N(rl.sent.Load(), "notification"), rl.beats.Load(),
			plural.Word(rl.beats.Load(), "a heartbeat", "heartbeats"), rl.failed.Load(), plural.N(rl.refused.Load(), "post"))
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
	type step struct {
		name, bin string
		args, env []string
		ready     string
	}
	steps := []step{
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

	died := make(chan int, len(started))
	watch := func(i int, ch *child) {
		go func() {
			<-ch.done
			select {
			case <-ch.stopping:
			default:
				died <- i
			}
		}()
	}
	for i, ch := range started {
		watch(i, ch)
	}
	beatCtx, stopBeat := context.WithCancel(context.Background())
	defer stopBeat()
	if rl != nil && c.Heartbeat > 0 {
		ready := make([]string, len(steps))
		for i, s := range steps {
			ready[i] = s.ready
		}
		go rl.heartbeat(beatCtx, c, func() error { return answers(ready...) })
	}
	// tellUp posts one of up's own messages, when there is a target.
	tellUp := func(m message) {
		if rl == nil {
			return
		}
		tctx, cancel := context.WithTimeout(context.Background(), DefaultNotifyTimeout)
		defer cancel()
		rl.tell(tctx, m)
	}
	name := host()
	stopped := func(why string) {
		stopBeat()
		tellUp(message{Status: "stopped", SequenceID: upSequence(c, "heartbeat"), Priority: 3, Tags: []string{"stop_sign", "percause"},
			Title: fmt.Sprintf("percause up on %s stopped", name),
			Body:  fmt.Sprintf("percause up on %s stopped at %s: %s. No alert from it reaches you until it starts again.", name, time.Now().In(time.Local).Format("15:04:05 MST"), why)})
	}
	dead := make([]deaths, len(started))
	restarts := 0
	for {
		var i int
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "stopping, in order: prometheus, alertmanager, the relay, the collector")
			stopBeat()
			stopped("asked to stop")
			stop()
			return nil
		case i = <-died:
		}
		ch, s := started[i], steps[i]
		diedAt := time.Now()
		n := dead[i].add(diedAt)
		if n > c.RestartLimit {
			err := fmt.Errorf("%s (pid %d) exited (%v); the others are stopped: it died %s within %s, more than the %s allowed (%s). The end of %s:\n%s",
				ch.name, ch.pid(), ch.err, plural.N(n, "time"), RestartWindow, plural.N(c.RestartLimit, "restart"), EnvRestartLimit, ch.log, indent(ch.logTail(15)))
			fmt.Fprintf(out, "gave up on %s: it died %s within %s\n", ch.name, plural.N(n, "time"), RestartWindow)
			stopBeat()
			tellUp(message{Status: "gave-up", SequenceID: upSequence(c, "heartbeat"), Priority: 5, Tags: []string{"skull", "percause"},
				Title: fmt.Sprintf("percause up on %s gave up: %s keeps dying", name, ch.name),
				Body: fmt.Sprintf("%s died %s within %s (last: %v) and percause up stopped everything at %s, after %s in all. No alert from %s reaches you until someone starts it again; its log: %s.",
					ch.name, plural.N(n, "time"), RestartWindow, ch.err, time.Now().In(time.Local).Format("15:04:05 MST"), plural.N(restarts, "restart"), name, ch.log)})
			return err
		}
		pause := restartPause(n)
		fmt.Fprintf(out, "%s (pid %d) exited (%v); restarting it in %s (death %d within %s; up gives up after %d)\n",
			ch.name, ch.pid(), ch.err, pause, n, RestartWindow, c.RestartLimit+1)
		select {
		case <-ctx.Done():
			stopped("asked to stop")
			stop()
			return nil
		case <-time.After(pause):
		}
		nc, err := startChild(s.name, s.bin, s.args, s.env, p.logOf(s.name))
		if err != nil {
			return err
		}
		started[i] = nc
		if err := nc.waitReady(ctx, s.ready, DefaultStartTimeout); err != nil {
			if ctx.Err() != nil {
				stopped("asked to stop")
				stop()
				return nil
			}
			fmt.Fprintf(out, "%s did not come back: %v\n", s.name, err)
			if !nc.exited() {
				nc.stop(DefaultStopTimeout)
			}
			died <- i // counted as another death
			continue
		}
		watch(i, nc)
		restarts++
		took := time.Since(diedAt)
		fmt.Fprintf(out, "restarted %s (pid %d) %.1f s after it exited: restart %d in all, %d of %d within %s\n",
			s.name, nc.pid(), took.Seconds(), restarts, n, c.RestartLimit, RestartWindow)
		prio := 3
		if n > 1 {
			prio = 4
		}
		tellUp(message{Status: "restarted", SequenceID: upSequence(c, s.name), Priority: prio, Tags: []string{"recycle", "percause"},
			Title: fmt.Sprintf("%s died on %s and was restarted (%d of %d within %s)", s.name, name, n, c.RestartLimit, RestartWindow),
			Body: fmt.Sprintf("%s (pid %d) exited (%v) at %s; percause up started it again (pid %d) %.1f s later. After %s within %s it gives up and tells you. Its log: %s.",
				s.name, ch.pid(), ch.err, diedAt.In(time.Local).Format("15:04:05 MST"), nc.pid(), took.Seconds(), plural.N(c.RestartLimit+1, "death"), RestartWindow, nc.log),
			Click: c.PageURL})
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
	if c.MuteURL != "" {
		fmt.Fprintf(w, "  mute           a firing notification's action mutes its installation for %s through the relay (%s, as the phone reaches it: %s)\n", MuteFor, c.RelayEndpoint, redact(c.MuteURL))
	}
	fmt.Fprintf(w, "  restarts       a child that dies is started again (pauses of 1 s doubling to 30 s); after %s of one within %s up stops and says so (%s)\n",
		plural.N(c.RestartLimit, "restart"), RestartWindow, EnvRestartLimit)
	switch {
	case c.NotifyURL != "" && c.Heartbeat > 0:
		fmt.Fprintf(w, "  heartbeat      every %s a message scheduled %s ahead replaces the last: if this machine or up goes silent, the phone is told within %s (%s)\n",
			max(c.Heartbeat/2, time.Second), c.Heartbeat, c.Heartbeat, EnvHeartbeat)
	case c.NotifyURL != "":
		fmt.Fprintf(w, "  heartbeat      off (%s): a silent machine is not told\n", EnvHeartbeat)
	}
	fmt.Fprintf(w, "  data folder    %s\n", c.DataDir)
	fmt.Fprintf(w, "  configs        %s, %s, %s (written at every start)\n", p.PrometheusConfig, p.Rules, p.AlertmanagerConfig)
	for _, ch := range started {
		fmt.Fprintf(w, "  %-13s  pid %d, log %s\n", ch.name, ch.pid(), ch.log)
	}
	fmt.Fprintln(w, "running; Ctrl-C stops all three")
}
