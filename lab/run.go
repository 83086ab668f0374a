package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/engine"
	"github.com/percause/percause/lab/faults"
	"github.com/percause/percause/lab/phone"
	"github.com/percause/percause/lab/scenario"
	"github.com/percause/percause/lab/verdicts"
)

// Defaults of a lab run.
const (
	// DefaultScale runs five person-seconds in one wall second. With every
	// scenario running at once the whole set takes about half a minute,
	// and a person-second still lasts 200 ms: a busy machine's scheduling
	// noise (100 ms is common when other builds share its cores) stays well
	// clear of the thresholds the rules read (1.5 s to open the microphone,
	// the check's 5 s timeout, the 1.5 s cushion).
	DefaultScale = 5.0
	// DefaultParallel is how many scenarios run at once: all of the table.
	// Each has its own engine, proxy and phone; the lab mostly waits on
	// timers and sockets, so they hardly compete.
	DefaultParallel = 16
	// startStagger spaces the scenarios' starts, so their launches (SDK,
	// spool, engine, first connections) do not all land in one instant.
	startStagger = 150 * time.Millisecond
	// DefaultVerdictTimeout bounds the wait for the last verdicts after the
	// last turn.
	DefaultVerdictTimeout = 30 * time.Second
	// flushTimeout bounds one turn's flush to the collector.
	flushTimeout = 10 * time.Second
)

type config struct {
	scale          float64
	otlp           string
	verdictFile    string
	collectorBin   string
	workDir        string
	log            *slog.Logger
	verdictTimeout time.Duration
	parallel       int
	onTurn         func(TurnResult)
	textLogs       string
}

// Option configures Run.
type Option func(*config)

// WithScale sets person-seconds per wall second (default DefaultScale).
func WithScale(f float64) Option { return func(c *config) { c.scale = f } }

// WithCollector uses a collector that is already running: OTLP/HTTP base
// URL and its verdict file. Without it Run starts one (WithCollectorBinary).
func WithCollector(otlpURL, verdictFile string) Option {
	return func(c *config) { c.otlp, c.verdictFile = otlpURL, verdictFile }
}

// WithCollectorBinary is the percause binary Run starts as `percause
// collector` when no running collector is given.
func WithCollectorBinary(path string) Option { return func(c *config) { c.collectorBin = path } }

// WithWorkDir keeps the run's spools and the collector's data under dir
// (default: a temporary folder removed at the end).
func WithWorkDir(dir string) Option { return func(c *config) { c.workDir = dir } }

// WithLogger logs the run's components (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithVerdictTimeout bounds the wait for verdicts after the last turn.
func WithVerdictTimeout(d time.Duration) Option { return func(c *config) { c.verdictTimeout = d } }

// WithParallel runs n scenarios at once (default DefaultParallel; 1: one
// after another).
func WithParallel(n int) Option { return func(c *config) { c.parallel = n } }

// WithTurnHook is told of every scenario's turns as the scenario ends, before
// their verdicts (calls never overlap).
func WithTurnHook(f func(TurnResult)) Option { return func(c *config) { c.onTurn = f } }

// Files WithTextLogs writes.
const (
	PhoneLog  = "phone.log"
	EngineLog = "engine.log"
)

// WithTextLogs has the SDKs write their own text logs (instr.WithTextLog)
// into dir, appending: every phone launch's [voice-turn] lines to PhoneLog,
// every engine's [tts-take] lines to EngineLog, except an engine whose
// telemetry is lost (its lines are lost with it).
func WithTextLogs(dir string) Option { return func(c *config) { c.textLogs = dir } }

func (c *config) validate() error {
	switch {
	case !(c.scale > 0) || math.IsInf(c.scale, 0):
		return fmt.Errorf("lab: scale must be a positive finite number, got %v", c.scale)
	case (c.otlp == "") != (c.verdictFile == ""):
		return errors.New("lab: a running collector needs both its OTLP URL and its verdict file")
	case c.otlp == "" && c.collectorBin == "":
		return errors.New("lab: no collector: give a running one (OTLP URL and verdict file) or the percause binary to start")
	case c.verdictTimeout <= 0:
		return fmt.Errorf("lab: verdict timeout must be positive, got %v", c.verdictTimeout)
	case c.parallel < 1:
		return fmt.Errorf("lab: parallel must be at least 1, got %d", c.parallel)
	}
	return nil
}

// Result is a whole lab run.
type Result struct {
	Turns []TurnResult
	// Prometheus is the started collector's Prometheus endpoint ("" when
	// the collector was given).
	Prometheus  string
	VerdictFile string
	Wall        time.Duration
}

