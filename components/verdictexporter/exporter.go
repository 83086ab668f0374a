package verdictexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/percause/percause/components/verdictexporter/internal/metadata"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/idring"
	"github.com/percause/percause/verdict"
)

// verdictExporter appends verdict spans to the verdict file and, with
// http, keeps the recent verdicts and link status changes and serves the
// verdict page from them.
type verdictExporter struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	telset component.TelemetrySettings
	now    func() time.Time

	// page is nil without http; server serves it.
	page   *pageStore
	server *http.Server
	served chan struct{}
	addr   string
	// alertClient asks Alertmanager (page.alertmanager) what is firing.
	alertClient *http.Client
	// stopFlush ends the loop that stores the page's changes; flushed
	// closes when it has.
	stopFlush, flushed chan struct{}

	mu     sync.Mutex
	f      *os.File
	size   int64
	recent *idring.Ring[pcommon.SpanID]
	buf    []byte
}

var _ exporter.Traces = (*verdictExporter)(nil)

func newExporter(set exporter.Settings, cfg *Config) (*verdictExporter, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &verdictExporter{cfg: cfg, id: set.ID, logger: set.Logger, tel: tel, telset: set.TelemetrySettings,
		now: time.Now, recent: idring.New[pcommon.SpanID](cfg.Recent), alertClient: &http.Client{Timeout: AlertmanagerTimeout}}
	if cfg.HTTP.HasValue() {
		e.page = newPageStore(cfg.Keep)
	}
	return e, nil
}

// Capabilities: the batch is only read.
func (e *verdictExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start opens the file for appending. A line a crash left half written is
// cut off (it was never acknowledged, so its verdict is sent again), and
// the verdicts of the file's last lines are remembered.
func (e *verdictExporter) Start(ctx context.Context, host component.Host) error {
	if err := os.MkdirAll(filepath.Dir(e.cfg.Path), 0o755); err != nil {
		return fmt.Errorf("verdict exporter: %w", err)
	}
	f, err := os.OpenFile(e.cfg.Path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("verdict exporter: %w", err)
	}
	size, err := e.recover(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("verdict exporter: reading %s: %w", e.cfg.Path, err)
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("verdict exporter: %w", err)
	}
	e.f, e.size = f, size
	if e.page == nil {
		return nil
	}
	if e.cfg.Storage != nil {
		n, err := e.page.open(ctx, host, *e.cfg.Storage, e.id, e.now())
		if err != nil {
			e.closeFile()
			return fmt.Errorf("verdict exporter: %w", err)
		}
		e.logger.Info("verdict exporter: the page's turns read back from storage", zap.Int("spans", n))
		e.stopFlush, e.flushed = make(chan struct{}), make(chan struct{})
		go e.flushLoop(e.stopFlush, e.flushed)
	}
	if err := e.startServer(ctx, host); err != nil {
		e.stopFlushing()
		_ = e.page.close(ctx)
		e.closeFile()
		return fmt.Errorf("verdict exporter: the page: %w", err)
	}
	return nil
}

func (e *verdictExporter) closeFile() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f != nil {
		_ = e.f.Close()
		e.f = nil
	}
}

// recover reads the end of the file: it truncates a torn last line and
// remembers the verdict span IDs of the complete lines before it. It
// returns the file's size after.
func (e *verdictExporter) recover(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	from := max(size-tailRead, 0)
	tail := make([]byte, size-from)
	if _, err := f.ReadAt(tail, from); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	if end := bytes.LastIndexByte(tail, '\n'); end+1 < len(tail) {
		keep := from + int64(end+1)
		e.logger.Warn("verdict exporter: cutting off a line a crash left half written",
			zap.String("path", e.cfg.Path), zap.Int64("bytes", size-keep))
		if err := f.Truncate(keep); err != nil {
			return 0, err
		}
		tail, size = tail[:end+1], keep
	}
	if from > 0 {
		// The first line read may start mid-line.
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
	}
	u := ptrace.JSONUnmarshaler{}
	for len(tail) > 0 {
		i := bytes.IndexByte(tail, '\n')
		line := tail[:i]
		tail = tail[i+1:]
		td, err := u.UnmarshalTraces(line)
		if err != nil {
			continue
		}
		verdict.Each(td, func(_ pcommon.Resource, s ptrace.Span) { e.recent.Add(s.SpanID()) })
	}
	return size, nil
}

