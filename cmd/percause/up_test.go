package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab"
	"github.com/percause/percause/lab/scenario"
)

// upStartTimeout bounds how long `percause up` may take to say it runs.
const upStartTimeout = 90 * time.Second

// upRun is a running `percause up` (the real binary) with free loopback ports.
type upRun struct {
	proc                *testenv.Process
	page, otlp          string // http://…/ and http://…
	prom, am            string // http://host:port
	dataDir, verdicts   string
	pids                map[string]int
	scrape, alertWindow time.Duration
}

var upChild = regexp.MustCompile(`(?m)^  (collector|alertmanager|prometheus)\s+pid (\d+), log (\S+)$`)

// startUp runs `percause up` with every address on a free loopback port,
// the data folder in a temporary folder, and env on top; it returns once
// up says it runs.
func startUp(t *testing.T, env map[string]string) *upRun {
	t.Helper()
	bin := testenv.PercauseBin(t)
	dir := t.TempDir()
	port := func() string { return fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)) }
	otlp, page, prom, am := port(), port(), port(), port()
	u := &upRun{page: "http://" + page + "/", otlp: "http://" + otlp, prom: "http://" + prom, am: "http://" + am,
		dataDir: filepath.Join(dir, "data"), scrape: 5 * time.Second, alertWindow: 10 * time.Minute}
	u.verdicts = filepath.Join(u.dataDir, "verdicts.jsonl")
	all := map[string]string{
		"PERCAUSE_OTLP_ENDPOINT": otlp, "PERCAUSE_PAGE_ENDPOINT": page,
		"PERCAUSE_PROM_ENDPOINT": port(), "PERCAUSE_HEALTH_ENDPOINT": port(),
		"PERCAUSE_TELEMETRY_PORT":        strconv.Itoa(testenv.FreePort(t)),
		"PERCAUSE_PROMETHEUS_ENDPOINT":   prom,
		"PERCAUSE_ALERTMANAGER_ENDPOINT": am,
		"PERCAUSE_DATA_DIR":              u.dataDir,
		"PERCAUSE_VERDICT_FILE":          u.verdicts,
		"PERCAUSE_NOTIFY_URL":            "",
	}
	for k, v := range env {
		all[k] = v
	}
	if w, ok := all["PERCAUSE_ALERT_WINDOW"]; ok {
		d, err := time.ParseDuration(w)
		if err != nil {
			t.Fatal(err)
		}
		u.alertWindow = d
	}
	for k, v := range all {
		t.Setenv(k, v)
	}
	u.proc = testenv.Start(t, dir, bin, "up")
	testenv.WaitFor(t, upStartTimeout, "percause up to say it runs", func() bool {
		if u.proc.Exited() {
			t.Fatalf("percause up exited before it ran:\n%s", u.proc.Output())
		}
		return strings.Contains(u.proc.Output(), "running; Ctrl-C stops all three")
	})
	u.pids = map[string]int{}
	for _, m := range upChild.FindAllStringSubmatch(u.proc.Output(), -1) {
		u.pids[m[1]], _ = strconv.Atoi(m[2])
	}
	if len(u.pids) != 3 {
		t.Fatalf("percause up names %d children's pids, want 3:\n%s", len(u.pids), u.proc.Output())
	}
	return u
}

// alive reports whether a process with this pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// running reports whether a process with this pid runs: alive and not a
// zombie (an orphan whose parent does not reap it).
func running(pid int) bool {
	if !alive(pid) {
		return false
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	if i := bytes.LastIndexByte(st, ')'); i >= 0 && i+2 < len(st) {
		return st[i+2] != 'Z'
	}
	return true
}

// waitExit waits for up to end and returns its exit code.
func (u *upRun) waitExit(t *testing.T) int {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "percause up to exit", u.proc.Exited)
	return u.proc.Cmd.ProcessState.ExitCode()
}

