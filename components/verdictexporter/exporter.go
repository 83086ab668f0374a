package verdictexporter

import (
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
	"github.com/percause/percause/internal/leaf/idring"
	"github.com/percause/percause/internal/leaf/vfs"
)

// verdictExporter appends verdict spans and link status changes to the
// verdict file and, with http, serves the verdict page from the recent
// ones, which it keeps in memory and reads back from the file at start.
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
	// rebuilt is what the start read back from the file.
	rebuilt rebuildStats

	// fs is where the file is kept: the operating system's, or the fault
	// simulation's.
	fs vfs.FS

	mu     sync.Mutex
	f      vfs.File
	size   int64
	recent *idring.Ring[pcommon.SpanID]
	buf    []byte
	// watchedUntil is watchFor after the page was last asked for: until
	// then each line written goes into the page's store as well. After it
	// nothing does, and pageBehind says the store misses lines the file
	// holds: the next page asked for reads them back first (watch).
	watchedUntil time.Time
	pageBehind   bool
	// torn: a write that failed left part of a line after size, and
	// cutting it back failed too; the next write cuts it first.
	torn bool
}

// watchFor is how long after a page request the page's store keeps each
// turn as it is written: a page left open reloads every page.refresh (30 s
// by default) and stays watched. A page nobody looks at costs no verdict
// anything; the first look after reads the store back from the file, as
// the start does (docs/decisions/0247-the-page-keeps-turns-while-watched.md).
const watchFor = 10 * time.Minute

var _ exporter.Traces = (*verdictExporter)(nil)

func newExporter(set exporter.Settings, cfg *Config, fs vfs.FS) (*verdictExporter, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &verdictExporter{cfg: cfg, id: set.ID, fs: fs, logger: set.Logger, tel: tel, telset: set.TelemetrySettings,
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
// cut off (it was never acknowledged, so its spans are sent again). Then
// the file and its rotated copies are read back, newest lines first, for
// the span IDs written last and, with the page, the turns and link changes
// its store holds: the store is the file's, and has no storage of its own.
func (e *verdictExporter) Start(ctx context.Context, host component.Host) error {
	if err := e.fs.MkdirAll(filepath.Dir(e.cfg.Path), 0o755); err != nil {
		return fmt.Errorf("verdict exporter: %w", err)
	}
	f, err := e.fs.OpenFile(e.cfg.Path, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil && e.cfg.FSync {
		// The file is in its folder on the disk before a line in it is
		// said to be there: made now, or by a start whose sync failed.
		if err = e.fs.SyncDir(filepath.Dir(e.cfg.Path)); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("verdict exporter: %w", err)
	}
	began := time.Now()
	size, cut, err := cutTornTail(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("verdict exporter: reading %s: %w", e.cfg.Path, err)
	}
	if cut > 0 {
		e.logger.Warn("verdict exporter: cutting off a line a crash left half written",
			zap.String("path", e.cfg.Path), zap.Int64("bytes", cut))
	}
	size, cut, err = cutUnreadableTail(f, size)
	if err != nil {
		f.Close()
		return fmt.Errorf("verdict exporter: reading %s: %w", e.cfg.Path, err)
	}
	if cut > 0 {
		e.logger.Warn("verdict exporter: cutting off the last lines, which do not read: what a power loss left past the last flush",
			zap.String("path", e.cfg.Path), zap.Int64("bytes", cut))
	}
	if e.cfg.FSync {
		// A killed process can leave lines written and not flushed: read
		// back now, they stand for verdicts written, so they go to the
		// disk before a verdict is let go on their word.
		if err := f.Datasync(); err != nil {
			f.Close()
			return fmt.Errorf("verdict exporter: %w", err)
		}
	}
	st, err := e.rebuild(f, size)
	if err != nil {
		f.Close()
		return fmt.Errorf("verdict exporter: %w", err)
	}
	e.rebuilt = st
	if st.Broken > 0 {
		e.tel.ExporterVerdictsFileBrokenLines.Add(ctx, int64(st.Broken))
		e.logger.Warn("verdict exporter: lines of the verdict file that could not be read were skipped",
			zap.String("path", e.cfg.Path), zap.Int("lines", st.Broken))
	}
	e.logger.Info("verdict exporter: read back the verdict file's end",
		zap.Int("files", st.Files), zap.Int64("bytes", st.Bytes), zap.Int("lines_decoded", st.Parsed),
		zap.Int("lines_passed_over", st.Skipped), zap.Int("span_ids", st.IDs),
		zap.Int("page_turns", st.Turns), zap.Int("page_link_changes", st.Links), zap.Duration("took", time.Since(began)))
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("verdict exporter: %w", err)
	}
	e.f, e.size = f, size
	if e.page == nil {
		return nil
	}
	if err := e.startServer(ctx, host); err != nil {
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

// Shutdown stops the page's server, then closes the file.
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
	e.tel.Shutdown()
	return errs
}

// ConsumeTraces appends the batch's verdict and link status spans not
// written before as one line, and returns once the line is written (to the
// operating system: a killed collector loses none of it; a power cut may).
// With the page, while it is watched, they then go into the page's store,
// read from the spans at hand.
func (e *verdictExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f == nil {
		return errors.New("verdict exporter: not started")
	}
	// Most batches from a processor that emits only verdicts (and passes
	// link status spans on their own) are written as they come; others are
	// copied down to their new spans.
	fresh := make([]pageSpan, 0, 4) // on the stack for a batch of a few
	var dup, other, links int
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				switch {
				case s.Name() != semconv.SpanVerdict && s.Name() != semconv.SpanLinkStatus:
					other++
				case e.recent.Has(s.SpanID()) || slices.ContainsFunc(fresh, func(f pageSpan) bool { return f.s.SpanID() == s.SpanID() }):
					dup++
				default:
					fresh = append(fresh, pageSpan{rs, ss, s})
					if s.Name() == semconv.SpanLinkStatus {
						links++
					}
				}
			}
		}
	}
	if dup > 0 {
		e.tel.ExporterVerdictsDuplicate.Add(int64(dup))
	}
	if len(fresh) == 0 {
		return nil
	}
	if err := e.write(ctx, td, fresh, links, dup == 0 && other == 0); err != nil {
		return err
	}
	if e.page != nil {
		if e.pageBehind || !e.now().Before(e.watchedUntil) {
			e.pageBehind = true // the file has it; a look reads it back
		} else {
			e.keep(ctx, fresh)
		}
	}
	return nil
}

