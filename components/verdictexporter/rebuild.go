package verdictexporter

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/vfs"
	"github.com/percause/percause/internal/page/dayreport"
	"github.com/percause/percause/verdict"
)

// What the start reads of the verdict file.
const (
	// maxLine bounds one line read back (one batch); a longer one is
	// skipped and counted as broken.
	maxLine = 256 << 20
	// sampleEvery: once only link status changes are still wanted, lines
	// without one are passed over unread, but one is read after this many
	// bytes passed over, for the time it was written (keep.age).
	sampleEvery = 64 << 10
	// writeLag is how much later than its decision a verdict can be
	// written: the processor sends a refused verdict again until its
	// max_age (2 minutes by default). Reading back stops only at lines
	// decided this much before what is still wanted.
	writeLag = 5 * time.Minute
)

// The span names a line must hold to be worth reading for them: the
// exporter writes them as they are, unescaped.
var (
	verdictName = []byte(`"` + semconv.SpanVerdict + `"`)
	linkName    = []byte(`"` + semconv.SpanLinkStatus + `"`)
)

// cutTornTail cuts off a last line without its newline, which a crash left
// half written (it was never acknowledged, so it is sent again), reading
// back from the end a chunk at a time. It returns the size after and how
// much it cut.
func cutTornTail(f vfs.File) (size, cut int64, err error) {
	size, err = f.Size()
	if err != nil {
		return 0, 0, err
	}
	keep := size
	buf := make([]byte, min(int64(backChunk), size))
	for keep > 0 {
		c := min(int64(len(buf)), keep)
		if _, err := f.ReadAt(buf[:c], keep-c); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		if i := bytes.LastIndexByte(buf[:c], '\n'); i >= 0 {
			keep = keep - c + int64(i) + 1
			break
		}
		keep -= c
	}
	if keep == size {
		return size, 0, nil
	}
	if err := f.Truncate(keep); err != nil {
		return 0, 0, err
	}
	return keep, size - keep, nil
}

// cutUnreadableTail cuts off, from the end of the first size bytes of f
// (whole lines), the lines that do not read as a batch: what a power loss
// can leave past the last flush, where the file's length reached the
// disk and its data did not (zeros, garbage). It stops at the last line
// that reads, so damage further in is only skipped, as before. It returns
// the size after and how much it cut.
func cutUnreadableTail(f vfs.File, size int64) (int64, int64, error) {
	b := newBackLines(f, size, backChunk, maxLine)
	keep := size
	var un ptrace.JSONUnmarshaler
	for {
		line, err := b.prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return 0, 0, err
		}
		if err == nil {
			// The exporter writes no empty line and no empty batch.
			if td, jerr := un.UnmarshalTraces(line); jerr == nil && td.ResourceSpans().Len() > 0 {
				break
			}
		}
		keep = b.off + int64(b.n)
	}
	if keep == size {
		return size, 0, nil
	}
	if err := f.Truncate(keep); err != nil {
		return 0, 0, err
	}
	return keep, size - keep, nil
}

// rebuildStats is what the start's pass over the verdict file did.
type rebuildStats struct {
	Files   int   // files read: PATH, PATH.1, …
	Bytes   int64 // bytes read
	Parsed  int   // lines decoded
	Skipped int   // lines passed over: nothing in them was still wanted
	Broken  int   // lines that could not be read (skipped)
	// Turns and Links are what the page's store holds after.
	Turns, Links int
	IDs          int // span IDs remembered against writing one twice
}

// rebuilder gathers, reading the verdict file's lines newest first, the
// span IDs written last and, for the page, the newest keep.turns turns and
// keep.link_changes link status changes within keep.age.
type rebuilder struct {
	page         bool
	recent       int
	cutoff       pcommon.Timestamp // now - keep.age
	lag          pcommon.Timestamp
	ids          []pcommon.SpanID // newest first
	turns        newest[keptTurn]
	links        newest[keptLink]
	has          map[string]bool
	bytesSkipped int // bytes passed over since the last line decoded
	bytes        int64
	stats        rebuildStats
	un           ptrace.JSONUnmarshaler
	aged         bool // a line decided before cutoff was read: nothing older is wanted
	turnsIn      bool // the turns wanted are all read
	linksIn      bool
}

func newRebuilder(page bool, keep KeepConfig, recent int, now time.Time) *rebuilder {
	r := &rebuilder{page: page, recent: recent, has: map[string]bool{}, lag: pcommon.Timestamp(writeLag)}
	r.turns = newest[keptTurn]{n: keep.Turns, before: turnBefore}
	r.links = newest[keptLink]{n: keep.LinkChanges, before: linkBefore}
	if page {
		r.cutoff = pcommon.NewTimestampFromTime(now.Add(-keep.Age))
	}
	return r
}