// TestUpWithoutPrometheusSaysHowToInstallIt: on a machine without
// Prometheus and Alertmanager, `percause up` starts nothing, names both
// install commands and exits 2.
func TestUpWithoutPrometheusSaysHowToInstallIt(t *testing.T) {
	bin := testenv.PercauseBin(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "up")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir(), "PERCAUSE_DATA_DIR="+filepath.Join(dir, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("percause up without Prometheus: %v, want exit 2\n%s%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"prometheus (looked for prometheus on PATH)", "alertmanager (looked for alertmanager, prometheus-alertmanager on PATH)",
		"sudo apt-get install prometheus prometheus-alertmanager", "brew install prometheus alertmanager", "--prometheus PATH"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !errors.Is(err, os.ErrNotExist) || stdout.Len() > 0 {
		t.Errorf("percause up did something before refusing: %v\n%s", err, stdout.String())
	}
	// A flag naming a binary that is not there is no better.
	code := runUp(context.Background(), []string{"--prometheus", filepath.Join(dir, "none")}, func(string) string { return "" },
		exec.LookPath, io.Discard, io.Discard)
	if code != 2 {
		t.Errorf("--prometheus naming nothing: exit %d, want 2", code)
	}
}

// TestUpFlags: a stray argument or an unknown flag is a usage error.
func TestUpFlags(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"--nope"}} {
		var stderr bytes.Buffer
		if code := runUp(context.Background(), args, func(string) string { return "" }, exec.LookPath, io.Discard, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code := runUp(context.Background(), []string{"-h"}, func(string) string { return "" }, exec.LookPath, io.Discard, io.Discard); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
	var stderr bytes.Buffer
	env := map[string]string{"PERCAUSE_PROMETHEUS_ENDPOINT": "0.0.0.0:9466"}
	look := func(n string) (string, error) { return "/bin/true", nil }
	if code := runUp(context.Background(), nil, func(k string) string { return env[k] }, look, io.Discard, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "not a loopback address") {
		t.Errorf("Prometheus on every interface: exit %d\n%s", code, stderr.String())
	}
}

// TestUpStopsAllThreeInOrder: SIGTERM to `percause up` stops Prometheus,
// then Alertmanager, then the collector, each by its pid, and exits 0;
// none is left running. Without PERCAUSE_NOTIFY_URL it says where alerts
// show instead.
func TestUpStopsAllThreeInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts percause up")
	}
	testenv.RequirePrometheus(t)
	testenv.RequireAlertmanager(t)
	u := startUp(t, nil)
	out := u.proc.Output()
	for _, want := range []string{
		"verdict page   " + u.page, "Prometheus     " + u.prom + "/", "Alertmanager   " + u.am + "/",
		"notifications  none: PERCAUSE_NOTIFY_URL is unset, so alerts show only in Alertmanager (" + u.am + "/) and on the verdict page",
		"data folder    " + u.dataDir, filepath.Join(u.dataDir, "logs", "prometheus.log"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("percause up does not say %q:\n%s", want, out)
		}
	}
	for name, pid := range u.pids {
		if !alive(pid) {
			t.Fatalf("%s (pid %d) is not running", name, pid)
		}
	}
	// The collector knows its Alertmanager (its page shows what fires).
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", u.pids["collector"])); err == nil {
		if !slices.Contains(strings.Split(string(env), "\x00"), "PERCAUSE_ALERTMANAGER_URL="+u.am) {
			t.Errorf("the collector's environment lacks PERCAUSE_ALERTMANAGER_URL=%s", u.am)
		}
	}
	// Prometheus scrapes the collector and has loaded the rules.
	prom := &testenv.Prometheus{URL: u.prom}
	prom.WaitForQuery(t, 30*time.Second, `up{job="percause-verdicts"} == 1`)
	rules := promRules(t, u.prom)
	if !slices.Contains(rules.names, dashboards.AlertPoolResetMoved) {
		t.Errorf("Prometheus's rules: %v", rules.names)
	}

	if err := syscall.Kill(u.proc.Cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := u.waitExit(t); code != 0 {
		t.Fatalf("percause up after SIGTERM: exit %d\n%s", code, u.proc.Output())
	}
	out = u.proc.Output()
	last := -1
	for _, name := range []string{"prometheus", "alertmanager", "collector"} {
		i := strings.Index(out, fmt.Sprintf("stopped %s (pid %d)", name, u.pids[name]))
		if i < last {
			t.Errorf("%s stopped out of order:\n%s", name, out)
		}
		last = i
		if alive(u.pids[name]) {
			t.Errorf("%s (pid %d) still runs after percause up stopped", name, u.pids[name])
		}
	}
}