// Shutdown stops the page's server, then closes the file and the
// storage client.
func (e *verdictExporter) Shutdown(ctx context.Context) error {
	var errs error
	if e.server != nil {
		if err := e.server.Shutdown(ctx); err != nil {
			errs = errors.Join(errs, err)
			_ = e.server.Close()
		}
		<-e.served
		e.server = nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f != nil {
		errs = errors.Join(errs, e.f.Close())
		e.f = nil
	}
	if e.page != nil {
		e.stopFlushing()
		errs = errors.Join(errs, e.page.close(ctx))
	}
	return errs
}

// stopFlushing ends the flush loop after its last flush.
func (e *verdictExporter) stopFlushing() {
	if e.stopFlush != nil {
		close(e.stopFlush)
		<-e.flushed
		e.stopFlush = nil
	}
}

// ConsumeTraces appends the batch's verdict spans not written before as one
// line, and returns once the line is written (to the operating system: a
// killed collector loses none of it; a power cut may). With the page, the
// new verdicts and the batch's link status changes then go into the
// page's store.
func (e *verdictExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f == nil {
		return errors.New("verdict exporter: not started")
	}
	// Most batches from a processor that emits only verdicts are written as
	// they come; others are copied down to their new verdicts.
	fresh := make([]pageSpan, 0, 4) // on the stack for a batch of a few
	var dup, other int
	// For the page: the verdicts new to the file, a verdict the file holds
	// but the page does not (written in the moment before a crash), and
	// the link status changes.
	var forPage []pageSpan
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				ps := pageSpan{rs, ss, s}
				switch {
				case s.Name() != semconv.SpanVerdict:
					other++
					if e.page != nil && s.Name() == semconv.SpanLinkStatus {
						forPage = append(forPage, ps)
					}
				case e.recent.Has(s.SpanID()) || slices.ContainsFunc(fresh, func(f pageSpan) bool { return f.s.SpanID() == s.SpanID() }):
					dup++
					if e.page != nil && !e.page.holds(storeKey(keyTurn, s)) {
						forPage = append(forPage, ps)
					}
				default:
					fresh = append(fresh, ps)
					if e.page != nil {
						forPage = append(forPage, ps)
					}
				}
			}
		}
	}
	if dup > 0 {
		e.tel.ExporterVerdictsDuplicate.Add(ctx, int64(dup))
	}
	if len(fresh) > 0 {
		if err := e.write(ctx, td, fresh, dup == 0 && other == 0); err != nil {
			return err
		}
	}
	if len(forPage) > 0 {
		e.keep(ctx, forPage)
	}
	return nil
}

// pageSpan is a span of the batch with its resource and scope: a verdict
// for the file, a span for the page's store.
type pageSpan struct {
	rs ptrace.ResourceSpans
	ss ptrace.ScopeSpans
	s  ptrace.Span
}

// keep puts spans in the page's store; the flush loop stores the changes.
// The page is a view of the verdicts the file holds: storing it never
// refuses a batch (a failed transaction is logged, counted and tried again
// by the next flush).
func (e *verdictExporter) keep(ctx context.Context, spans []pageSpan) {
	items := make([]item, 0, len(spans))
	for _, ps := range spans {
		it, ok, err := itemOf(ps.rs, ps.ss, ps.s)
		if err != nil {
			e.logger.Warn("verdict exporter: a span the page cannot keep", zap.Error(err))
			continue
		}
		if ok {
			items = append(items, it)
		}
	}
	added, evicted := e.page.add(items, e.now())
	if added > 0 {
		e.tel.ExporterVerdictsPageKept.Add(ctx, int64(added))
	}
	if evicted > 0 {
		e.tel.ExporterVerdictsPageEvicted.Add(ctx, int64(evicted))
	}
}

// flushLoop stores the page's changes every flushEvery until stop closes,
// then once more.
func (e *verdictExporter) flushLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			e.flushPage()
		case <-stop:
			e.flushPage()
			return
		}
	}
}