// idsIn reports whether the span IDs wanted are read: the last `recent`
// written, or those of the last tailRead bytes (a verdict is sent again
// after a crash only if it was written in the moment before it).
func (r *rebuilder) idsIn() bool { return len(r.ids) >= r.recent || r.bytes >= tailRead }

func (r *rebuilder) wantsTurns() bool { return r.page && !r.aged && !r.turnsIn }
func (r *rebuilder) wantsLinks() bool { return r.page && !r.aged && !r.linksIn }

// done reports whether nothing older is wanted.
func (r *rebuilder) done() bool { return r.idsIn() && !r.wantsTurns() && !r.wantsLinks() }

// take reads one line of the file (size: with its newline), newest
// first, if it may hold something still wanted.
func (r *rebuilder) take(line []byte, size int) {
	r.bytes += int64(size)
	if !r.worthReading(line) {
		r.stats.Skipped++
		r.bytesSkipped += size
		return
	}
	r.bytesSkipped = 0
	r.stats.Parsed++
	td, err := r.un.UnmarshalTraces(line)
	if err != nil {
		r.stats.Broken++
		return
	}
	var decided pcommon.Timestamp
	for res, s := range verdict.Spans(td) {
		switch s.Name() {
		case semconv.SpanVerdict:
			decided = max(decided, s.EndTimestamp())
			r.remember(s.SpanID())
			if r.page {
				r.offerTurn(res, s)
			}
		case semconv.SpanLinkStatus:
			r.remember(s.SpanID())
			if r.page {
				r.offerLink(res, s)
			}
		}
	}
	if decided == 0 || !r.page {
		return
	}
	// Every line before this one was written before it, so decided before
	// it was written: its turns started, and its link changes happened,
	// before decided + lag.
	before := decided + r.lag
	if before < r.cutoff {
		r.aged = true
	}
	if r.turns.full() && before < r.turns.oldest().turn.Start {
		r.turnsIn = true
	}
	if r.links.full() && before < r.links.oldest().link.Time {
		r.linksIn = true
	}
}

// worthReading reports whether a line may hold something still wanted; a
// line read after sampleEvery bytes passed over tells when it was written.
func (r *rebuilder) worthReading(line []byte) bool {
	return !r.idsIn() || r.bytesSkipped >= sampleEvery ||
		(r.wantsTurns() && bytes.Contains(line, verdictName)) ||
		(r.wantsLinks() && bytes.Contains(line, linkName))
}

func (r *rebuilder) remember(id pcommon.SpanID) {
	if len(r.ids) < r.recent {
		r.ids = append(r.ids, id)
	}
}

func (r *rebuilder) offerTurn(res pcommon.Resource, s ptrace.Span) {
	key := storeKey(keyTurn, s)
	if r.has[key] {
		return
	}
	t := dayreport.TurnFromVerdict(res, s)
	if t.Start < r.cutoff {
		return
	}
	keepNewest(r.has, &r.turns, &keptTurn{key, t})
}

func (r *rebuilder) offerLink(res pcommon.Resource, s ptrace.Span) {
	key := storeKey(keyLink, s)
	if r.has[key] {
		return
	}
	l := dayreport.LinkFromSpan(res, s)
	if l.Time < r.cutoff {
		return
	}
	keepNewest(r.has, &r.links, &keptLink{key, l})
}

// keyed is a kept item that knows its store key.
type keyed[T any] interface {
	*T
	storeKey() string
}

// keepNewest offers k to n and keeps has in step with what n holds: k's
// key once n keeps it, and no longer the key of the item it let go.
func keepNewest[T any, P keyed[T]](has map[string]bool, n *newest[T], k P) {
	out := P(n.offer(k))
	if out == k {
		return
	}
	has[k.storeKey()] = true
	if out != nil {
		delete(has, out.storeKey())
	}
}

// readFile reads one file's lines, newest first, until nothing older is
// wanted (done true).
func (r *rebuilder) readFile(f io.ReaderAt, size int64) (done bool, err error) {
	r.stats.Files++
	b := newBackLines(f, size, backChunk, maxLine)
	defer func() { r.stats.Bytes += b.read }()
	for !r.done() {
		line, err := b.prev()
		switch {
		case errors.Is(err, io.EOF):
			return false, nil
		case errors.Is(err, errLineTooLong):
			r.stats.Broken++
			continue
		case err != nil:
			return false, err
		}
		r.take(line, len(line)+1)
	}
	return true, nil
}

// items are the turns and link changes gathered, oldest first, and the
// span IDs oldest first.
func (r *rebuilder) items() ([]item, []pcommon.SpanID) {
	items := make([]item, 0, len(r.turns.items)+len(r.links.items))
	for _, k := range r.turns.items {
		items = append(items, item{turn: k})
	}
	for _, k := range r.links.items {
		items = append(items, item{link: k})
	}
	sort.SliceStable(items, func(i, j int) bool { return itemTime(items[i]) < itemTime(items[j]) })
	ids := make([]pcommon.SpanID, len(r.ids))
	for i, id := range r.ids {
		ids[len(ids)-1-i] = id
	}
	return items, ids
}