// TestUpStopsTheOthersWhenOneDies: with no restart allowed
// (PERCAUSE_RESTART_LIMIT=0), Prometheus killed under `percause up` is
// reported with its pid, Alertmanager and the collector are stopped, and
// up exits 1.
func TestUpStopsTheOthersWhenOneDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts percause up")
	}
	testenv.RequirePrometheus(t)
	testenv.RequireAlertmanager(t)
	u := startUp(t, map[string]string{"PERCAUSE_RESTART_LIMIT": "0"})
	victim := u.pids["prometheus"]
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatalf("the fault: killing Prometheus (pid %d): %v", victim, err)
	}
	if code := u.waitExit(t); code != 1 {
		t.Fatalf("percause up after its Prometheus died: exit %d, want 1\n%s", code, u.proc.Output())
	}
	out := u.proc.Output()
	if !strings.Contains(out, fmt.Sprintf("prometheus (pid %d) exited (signal: killed); the others are stopped", victim)) {
		t.Errorf("percause up does not report the death:\n%s", out)
	}
	for _, name := range []string{"alertmanager", "collector"} {
		if !strings.Contains(out, fmt.Sprintf("stopped %s (pid %d)", name, u.pids[name])) || alive(u.pids[name]) {
			t.Errorf("%s (pid %d) was not stopped:\n%s", name, u.pids[name], out)
		}
	}
}

// TestDemoSaysHowToGetAlerts: the demo's last line names `percause up`.
func TestDemoSaysHowToGetAlerts(t *testing.T) {
	var out bytes.Buffer
	printDemo(&out, &lab.Result{}, "127.0.0.1:9464", "127.0.0.1:9465", "v.jsonl", false, false)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "percause up") || !strings.Contains(last, "PERCAUSE_NOTIFY_URL") {
		t.Errorf("the demo ends with %q, want how to get alerts (percause up, PERCAUSE_NOTIFY_URL)", last)
	}
}

// notification is one message the receiver delivered (at: when it
// delivered it, which for a scheduled message is its delay after the post).
type notification struct {
	at     time.Time
	header http.Header
	body   string
}

func (n notification) alert() string        { return n.header.Get("X-Percause-Alert") }
func (n notification) status() string       { return n.header.Get("X-Percause-Status") }
func (n notification) installation() string { return n.header.Get("X-Percause-Installation") }
func (n notification) sequence() string     { return n.header.Get("X-Sequence-ID") }

// receiver stands in for the push service: an HTTP server on loopback that
// speaks ntfy's publishing API as ntfy documents it. A POST to the topic
// is a message (the body its text, Title, Priority, Tags, Click and
// Actions headers); it answers with the message as JSON (id, time, event,
// topic). X-Sequence-ID names the notification a message updates.
// X-Delay (whole seconds here, "600s"; at least 10 s, as ntfy) schedules
// it: it is delivered then, unless a later message with the same sequence
// ID replaces it first (ntfy deletes the scheduled one).
type receiver struct {
	*httptest.Server
	mu        sync.Mutex
	got       []notification
	scheduled map[string]*time.Timer // by sequence ID
	posts     int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{scheduled: map[string]*time.Timer{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost && req.Method != http.MethodPut {
			http.Error(w, "publish with POST or PUT", http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(req.Body)
		n := notification{at: time.Now(), header: req.Header.Clone(), body: string(b)}
		var delay time.Duration
		if d := req.Header.Get("X-Delay"); d != "" {
			var err error
			if delay, err = time.ParseDuration(d); err != nil || delay < 10*time.Second {
				http.Error(w, `{"code":40004,"error":"invalid delay parameter"}`, http.StatusBadRequest)
				return
			}
		}
		seq := n.sequence()
		r.mu.Lock()
		r.posts++
		id := fmt.Sprintf("m%06d", r.posts)
		if old := r.scheduled[seq]; seq != "" && old != nil {
			old.Stop() // replaced before it was delivered
			delete(r.scheduled, seq)
		}
		if delay > 0 {
			var tm *time.Timer
			tm = time.AfterFunc(delay, func() {
				r.mu.Lock()
				defer r.mu.Unlock()
				if seq != "" && r.scheduled[seq] != tm {
					return
				}
				delete(r.scheduled, seq)
				n.at = time.Now()
				r.got = append(r.got, n)
			})
			if seq != "" {
				r.scheduled[seq] = tm
			}
		} else {
			r.got = append(r.got, n)
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "time": n.at.Unix(), "event": "message",
			"topic": strings.TrimPrefix(req.URL.Path, "/"), "sequence_id": seq})
	}))
	t.Cleanup(r.Close)
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, tm := range r.scheduled {
			tm.Stop()
		}
	})
	return r
}