func (e *verdictExporter) flushPage() {
	ctx := context.Background()
	if err := e.page.flush(ctx); err != nil {
		e.tel.ExporterVerdictsPageStorageErrors.Add(ctx, 1)
		e.logger.Warn("verdict exporter: storing the page's turns failed; tried again in a moment", zap.Error(err))
	}
}

// write appends the batch's fresh verdicts to the file as one line: td
// itself when they are all it holds, else a copy of them.
func (e *verdictExporter) write(ctx context.Context, td ptrace.Traces, fresh []pageSpan, whole bool) error {
	out := td
	if !whole {
		out = ptrace.NewTraces()
		for _, ps := range fresh {
			ors := out.ResourceSpans().AppendEmpty()
			ps.rs.Resource().CopyTo(ors.Resource())
			ors.SetSchemaUrl(ps.rs.SchemaUrl())
			oss := ors.ScopeSpans().AppendEmpty()
			ps.ss.Scope().CopyTo(oss.Scope())
			oss.SetSchemaUrl(ps.ss.SchemaUrl())
			ps.s.CopyTo(oss.Spans().AppendEmpty())
		}
	}
	var ok bool
	if e.buf, ok = appendJSON(e.buf[:0], out); !ok {
		line, err := (&ptrace.JSONMarshaler{}).MarshalTraces(out)
		if err != nil {
			return fmt.Errorf("verdict exporter: %w", err)
		}
		e.buf = append(e.buf[:0], line...)
	}
	e.buf = append(e.buf, '\n')
	if err := e.rotateIfFull(int64(len(e.buf))); err != nil {
		e.tel.ExporterVerdictsWriteErrors.Add(ctx, 1)
		return err
	}
	n, err := e.f.Write(e.buf)
	if err != nil {
		e.tel.ExporterVerdictsWriteErrors.Add(ctx, 1)
		// A short write leaves part of a line: cut it off, so the retry
		// writes the whole line again.
		if n > 0 {
			_ = e.f.Truncate(e.size)
			_, _ = e.f.Seek(e.size, io.SeekStart)
		}
		return fmt.Errorf("verdict exporter: writing %s: %w", e.cfg.Path, err)
	}
	e.size += int64(n)
	for _, ps := range fresh {
		e.recent.Add(ps.s.SpanID())
	}
	e.tel.ExporterVerdictsWritten.Add(ctx, int64(len(fresh)))
	return nil
}

// rotateIfFull starts a new file when adding n bytes would pass the size
// limit: PATH becomes PATH.1, PATH.1 becomes PATH.2, …, and the oldest
// beyond max_backups is removed (only files of this rotation).
func (e *verdictExporter) rotateIfFull(n int64) error {
	limit := int64(e.cfg.Rotation.MaxMegabytes) << 20
	if limit <= 0 || e.size == 0 || e.size+n <= limit {
		return nil
	}
	backup := func(i int) string { return e.cfg.Path + "." + strconv.Itoa(i) }
	// The current file stays open until the new one is: a rotation that
	// fails (a backup name taken by something else, a full disk) refuses
	// this batch, and the next one tries again, appending meanwhile.
	if e.cfg.Rotation.MaxBackups == 0 {
		if err := os.Remove(e.cfg.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("verdict exporter: rotating %s: %w", e.cfg.Path, err)
		}
	} else {
		_ = os.Remove(backup(e.cfg.Rotation.MaxBackups))
		for i := e.cfg.Rotation.MaxBackups - 1; i >= 1; i-- {
			_ = os.Rename(backup(i), backup(i+1))
		}
		if err := os.Rename(e.cfg.Path, backup(1)); err != nil {
			return fmt.Errorf("verdict exporter: rotating %s: %w", e.cfg.Path, err)
		}
	}
	f, err := os.OpenFile(e.cfg.Path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		// Put the file back where it was, so the next rotation does not
		// take it for an old backup; its handle is still open.
		if e.cfg.Rotation.MaxBackups > 0 {
			_ = os.Rename(backup(1), e.cfg.Path)
		}
		return fmt.Errorf("verdict exporter: rotating %s: %w", e.cfg.Path, err)
	}
	old := e.f
	e.f, e.size = f, 0
	if err := old.Close(); err != nil {
		e.logger.Warn("verdict exporter: closing the rotated file", zap.Error(err))
	}
	return nil
}