func itemTime(it item) pcommon.Timestamp {
	if it.turn != nil {
		return it.turn.turn.Start
	}
	return it.link.link.Time
}

// rebuild reads the verdict file f (of size bytes, its torn tail cut off)
// and then its rotated copies, PATH.1 first, newest lines first, until it
// has the span IDs written last and, with the page, what the page's store
// holds; it puts them in the ring and the store. A rotated copy it cannot
// read ends the pass there: the page is a view, and it is logged.
func (e *verdictExporter) rebuild(f vfs.File, size int64) (rebuildStats, error) {
	now := e.now()
	r, err := e.readBack(f, size, newRebuilder(e.page != nil, e.cfg.Keep, e.cfg.Recent, now))
	if err != nil {
		return r.stats, err
	}
	items, ids := r.items()
	for _, id := range ids {
		e.recent.Add(id)
	}
	r.stats.IDs = len(ids)
	if e.page != nil {
		e.page.add(items, now)
		r.stats.Turns, r.stats.Links = e.page.counts()
	}
	return r.stats, nil
}

// readBack feeds r the verdict file f (of size bytes) and then its rotated
// copies, PATH.1 first, newest lines first, until r wants nothing older.
func (e *verdictExporter) readBack(f vfs.File, size int64, r *rebuilder) (*rebuilder, error) {
	done, err := r.readFile(f, size)
	if err != nil {
		return r, fmt.Errorf("reading %s: %w", e.cfg.Path, err)
	}
	for i := 1; !done && i <= e.cfg.Rotation.MaxBackups; i++ {
		p := e.cfg.Path + "." + strconv.Itoa(i)
		done, err = e.readBackup(r, p)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			e.logger.Warn("verdict exporter: a rotated verdict file could not be read; the page goes without what it and older ones hold",
				zap.String("path", p), zap.Error(err))
			break
		}
	}
	return r, nil
}

// watch is called for each page asked for: the page's store keeps each
// turn written for watchFor from now. If it missed lines written while
// nobody watched, it is read back from the file first, as the start reads
// it (writers wait meanwhile: what they write after is kept as it comes).
// It returns the store.
func (e *verdictExporter) watch() *pageStore {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.watchedUntil = now.Add(watchFor)
	if !e.pageBehind || e.f == nil {
		return e.page
	}
	began := time.Now()
	r, err := e.readBack(e.f, e.size, newRebuilder(true, e.cfg.Keep, 0, now))
	if err != nil {
		// The store keeps what it had; the next look tries again.
		e.logger.Warn("verdict exporter: the page could not read back what was written while nobody looked; it shows what it kept before",
			zap.String("path", e.cfg.Path), zap.Error(err))
		return e.page
	}
	items, _ := r.items()
	added, evicted := e.page.replace(items, now)
	e.pageBehind = false
	if added > 0 {
		e.tel.ExporterVerdictsPageKept.Add(int64(added))
	}
	if evicted > 0 {
		e.tel.ExporterVerdictsPageEvicted.Add(int64(evicted))
	}
	// A line that does not read was counted by the start, which read it
	// first (the exporter writes whole lines since).
	e.logger.Debug("verdict exporter: the page read back what was written while nobody looked",
		zap.Int64("bytes", r.stats.Bytes), zap.Int("lines_decoded", r.stats.Parsed), zap.Int("lines_broken", r.stats.Broken),
		zap.Int("added", added), zap.Int("let_go", evicted), zap.Duration("took", time.Since(began)))
	return e.page
}

func (e *verdictExporter) readBackup(r *rebuilder, path string) (bool, error) {
	f, err := e.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return false, err
	}
	return r.readFile(f, size)
}

// newest keeps the n newest of what it is offered (by before), the
// oldest of them on top.
type newest[T any] struct {
	n      int
	before func(a, b *T) bool
	items  []*T
}

func (h *newest[T]) Len() int           { return len(h.items) }
func (h *newest[T]) Less(i, j int) bool { return h.before(h.items[i], h.items[j]) }
func (h *newest[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *newest[T]) Push(x any)         { h.items = append(h.items, x.(*T)) }
func (h *newest[T]) Pop() any {
	x := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = nil
	h.items = h.items[:len(h.items)-1]
	return x
}

func (h *newest[T]) full() bool { return len(h.items) >= h.n }
func (h *newest[T]) oldest() *T { return h.items[0] }

// offer keeps x if it is among the n newest offered; it returns what it
// let go: nil, the oldest kept before, or x itself.
func (h *newest[T]) offer(x *T) *T {
	if len(h.items) < h.n {
		heap.Push(h, x)
		return nil
	}
	if !h.before(h.items[0], x) {
		return x
	}
	out := h.items[0]
	h.items[0] = x
	heap.Fix(h, 0)
	return out
}