func (r *receiver) all() []notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notification(nil), r.got...)
}

func (r *receiver) count(alert, status, installation string) int {
	n := 0
	for _, x := range r.all() {
		if x.alert() == alert && x.status() == status && x.installation() == installation {
			n++
		}
	}
	return n
}

// waitFor waits for the nth post (from 1) matching alert, status and
// installation ("": any) and returns it.
func (r *receiver) waitFor(t *testing.T, timeout time.Duration, nth int, alert, status, installation string) notification {
	t.Helper()
	var found notification
	testenv.WaitFor(t, timeout, fmt.Sprintf("notification %d: %s %s", nth, alert, status), func() bool {
		k := 0
		for _, x := range r.all() {
			if x.alert() == alert && x.status() == status && (installation == "" || x.installation() == installation) {
				if k++; k == nth {
					found = x
					return true
				}
			}
		}
		return false
	})
	return found
}

// healLog records when the lab's phone healed its pool (the lanes log each
// heal).
type healLog struct {
	mu    sync.Mutex
	heals []time.Time
}

func (h *healLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *healLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *healLog) WithGroup(string) slog.Handler            { return h }
func (h *healLog) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "pool reset: fresh session") {
		h.mu.Lock()
		h.heals = append(h.heals, r.Time)
		h.mu.Unlock()
	}
	return nil
}

func (h *healLog) first() (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.heals) == 0 {
		return time.Time{}, false
	}
	return slices.MinFunc(h.heals, func(a, b time.Time) int { return a.Compare(b) }), true
}

type promRuleGroups struct {
	names          []string
	lastEvaluation time.Time
}