// Mismatches counts the turns whose verdict or readings differ from the
// scenario's expectation.
func (r *Result) Mismatches() int {
	n := 0
	for _, t := range r.Turns {
		if !t.OK {
			n++
		}
	}
	return n
}

// Run runs the scenarios (up to WithParallel at once, each on an engine,
// proxy and phone of its own) and returns every turn with its verdict. An error means the lab itself could not run (a turn that merely
// disagrees with its expectation is a mismatch in the result, not an error).
func Run(ctx context.Context, scenarios []scenario.Scenario, opts ...Option) (*Result, error) {
	cfg := config{scale: DefaultScale, verdictTimeout: DefaultVerdictTimeout, parallel: DefaultParallel,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	for _, s := range scenarios {
		if err := s.Validate(); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	work := cfg.workDir
	if work == "" {
		dir, err := os.MkdirTemp("", "percause-lab-")
		if err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	res := &Result{VerdictFile: cfg.verdictFile}
	otlpURL := cfg.otlp
	if otlpURL == "" {
		col, err := StartCollector(ctx, cfg.collectorBin, filepath.Join(work, "collector"))
		if err != nil {
			return nil, err
		}
		defer col.Stop()
		otlpURL, res.VerdictFile, res.Prometheus = col.OTLP, col.VerdictFile, col.Prometheus
	}
	reader := verdicts.NewReader(res.VerdictFile)
	r := &runner{cfg: cfg, otlp: otlpURL, work: work, capture: newCapture(), installation: uuid.NewString(),
		reader: reader, watch: startWatchdog()}
	if cfg.textLogs != "" {
		closeLogs, err := r.openTextLogs(cfg.textLogs)
		if err != nil {
			return nil, err
		}
		defer closeLogs()
	}
	defer r.watch.close()
	turns, err := r.batch(ctx, scenarios)
	res.Turns = turns
	if err == nil {
		// A scenario that missed its expectation on a turn its host disturbed
		// runs once more; a mismatch on an undisturbed turn stands.
		var again []scenario.Scenario
		for _, s := range scenarios {
			if disturbedMismatch(turns, s.Name) {
				again = append(again, s)
			}
		}
		if len(again) > 0 {
			var retried []TurnResult
			retried, err = r.batch(ctx, again)
			res.Turns = replace(res.Turns, retried)
		}
	}
	res.Wall = time.Since(start)
	if err != nil && ctx.Err() != nil {
		return res, fmt.Errorf("lab: interrupted: %w", ctx.Err())
	}
	return res, err
}

// disturbedMismatch reports whether a turn of the scenario missed its
// expectation while the host stalled.
func disturbedMismatch(turns []TurnResult, name string) bool {
	for _, t := range turns {
		if t.Scenario == name && !t.OK && t.Disturbed {
			return true
		}
	}
	return false
}

// replace puts the retried scenarios' turns in place of the first attempt's.
func replace(turns, retried []TurnResult) []TurnResult {
	by := map[string][]TurnResult{}
	for _, t := range retried {
		t.Attempt = 2
		by[t.Scenario] = append(by[t.Scenario], t)
	}
	var out []TurnResult
	done := map[string]bool{}
	for _, t := range turns {
		if rt, ok := by[t.Scenario]; ok {
			if !done[t.Scenario] {
				out = append(out, rt...)
				done[t.Scenario] = true
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// batch runs scenarios at once (up to the parallel limit), then reads their
// verdicts back from the collector and judges every turn.
func (r *runner) batch(ctx context.Context, scenarios []scenario.Scenario) ([]TurnResult, error) {
	cfg := r.cfg
	perScenario := make([][]TurnResult, len(scenarios))
	errs := make([]error, len(scenarios))
	var (
		wg     sync.WaitGroup
		hookMu sync.Mutex
		slots  = make(chan struct{}, cfg.parallel)
	)
	for i, s := range scenarios {
		wg.Add(1)
		slots <- struct{}{}
		if i > 0 {
			time.Sleep(startStagger)
		}
		go func() {
			defer func() { <-slots; wg.Done() }()
			turns, err := r.scenario(ctx, s)
			perScenario[i], errs[i] = turns, err
			if cfg.onTurn != nil {
				hookMu.Lock()
				for _, t := range turns {
					cfg.onTurn(t)
				}
				hookMu.Unlock()
			}
		}()
	}
	wg.Wait()
	var turns []TurnResult
	for _, ts := range perScenario {
		turns = append(turns, ts...)
	}
	if err := errors.Join(errs...); err != nil {
		return turns, err
	}
	// The verdicts come back through the collector.
	ids := make([]string, 0, len(turns))
	for _, t := range turns {
		ids = append(ids, t.TraceID)
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.verdictTimeout)
	defer cancel()
	got, werr := r.reader.Wait(wctx, ids)
	for i := range turns {
		t := &turns[i]
		if v, ok := got[t.TraceID]; ok {
			t.setVerdict(v)
		}
		t.judge()
	}
	if werr != nil && ctx.Err() != nil {
		return turns, werr
	}
	return turns, nil
}

// runner holds what one Run shares between scenarios.
type runner struct {
	cfg          config
	otlp         string
	work         string
	capture      *capture
	installation string
	launches     atomic.Int64
	reader       *verdicts.Reader
	watch        *watchdog
	// phoneLog and engineLog are the SDKs' text logs (WithTextLogs); nil
	// when not written.
	phoneLog, engineLog io.Writer
}

// openTextLogs opens the text logs for appending; every SDK writes a line
// in one write, so lines of SDKs running at once never interleave.
func (r *runner) openTextLogs(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	open := func(name string) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	}
	p, err := open(PhoneLog)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	e, err := open(EngineLog)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("lab: %w", err)
	}
	r.phoneLog, r.engineLog = p, e
	return func() { p.Close(); e.Close() }, nil
}

// textLog is the option writing an SDK's text log to w, if any.
func textLog(w io.Writer) []instr.Option {
	if w == nil {
		return nil
	}
	return []instr.Option{instr.WithTextLog(w)}
}

func (r *runner) dir(name string) string {
	return filepath.Join(r.work, "spool", fmt.Sprintf("%02d-%s", r.launches.Add(1), name))
}

// faultsNow is the turn's fault switches the phone's hooks read.
type faultsNow struct {
	mu sync.Mutex
	t  scenario.Turn
	wg sync.WaitGroup // faults still running (an engine down, a device offline)
}

func (f *faultsNow) set(t scenario.Turn) {
	f.mu.Lock()
	f.t = t
	f.mu.Unlock()
}

func (f *faultsNow) get() scenario.Turn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// scenario runs one scenario on a fresh engine, proxy and phone.
func (r *runner) scenario(ctx context.Context, s scenario.Scenario) ([]TurnResult, error) {
	cfg := r.cfg
	var eng *launch
	var err error
	if s.EngineTelemetryLost {
		eng, err = setupLostSDK(ctx, cfg.scale, r.capture, cfg.log, instr.WithServiceName(semconv.ServiceEngine))
	} else {
		eng, err = setupSDK(ctx, r.otlp, r.dir("engine-"+s.Name), cfg.scale, r.capture, cfg.log,
			append(textLog(r.engineLog), instr.WithServiceName(semconv.ServiceEngine))...)
	}
	if err != nil {
		return nil, err
	}
	defer shutdown(eng)
	e, err := engine.New(engine.WithTimeScale(cfg.scale), engine.WithTakes(engine.SDKTakes(eng.sdk)),
		engine.WithTracing(eng.sdk.TracerProvider(), instr.Propagator()))
	if err != nil {
		return nil, err
	}
	defer e.Close()
	proxy, err := faults.Listen(e.Addr(), faults.WithTimeScale(cfg.scale))
	if err != nil {
		return nil, err
	}
	defer proxy.Close()

	var (
		fx      faultsNow
		ph      *phone.Phone
		ln      *launch
		lc      *lanes.Client
		arrange string
		out     []TurnResult
	)
	closePhone := func() {
		if ln != nil {
			lc.Close()
			shutdown(ln)
		}
	}
	defer func() { closePhone() }()
	wall := func(person float64) time.Duration { return time.Duration(person / cfg.scale * float64(time.Second)) }
	hooks := phone.Hooks{Speaking: func(int) {
		if fx.get().StaleWhileSpeaking {
			proxy.StaleOpen()
		}
	}, TakesArrived: func(int) {
		t := fx.get()
		if t.StaleAfterTakes {
			proxy.StaleOpen()
		}
		if t.RestartFor > 0 {
			e.Stop()
			fx.wg.Add(1)
			time.AfterFunc(wall(t.RestartFor), func() {
				defer fx.wg.Done()
				if err := e.Restart(); err != nil {
					cfg.log.Error("lab: engine restart", "err", err)
				}
			})
		}
		if t.OfflineFor > 0 {
			ph.SetOnline(false)
			proxy.SetOffline(true)
			fx.wg.Add(1)
			time.AfterFunc(wall(t.OfflineFor), func() {
				defer fx.wg.Done()
				proxy.SetOffline(false)
				ph.SetOnline(true)
			})
		}
	}}

	for i, t := range s.Turns {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		want := t.Lanes
		if want == "" {
			want = scenario.LanesSplit
		}
		if ph == nil || want != arrange {
			closePhone()
			ln, err = setupSDK(ctx, r.otlp, r.dir("phone-"+s.Name), cfg.scale, r.capture, cfg.log,
				append(textLog(r.phoneLog), instr.WithServiceName(semconv.ServicePhone), instr.WithInstallationID(r.installation))...)
			if err != nil {
				return out, err
			}
			// The hooks hold this launch's SDK and phone, never a later
			// launch's: a call of a closed client may still be finishing.
			live, launched := ln.sdk.Live(), new(*phone.Phone)
			lopts := []lanes.Option{lanes.WithTimeScale(cfg.scale),
				lanes.WithTracerProvider(ln.sdk.TracerProvider()), lanes.WithMeterProvider(ln.sdk.MeterProvider()),
				lanes.WithPropagator(instr.Propagator()), lanes.WithLogger(cfg.log),
				lanes.WithInFlightHook(func(_ string, d int) { live.Add(semconv.LiveRepliesInFlight, d) }),
				lanes.WithResetHook(func(rs lanes.Reset) {
					if p := *launched; p != nil {
						p.OnReset(rs)
					}
				}),
			}
			if want == scenario.LanesShared {
				lopts = append(lopts, lanes.WithSharedPool())
			}
			lc, err = lanes.New(lopts...)
			if err != nil {
				return out, err
			}
			pc := phone.DefaultConfig(proxy.URL())
			pc.Scale = cfg.scale
			ph, err = phone.New(pc, ln.sdk, lc, hooks)
			if err != nil {
				return out, err
			}
			*launched = ph
			arrange = want
			if err := ph.Warm(ctx); err != nil {
				cfg.log.Warn("lab: phone warm-up", "err", err)
			}
		}
		ecfg := engine.DefaultConfig()
		if t.Rate > 0 {
			ecfg.Rate = t.Rate
		}
		if t.FirstByte > 0 {
			ecfg.FirstByte = t.FirstByte
		}
		ecfg.LinesOpen = t.LinesOpen
		if t.Grant > 0 {
			ecfg.Grant = t.Grant
		}
		if t.Socket > 0 {
			ecfg.Socket = t.Socket
		}
		if len(t.Reply) > 0 {
			ecfg.Reply = nil
			for _, l := range t.Reply {
				ecfg.Reply = append(ecfg.Reply, engine.Line{Text: l.Text, After: l.After})
			}
		}
		if err := e.SetConfig(ecfg); err != nil {
			return out, err
		}
		if err := proxy.SetShape(t.ShapeOf()); err != nil {
			return out, err
		}
		fx.set(t)
		upload := t.Upload
		if upload == 0 {
			upload = scenario.DefaultUpload
		}
		ln.busy.Store(true)
		turnStart := time.Now()
		plan := phone.Plan{Leak: t.Leak, Bluetooth: t.Bluetooth, Upload: upload, Speech: t.Speech, Session: t.Session,
			Media: t.Media, MediaFor: t.MediaFor}
		if t.Link == scenario.LinkLTE {
			plan.LinkType, plan.LinkSubtype = semconv.LinkCell, semconv.LinkSubtypeLTE
		}
		rep, err := ph.Turn(ctx, plan)
		turnEnd := time.Now()
		ln.busy.Store(false)
		fx.wg.Wait() // the engine is back, the device online
		_ = proxy.SetShape(faults.Shape{})
		if err != nil {
			return out, fmt.Errorf("lab: %s turn %d: %w", s.Name, i+1, err)
		}
		fctx, cancel := context.WithTimeout(ctx, flushTimeout)
		ferr := errors.Join(ln.flush(fctx), eng.flush(fctx))
		cancel()
		if ferr != nil {
			cfg.log.Warn("lab: flush", "err", ferr)
		}
		tr := TurnResult{Scenario: s.Name, Turn: i + 1, LaunchTurn: rep.Index, Expected: t.Expect.String(),
			expect: t.Expect, TraceID: rep.TraceID, Causes: []string{}}
		tr.Readings = readingsOf(r.capture.trace(rep.TraceID), rep)
		tr.Readings.Refused = append(ln.takeRefused(), eng.takeRefused()...)
		tr.HostStall = r.watch.longest(turnStart, turnEnd).Seconds() * cfg.scale
		tr.Disturbed = tr.HostStall > DefaultStallLimit
		out = append(out, tr)
	}
	return out, nil
}

func shutdown(l *launch) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	_ = l.shutdown(ctx)
}