// pageSpan is a span of the batch with its resource and scope: a verdict
// or link status change for the file and the page's store.
type pageSpan struct {
	rs ptrace.ResourceSpans
	ss ptrace.ScopeSpans
	s  ptrace.Span
}

// keep puts the spans just written in the page's store. A span the file
// held already is not offered again: the start read the store back from
// the file, so the store has it, or let it go past its bounds.
func (e *verdictExporter) keep(ctx context.Context, spans []pageSpan) {
	items := make([]item, 0, len(spans))
	for _, ps := range spans {
		if it, ok := itemOf(ps.rs, ps.s); ok {
			items = append(items, it)
		}
	}
	added, evicted := e.page.add(items, e.now())
	if added > 0 {
		e.tel.ExporterVerdictsPageKept.Add(int64(added))
	}
	if evicted > 0 {
		e.tel.ExporterVerdictsPageEvicted.Add(int64(evicted))
	}
}

// write appends the batch's fresh spans (links of them link status
// changes) to the file as one line: td itself when they are all it holds,
// else a copy of them.
func (e *verdictExporter) write(ctx context.Context, td ptrace.Traces, fresh []pageSpan, links int, whole bool) error {
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
	if e.torn {
		// A line after a torn one would be joined to it, unreadable.
		if err := e.cutBack(); err != nil {
			e.tel.ExporterVerdictsWriteErrors.Add(ctx, 1)
			return fmt.Errorf("verdict exporter: cutting a torn line off %s: %w", e.cfg.Path, err)
		}
	}
	n, err := e.f.Write(e.buf)
	if err == nil && e.cfg.FSync {
		// On the disk before the pipeline acknowledges: the stored turn
		// it decides is let go in the commit that follows.
		err = e.f.Datasync()
	}
	if err != nil {
		e.tel.ExporterVerdictsWriteErrors.Add(ctx, 1)
		// A short write leaves part of a line: cut it off, so the retry
		// writes the whole line again.
		if n > 0 {
			e.torn = e.cutBack() != nil
		}
		return fmt.Errorf("verdict exporter: writing %s: %w", e.cfg.Path, err)
	}
	e.size += int64(n)
	for _, ps := range fresh {
		e.recent.Add(ps.s.SpanID())
	}
	if v := len(fresh) - links; v > 0 {
		e.tel.ExporterVerdictsWritten.Add(int64(v))
	}
	if links > 0 {
		e.tel.ExporterVerdictsLinkChangesWritten.Add(int64(links))
	}
	return nil
}

// cutBack cuts the file back to the end of its last whole line.
func (e *verdictExporter) cutBack() error {
	if err := e.f.Truncate(e.size); err != nil {
		e.torn = true
		return err
	}
	if _, err := e.f.Seek(e.size, io.SeekStart); err != nil {
		e.torn = true
		return err
	}
	e.torn = false
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
		if err := e.fs.Remove(e.cfg.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("verdict exporter: rotating %s: %w", e.cfg.Path, err)
		}
	} else {
		_ = e.fs.Remove(backup(e.cfg.Rotation.MaxBackups))
		for i := e.cfg.Rotation.MaxBackups - 1; i >= 1; i-- {
			_ = e.fs.Rename(backup(i), backup(i+1))
		}
		if err := e.fs.Rename(e.cfg.Path, backup(1)); err != nil {
			return fmt.Errorf("verdict exporter: rotating %s: %w", e.cfg.Path, err)
		}
	}
	f, err := e.fs.OpenFile(e.cfg.Path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil && e.cfg.FSync {
		err = e.fs.SyncDir(filepath.Dir(e.cfg.Path))
	}
	if err != nil {
		// Put the file back where it was, so the next rotation does not
		// take it for an old backup; its handle is still open.
		if e.cfg.Rotation.MaxBackups > 0 {
			_ = e.fs.Rename(backup(1), e.cfg.Path)
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
