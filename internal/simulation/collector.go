package simulation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/percause/percause/components/linesconnector"
	"github.com/percause/percause/components/sharedstorage"
	"github.com/percause/percause/components/verdictcountconnector"
	"github.com/percause/percause/components/verdictexporter"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor"
)

// ringSize is how many IDs each component remembers (decided traces,
// counted and written verdicts): more than a schedule's turns, far fewer
// than the default's 100,000, whose rings, made anew at every start,
// were most of a schedule's time.
const ringSize = 256

// dataDir is the simulated collector's data folder: a real, empty folder,
// which file_storage (underneath shared_storage, for its bbolt engine)
// checks exists; every file in it lives in the simulated file system.
var dataDir = sync.OnceValue(func() string {
	d, err := os.MkdirTemp("", "percause-simulation-")
	if err != nil {
		panic(err)
	}
	return d
})

// verdictFile is the verdict file's path.
func verdictFile() string { return filepath.Join(dataDir(), "verdicts.jsonl") }

// collector is one process's worth of the default's stateful path, wired
// as the embedded default wires it: the verdict processor, then the
// verdict count connector and the verdicts exporter behind one fan-out,
// every one of them keeping its state in one shared_storage (log engine);
// before the processor, the lines connector (collector-config/lines.yaml),
// its held lines in the same shared_storage.
type collector struct {
	ext      extension.Extension
	store    sharedstorage.Client // the simulation's own client: its reads commit what is staged
	lines    *linesconnector.Simulated
	proc     *verdictprocessor.Simulated
	count    connector.Traces
	verdicts exporter.Traces
	host     *host
}

// world is what outlives a process: the file system, the clock, the
// counts the metrics pipeline was handed, the downstream's refusals and
// what the components logged.
type world struct {
	fs     *FS
	now    time.Time
	fsync  bool
	counts atomic.Int64 // percause.turns points handed on, summed
	refuse refusals
	logs   *logSink
	cfg    Params
}

// refusals makes the consumer behind the processor refuse: the next n
// deliveries, or (hold) it waits for release first and then refuses.
type refusals struct {
	mu   sync.Mutex
	next int
	// gate, when set, holds the next delivery until it is closed.
	gate    chan struct{}
	arrived chan struct{}
	seen    int // deliveries refused
}

func (r *refusals) take() (refuse bool, gate, arrived chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gate, arrived = r.gate, r.arrived
	r.gate, r.arrived = nil, nil
	if r.next > 0 {
		r.next--
		r.seen++
		return true, gate, arrived
	}
	return false, gate, arrived
}

type host struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h *host) GetExtensions() map[component.ID]component.Component { return h.exts }

var (
	storageID = component.MustNewID("shared_storage")
	errRefuse = errors.New("simulation: the downstream refuses")
)