// promRules reads Prometheus's rule groups: the alert names and when the
// group was last evaluated.
func promRules(t *testing.T, promURL string) promRuleGroups {
	t.Helper()
	resp, err := http.Get(promURL + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				LastEvaluation time.Time `json:"lastEvaluation"`
				Rules          []struct {
					Name string `json:"name"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	var out promRuleGroups
	for _, g := range r.Data.Groups {
		out.lastEvaluation = g.LastEvaluation
		for _, rule := range g.Rules {
			out.names = append(out.names, rule.Name)
		}
	}
	return out
}

// phoneTurn records one turn of launch with the pool tally at tally (one
// unit, no underrun) and returns its trace ID.
func phoneTurn(t *testing.T, launch *instr.SDK, tally int) string {
	t.Helper()
	_, tr := launch.StartTurn(context.Background())
	// A refused reading reaches the launch's error handler, which fails the
	// test (relaunch's Setup).
	tr.SetLink(semconv.LinkWifi, "")
	tr.SetRoute(instr.Route{Outputs: []string{semconv.PortBuiltinSpeaker}, SampleRate: 16000})
	tr.SetPoolResets(tally)
	tr.Unit(instr.Unit{Index: 1, TakeID: tr.TraceID()[:8], Gap: 0.3, Lead: 0.4, Cushion: 1.5, Player: "queue"})
	tr.End()
	return tr.TraceID()
}

// TestUpNotifiesAPoolResetMovement is the end-to-end proof of alerts that
// reach a person: `percause up` (the real binary, its own collector, a real
// Prometheus and Alertmanager) with PERCAUSE_NOTIFY_URL at a receiver on
// loopback that speaks ntfy's publishing API, and the lab's stale-pool
// scenario sent to its collector.
//
//   - The heal notifies, naming PercausePoolResetMoved, the installation,
//     the tally before and after and the page's address of the turn that
//     moved, with a sequence ID (the one notification of the group).
//   - A relaunch of the same installation restarting its tally at 0 while
//     the alert fires tells nothing.
//   - That launch's own heal (0→1), while the alert still fires, is told
//     again ("moved again"), naming its turn, updating the same
//     notification: every movement is told.
//   - It resolves once the tally has not moved for the window, updating the
//     same notification again; Prometheus evaluated it firing many times
//     meanwhile, and the group produced one message per movement and one
//     for its end, no more.
//
// The window is 2 m here (PERCAUSE_ALERT_WINDOW), long enough for the
// relaunch inside it; scrape and evaluation keep up's default of 5 s.
func TestUpNotifiesAPoolResetMovement(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: percause up, the lab")
	}
	testenv.RequirePrometheus(t)
	testenv.RequireAlertmanager(t)
	recv := newReceiver(t)
	relay := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	u := startUp(t, map[string]string{"PERCAUSE_NOTIFY_URL": recv.URL + "/percause-e2e-topic", "PERCAUSE_ALERT_WINDOW": "2m",
		"PERCAUSE_RELAY_ENDPOINT": relay, "PERCAUSE_MUTE_URL": "http://" + relay})
	if !strings.Contains(u.proc.Output(), "notifications  to "+recv.URL+"/… (PERCAUSE_NOTIFY_URL, ntfy format)") {
		t.Errorf("percause up does not say where notifications go:\n%s", u.proc.Output())
	}
	prom := &testenv.Prometheus{URL: u.prom}
	const pool = dashboards.AlertPoolResetMoved

	scs, err := scenario.Lookup("stale-pool")
	if err != nil {
		t.Fatal(err)
	}
	heals := &healLog{}
	res, err := lab.Run(context.Background(), scs, lab.WithCollector(u.otlp, u.verdicts),
		lab.WithWorkDir(t.TempDir()), lab.WithLogger(slog.New(heals)))
	if err != nil {
		t.Fatal(err)
	}
	var poolTurns []string
	for _, tr := range res.Turns {
		t.Log(tr.Line())
		if slices.Contains(tr.Causes, semconv.CausePool) {
			poolTurns = append(poolTurns, tr.TraceID)
		}
	}
	healed, ok := heals.first()
	if !ok || len(poolTurns) == 0 {
		t.Fatalf("the lab's stale-pool healed no pool (heals logged: %v, pool verdicts: %d): nothing to alert on", ok, len(poolTurns))
	}

	// The heal notifies.
	fired := recv.waitFor(t, 2*time.Minute, 1, pool, "firing", "")
	inst := fired.installation()
	turn := fired.header.Get("X-Percause-Turn")
	seq := fired.sequence()
	t.Logf("first movement, heal to notification: %.1f s (heal at %s, notified at %s; scrape and evaluation every %s, for: 0s, the lab phone's metrics every 2 s)",
		fired.at.Sub(healed).Seconds(), healed.Format("15:04:05.000"), fired.at.Format("15:04:05.000"), u.scrape)
	if !slices.Contains(poolTurns, turn) || inst == "" || seq == "" {
		t.Errorf("the notification names turn %q of installation %q, sequence ID %q; the lab's pool turns: %v", turn, inst, seq, poolTurns)
	}
	if click := fired.header.Get("Click"); click != u.page+"?turn="+turn {
		t.Errorf("Click: %q, want the page's address for the turn %s?turn=%s", click, u.page, turn)
	}
	if !regexp.MustCompile(`^pool_reset moved \d+→\d+ on installation `+regexp.QuoteMeta(inst)+`: turn \d+ on wifi`).MatchString(fired.body) ||
		!strings.Contains(fired.body, u.page+"?turn="+turn) || !strings.Contains(fired.header.Get("Title"), "pool_reset moved on installation "+inst) {
		t.Errorf("the notification does not name the tally, the installation and the turn's page:\nTitle: %s\n%s", fired.header.Get("Title"), fired.body)
	}
	if fired.header.Get("Priority") != "4" {
		t.Errorf("a pool alert's priority: %q, want 4 (it pages)", fired.header.Get("Priority"))
	}

	// A relaunch of the installation while the alert fires, its tally
	// restarting at 0 beside the old launch's last tally (the collector
	// still exports it).
	relaunch, err := instr.Setup(context.Background(),
		instr.WithServiceName(semconv.ServicePhone), instr.WithInstallationID(inst), instr.WithEndpoint(u.otlp),
		instr.WithSpoolDir(filepath.Join(t.TempDir(), "relaunch")),
		instr.WithFlushInterval(100*time.Millisecond), instr.WithMetricInterval(300*time.Millisecond),
		instr.WithErrorHandler(func(err error) { t.Errorf("a reading was refused: %v", err) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = relaunch.Shutdown(context.Background()) })
	resets, err := relaunch.MeterProvider().Meter(lanes.ScopeName).Int64Counter(semconv.MetricPoolResets, metric.WithUnit(semconv.UnitResets))
	if err != nil {
		t.Fatal(err)
	}
	lane := metric.WithAttributes(attribute.String(semconv.Lane, semconv.LaneControl))
	resets.Add(context.Background(), 0, lane)
	phoneTurn(t, relaunch, 0)
	if err := relaunch.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	atZero := fmt.Sprintf(`pippa_pool_resets_total{app_installation_id=%q,service_instance_id=%q} == 0`, inst, relaunch.InstanceID())
	prom.WaitForQuery(t, time.Minute, atZero)
	seen := time.Now()
	testenv.WaitFor(t, time.Minute, "three rule evaluations over the relaunch's tally at 0", func() bool {
		return promRules(t, u.prom).lastEvaluation.After(seen.Add(3 * u.scrape))
	})
	firstFirings := recv.count(pool, "firing", inst)
	if recv.count(pool, "resolved", inst) != 0 {
		t.Fatalf("the alert resolved before the relaunch's heal: the window (%s) is too short for the test", u.alertWindow)
	}
	// The relaunched launch heals while the alert fires: that is a
	// movement, told again on the same notification.
	healedAgain := time.Now()
	resets.Add(context.Background(), 1, lane)
	moved := phoneTurn(t, relaunch, 1)
	if err := relaunch.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := recv.waitFor(t, 2*time.Minute, firstFirings+1, pool, "firing", inst)
	t.Logf("second movement (while the alert fires), heal to notification: %.1f s", again.at.Sub(healedAgain).Seconds())
	if again.header.Get("X-Percause-Turn") != moved || !strings.HasPrefix(again.body, "pool_reset moved again: 0→1, ") ||
		!strings.Contains(again.header.Get("Title"), "(again: ") {
		t.Errorf("the second movement's notification names turn %q (want %s):\nTitle: %s\n%s", again.header.Get("X-Percause-Turn"), moved, again.header.Get("Title"), again.body)
	}
	if again.sequence() != seq {
		t.Errorf("the second movement's sequence ID %q, want the group's %q (one notification updated in place)", again.sequence(), seq)
	}

	// It resolves once the tally has not moved for the window, on the same
	// notification.
	resolved := recv.waitFor(t, u.alertWindow+3*time.Minute, 1, pool, "resolved", inst)
	t.Logf("resolved %.1f s after the last movement's notification (window %s, Alertmanager's group_interval %s)", resolved.at.Sub(again.at).Seconds(), u.alertWindow, u.scrape)
	if resolved.sequence() != seq {
		t.Errorf("the resolution's sequence ID %q, want %q", resolved.sequence(), seq)
	}
	// Not once per scrape: Prometheus evaluated it firing many times.
	evals, err := prom.QueryRange(fmt.Sprintf(`ALERTS{alertname=%q,alertstate="firing",%s=%q}`, pool, "app_installation_id", inst),
		fired.at.Add(-u.scrape), resolved.at, u.scrape)
	if err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, e := range evals {
		points += len(e.Values)
	}
	if len(evals) < 2 || points < 6 {
		t.Errorf("Prometheus's firing evaluations of %s: %+v, want an alert at each tally and at least 6 evaluations (the check would prove nothing)", pool, evals)
	}
	group := 0
	for _, n := range recv.all() {
		if n.sequence() == seq {
			group++
		}
	}
	if group != firstFirings+2 || recv.count(pool, "firing", inst) != firstFirings+1 {
		t.Errorf("the group produced %d notifications (%d firing), want %d: one per movement and one for its end", group, recv.count(pool, "firing", inst), firstFirings+2)
	}
	t.Logf("one alert group, %d notifications under one sequence ID: %d for the lab's movements, 1 moved again, 1 resolved", group, firstFirings)

	// Mute from the phone: the first notification's action, tapped, makes
	// a silence of the installation at the real Alertmanager, which the
	// page shows with its end and lifts.
	act := strings.Split(fired.header.Get("Actions"), ", ")
	if len(act) < 4 || act[0] != "http" || !strings.HasPrefix(act[1], "Mute until ") || act[3] != "method=POST" {
		t.Fatalf("the firing notification's action: %q", fired.header.Get("Actions"))
	}
	resp, err := http.Post(act[2], "", nil)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tapping %s: %s %s", act[1], resp.Status, answer)
	}
	t.Logf("tapped %q: %s", act[1], strings.TrimSpace(string(answer)))
	silenceID := regexp.MustCompile(`silence ([0-9a-f-]+)`).FindStringSubmatch(string(answer))
	if silenceID == nil || silenceAt(t, u.am, silenceID[1]) != "active" {
		t.Fatalf("no active silence at Alertmanager after the tap: %s", answer)
	}
	_, page := getPage(t, u.page)
	if !strings.Contains(page, `data-silence="`+silenceID[1]+`">Muted: <code class="tok">app_installation_id=&#34;`+inst+`&#34;</code> until `) ||
		!strings.Contains(page, `name="lift" value="`+silenceID[1]+`"`) {
		t.Errorf("the page does not show the silence with a form to lift it")
	}
	req, _ := http.NewRequest(http.MethodPost, u.page, strings.NewReader("lift="+silenceID[1]))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || silenceAt(t, u.am, silenceID[1]) != "expired" {
		t.Errorf("lifting the silence from the page: %s, the silence %s", resp.Status, silenceAt(t, u.am, silenceID[1]))
	}
	for _, l := range strings.Split(u.proc.Output(), "\n") {
		if strings.Contains(l, " notified ") {
			t.Log(l)
		}
	}
	for _, n := range recv.all() {
		t.Logf("%s %s %s %s %s\n%s", n.at.Format("15:04:05.000"), n.alert(), n.status(), n.sequence(), n.header.Get("X-Percause-Turn"), n.body)
	}
}

var restartedLine = regexp.MustCompile(`(?m)^restarted collector \(pid (\d+)\) ([0-9.]+) s after it exited`)

// TestUpRestartsAKilledCollector: the collector killed (-9) under
// `percause up` is started again on its data folder, the restart is logged
// with how long it took and counted, and the phone is told; killed once
// more than PERCAUSE_RESTART_LIMIT (1 here) allows, up stops everything,
// exits 1 and says so in a notification at the highest priority, which
// takes the place of the heartbeat's scheduled one.
func TestUpRestartsAKilledCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("starts percause up")
	}
	testenv.RequirePrometheus(t)
	testenv.RequireAlertmanager(t)
	recv := newReceiver(t)
	u := startUp(t, map[string]string{"PERCAUSE_NOTIFY_URL": recv.URL + "/percause-e2e-topic", "PERCAUSE_HEARTBEAT": "20s", "PERCAUSE_RESTART_LIMIT": "1"})
	victim := u.pids["collector"]
	killed := time.Now()
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatalf("the fault: killing the collector (pid %d): %v", victim, err)
	}
	testenv.WaitFor(t, 2*time.Minute, "percause up to restart the collector", func() bool {
		if u.proc.Exited() {
			t.Fatalf("percause up exited after its collector died:\n%s", u.proc.Output())
		}
		return restartedLine.MatchString(u.proc.Output())
	})
	m := restartedLine.FindStringSubmatch(u.proc.Output())
	pid, _ := strconv.Atoi(m[1])
	if pid == victim || !alive(pid) {
		t.Fatalf("the restarted collector: pid %d (was %d), alive %v", pid, victim, alive(pid))
	}
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil &&
		!slices.Contains(strings.Split(string(env), "\x00"), "PERCAUSE_DATA_DIR="+u.dataDir) {
		t.Errorf("the restarted collector is not on its data folder %s", u.dataDir)
	}
	told := recv.waitFor(t, time.Minute, 1, "percause-up", "restarted", "")
	t.Logf("collector killed: restarted %s s after it exited (up's own measure), the phone told %.1f s after the kill", m[2], told.at.Sub(killed).Seconds())
	if !strings.Contains(told.header.Get("Title"), "collector died") || told.sequence() == "" {
		t.Errorf("the restart's notification:\nTitle: %s\n%s", told.header.Get("Title"), told.body)
	}
	for _, l := range strings.Split(u.proc.Output(), "\n") {
		if strings.Contains(l, "collector") && (strings.Contains(l, "exited") || strings.Contains(l, "restart")) {
			t.Log(l)
		}
	}

	// Once more than allowed: up gives up, and says so.
	killed = time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("the fault: killing the collector again (pid %d): %v", pid, err)
	}
	if code := u.waitExit(t); code != 1 {
		t.Fatalf("percause up after its collector died twice with one restart allowed: exit %d, want 1\n%s", code, u.proc.Output())
	}
	if out := u.proc.Output(); !strings.Contains(out, "gave up on collector: it died 2 times within 10m0s") {
		t.Errorf("percause up does not say it gave up:\n%s", out)
	}
	gaveUp := recv.waitFor(t, time.Minute, 1, "percause-up", "gave-up", "")
	t.Logf("collector killed a second time: up gave up, the phone told %.1f s after the kill", gaveUp.at.Sub(killed).Seconds())
	if gaveUp.header.Get("Priority") != "5" || !strings.Contains(gaveUp.header.Get("Title"), "gave up: collector keeps dying") {
		t.Errorf("the giving up's notification:\nPriority: %s\nTitle: %s\n%s", gaveUp.header.Get("Priority"), gaveUp.header.Get("Title"), gaveUp.body)
	}
	for _, name := range []string{"alertmanager", "prometheus"} {
		if running(u.pids[name]) {
			t.Errorf("%s (pid %d) still runs after up gave up", name, u.pids[name])
		}
	}
}