// start builds and starts a collector on the world's files, as a process
// that starts anew would. An error here is a collector that does not
// start again: an invariant broken.
func (w *world) start(ctx context.Context) (*collector, error) {
	c := &collector{}
	tel := componenttest.NewNopTelemetrySettings()
	tel.Logger = zap.New(w.logs)
	build := component.NewDefaultBuildInfo()

	// The process sees the files through its own handle: what a death
	// left running of it (the pebble engine's goroutines) touches nothing
	// of the next.
	files := w.fs.process()
	sf := sharedstorage.NewFactoryOn(files)
	scfg := sf.CreateDefaultConfig().(*sharedstorage.Config)
	scfg.Directory = dataDir()
	scfg.FSync = w.fsync
	scfg.Engine = w.cfg.Engine
	scfg.CompactAfter = w.cfg.CompactAfter
	// The simulation commits what is staged itself, after every step:
	// the extension's timer would do it at a moment of its own.
	scfg.StageFlush = time.Hour
	ext, err := sf.Create(ctx, extension.Settings{ID: storageID, TelemetrySettings: tel, BuildInfo: build}, scfg)
	if err != nil {
		return nil, err
	}
	c.ext = ext
	c.host = &host{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{storageID: ext}}

	vf := verdictexporter.NewFactoryOn(files)
	vcfg := vf.CreateDefaultConfig().(*verdictexporter.Config)
	vcfg.Path = verdictFile()
	vcfg.FSync = w.fsync
	vcfg.Recent = ringSize
	vcfg.Rotation.MaxMegabytes = 0 // rotation is by size in MB: more than a schedule writes
	if c.verdicts, err = vf.CreateTraces(ctx, exporter.Settings{ID: component.MustNewID("verdicts"), TelemetrySettings: tel, BuildInfo: build}, vcfg); err != nil {
		return nil, err
	}

	cf := verdictcountconnector.NewFactory()
	ccfg := cf.CreateDefaultConfig().(*verdictcountconnector.Config)
	ccfg.Storage = &storageID
	ccfg.FlushInterval = 0
	ccfg.Recent = ringSize
	ccfg.ResourceAttributes = []string{semconv.ServiceName, semconv.ServiceVersion}
	sink, _ := consumer.NewMetrics(w.consumeCounts)
	if c.count, err = cf.CreateTracesToMetrics(ctx, connector.Settings{ID: component.MustNewID("verdictcount"), TelemetrySettings: tel, BuildInfo: build}, ccfg, sink); err != nil {
		return nil, err
	}

	pcfg := verdictprocessor.NewFactory().CreateDefaultConfig().(*verdictprocessor.Config)
	pcfg.Emit = verdictprocessor.EmitVerdicts
	pcfg.Storage = &storageID
	pcfg.MaxPending = w.cfg.MaxPending
	pcfg.DecidedCacheSize = ringSize
	pcfg.Wait, pcfg.DecisionWait, pcfg.MaxAge = waitFor, decisionWait, maxAge
	next, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error { return w.downstream(ctx, c, td) })
	if c.proc, err = verdictprocessor.NewSimulated(processor.Settings{ID: component.MustNewID("verdict"), TelemetrySettings: tel, BuildInfo: build},
		pcfg, next, func() time.Time { return w.now }); err != nil {
		return nil, err
	}

	lcfg := linesconnector.NewFactory().CreateDefaultConfig().(*linesconnector.Config)
	if w.cfg.LinesMaxPending > 0 {
		lcfg.MaxPending = w.cfg.LinesMaxPending
	}
	lcfg.EmittedCacheSize = ringSize
	lcfg.Storage = &storageID
	toProc, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error { return c.proc.ConsumeTraces(ctx, td) })
	if c.lines, err = linesconnector.NewSimulated(connector.Settings{ID: component.MustNewID("lines"), TelemetrySettings: tel, BuildInfo: build},
		lcfg, toProc, func() time.Time { return w.now }); err != nil {
		return nil, err
	}

	// Extensions first, then from the exporter up, as the collector does.
	if err := ext.Start(ctx, c.host); err != nil {
		return nil, fmt.Errorf("shared_storage: %w", err)
	}
	cl, err := ext.(storage.Extension).GetClient(ctx, component.KindExtension, component.MustNewID("simulation"), "")
	if err != nil {
		return nil, err
	}
	c.store = cl.(sharedstorage.Client)
	for _, s := range []component.Component{c.verdicts, c.count, c.proc, c.lines} {
		if err := s.Start(ctx, c.host); err != nil {
			c.stop(ctx)
			return nil, err
		}
	}
	return c, nil
}

// downstream is the fan-out behind the processor: the count connector and
// the verdicts exporter, each handed the batch, their errors joined, as
// the collector's fan-out does; first, the simulation's refusals.
func (w *world) downstream(ctx context.Context, c *collector, td ptrace.Traces) error {
	refuse, gate, arrived := w.refuse.take()
	if arrived != nil {
		close(arrived)
	}
	if gate != nil {
		<-gate
	}
	if refuse {
		return errRefuse
	}
	return errors.Join(c.count.ConsumeTraces(ctx, td), c.verdicts.ConsumeTraces(ctx, td))
}

// consumeCounts is the metrics pipeline behind the count connector (the
// Prometheus exporter's): it keeps the sum of every percause.turns point.
func (w *world) consumeCounts(_ context.Context, md pmetric.Metrics) error {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() != verdictcountconnector.MetricTurns || m.Type() != pmetric.MetricTypeSum {
					continue
				}
				for l := 0; l < m.Sum().DataPoints().Len(); l++ {
					w.counts.Add(m.Sum().DataPoints().At(l).IntValue())
				}
			}
		}
	}
	return nil
}

// stop shuts the collector down, from the lines connector on (which emits
// what it holds to the processor: the schedule shuts it down itself, or,
// after a death, lets it go with the process, stopLines); after a crash
// every call of theirs fails, and only their goroutines end.
func (c *collector) stop(ctx context.Context) error {
	if c == nil {
		return nil
	}
	errs := []error{c.stopLines(ctx)}
	for _, s := range []component.Component{c.proc, c.count, c.verdicts} {
		if s != nil {
			errs = append(errs, s.Shutdown(ctx))
		}
	}
	if c.store != nil {
		errs = append(errs, c.store.Close(ctx))
	}
	if c.ext != nil {
		errs = append(errs, c.ext.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// stopLines shuts the lines connector down, once: it emits every turn it
// holds to the processor.
func (c *collector) stopLines(ctx context.Context) error {
	l := c.lines
	c.lines = nil
	if l == nil {
		return nil
	}
	return l.Shutdown(ctx)
}

// logSink puts what the components logged at warn and above in the
// schedule's journal, for a failure's report.
type logSink struct {
	zapcore.LevelEnabler
	journal *journal
}

func newLogSink(j *journal) *logSink { return &logSink{LevelEnabler: zapcore.WarnLevel, journal: j} }

func (l *logSink) With([]zapcore.Field) zapcore.Core { return l }
func (l *logSink) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if l.Enabled(e.Level) {
		return ce.AddCore(e, l)
	}
	return ce
}

func (l *logSink) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	l.journal.add("  log: " + fmt.Sprint(e.Message, " ", enc.Fields))
	return nil
}

func (l *logSink) Sync() error { return nil }