// TestUpSilenceIsNoticed: the phone learns that the machine went silent
// with nothing of it running to say so. While everything answers, `up`
// beats (PERCAUSE_HEARTBEAT, 20 s here for 10 m by default): each beat
// schedules the silence message one bound ahead under one sequence ID,
// replacing the one before, so nothing is delivered. Killed (-9), `up`
// itself, or `up` and every process it started at once (the machine off),
// the beats stop and the receiver, as ntfy, delivers the last scheduled
// message within the bound.
func TestUpSilenceIsNoticed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts percause up")
	}
	testenv.RequirePrometheus(t)
	testenv.RequireAlertmanager(t)
	const bound = 20 * time.Second
	for _, tc := range []struct {
		name string
		all  bool
	}{{"percause up killed", false}, {"every process killed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			recv := newReceiver(t)
			u := startUp(t, map[string]string{"PERCAUSE_NOTIFY_URL": recv.URL + "/percause-e2e-topic", "PERCAUSE_HEARTBEAT": bound.String()})
			// The kill falls between two beats (a beat every bound/2, the
			// first as up says it runs): a quarter of a beat after one.
			if !tc.all {
				// Running longer than the bound tells nothing: each beat
				// replaced the one before.
				time.Sleep(bound + bound/2 + bound/8)
				if n := recv.count("percause-up", "silent", ""); n != 0 || u.proc.Exited() {
					t.Fatalf("%d silence messages while percause up ran (exited: %v):\n%s", n, u.proc.Exited(), u.proc.Output())
				}
			} else {
				time.Sleep(bound / 8)
			}
			victims := []int{u.proc.Cmd.Process.Pid}
			if tc.all {
				for _, pid := range u.pids {
					victims = append(victims, pid)
				}
			}
			killed := time.Now()
			for _, pid := range victims {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatalf("the fault: kill -9 %d: %v", pid, err)
				}
			}
			silent := recv.waitFor(t, 2*bound+time.Minute, 1, "percause-up", "silent", "")
			t.Logf("%s: the phone told %.1f s after the kill (bound %s, a beat every %s)", tc.name, silent.at.Sub(killed).Seconds(), bound, bound/2)
			if !strings.Contains(silent.header.Get("Title"), "has gone silent") || silent.header.Get("Priority") != "4" {
				t.Errorf("the silence message:\nTitle: %s\n%s", silent.header.Get("Title"), silent.body)
			}
			testenv.WaitFor(t, 30*time.Second, "the children to end", func() bool {
				for _, pid := range u.pids {
					if running(pid) {
						return false
					}
				}
				return true
			})
		})
	}
}

// silenceAt is a silence's state at Alertmanager am (http://host:port).
func silenceAt(t *testing.T, am, id string) string {
	t.Helper()
	resp, err := http.Get(am + "/api/v2/silence/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		CreatedBy string `json:"createdBy"`
		Status    struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.CreatedBy != "percause up" {
		t.Errorf("silence %s was made by %q", id, s.CreatedBy)
	}
	return s.Status.State
}

// getPage GETs the verdict page.
func getPage(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
