package verdictexporter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/dayreport"
)

// The page's store: the turns (read from their verdict spans) and the link
// status changes (from pippa.link.status spans) the page shows, bounded by
// keep.*, in memory and, with storage, in the storage extension: one key
// per span, its value the span itself as OTLP protobuf (with its resource
// and scope) behind a version byte. The page shows what the span says; a
// restart reads the spans back.
const (
	keyTurn     = 't'
	keyLink     = 'l'
	valueFormat = 1
)

// storeKey is the span's key: its kind, trace ID and span ID.
func storeKey(kind byte, s ptrace.Span) string {
	tid, sid := s.TraceID(), s.SpanID()
	k := make([]byte, 0, 1+len(tid)+len(sid))
	k = append(k, kind)
	k = append(k, tid[:]...)
	k = append(k, sid[:]...)
	return string(k)
}

type keptTurn struct {
	key  string
	turn dayreport.Turn
}

type keptLink struct {
	key  string
	link dayreport.LinkChange
}

// pageStore holds what the page shows. Writers (ConsumeTraces, Start) are
// serialised by the exporter; the page reads a snapshot.
type pageStore struct {
	keep KeepConfig

	mu    sync.RWMutex
	turns []*keptTurn // by time, then key
	links []*keptLink
	has   map[string]bool

	// client is the storage extension's client (nil: memory only); unsaved
	// holds the changes not yet stored (a nil value deletes), which the
	// flush loop stores every flushEvery.
	client  storage.Client
	unsaved map[string][]byte
}

// flushEvery is how often the store's changes go to storage, in one
// transaction: the page is a view of the verdict file, so its store stays
// off the pipeline's path; a crash loses at most this much of it.
const flushEvery = time.Second

func newPageStore(keep KeepConfig) *pageStore {
	return &pageStore{keep: keep, has: map[string]bool{}, unsaved: map[string][]byte{}}
}

// encodeSpan is the stored value of one span under its resource and scope.
func encodeSpan(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, s ptrace.Span) ([]byte, error) {
	td := ptrace.NewTraces()
	ors := td.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(ors.Resource())
	oss := ors.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(oss.Scope())
	s.CopyTo(oss.Spans().AppendEmpty())
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return nil, err
	}
	return append([]byte{valueFormat}, b...), nil
}

// decodeSpan reads a stored value back.
func decodeSpan(v []byte) (pcommon.Resource, ptrace.Span, error) {
	if len(v) == 0 || v[0] != valueFormat {
		return pcommon.Resource{}, ptrace.Span{}, errors.New("unknown format")
	}
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(v[1:])
	if err != nil {
		return pcommon.Resource{}, ptrace.Span{}, err
	}
	if td.SpanCount() != 1 {
		return pcommon.Resource{}, ptrace.Span{}, fmt.Errorf("%d spans, want 1", td.SpanCount())
	}
	rs := td.ResourceSpans().At(0)
	return rs.Resource(), rs.ScopeSpans().At(0).Spans().At(0), nil
}

// item is one span offered to the store.
type item struct {
	key   string
	value []byte
	turn  *dayreport.Turn
	link  *dayreport.LinkChange
}

// itemOf reads a verdict or link status span for the store (ok false for
// any other span).
func itemOf(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, s ptrace.Span) (item, bool, error) {
	var it item
	switch s.Name() {
	case semconv.SpanVerdict:
		t := dayreport.TurnFromVerdict(rs.Resource(), s)
		it = item{key: storeKey(keyTurn, s), turn: &t}
	case semconv.SpanLinkStatus:
		l := dayreport.LinkFromSpan(rs.Resource(), s)
		it = item{key: storeKey(keyLink, s), link: &l}
	default:
		return item{}, false, nil
	}
	v, err := encodeSpan(rs, ss, s)
	it.value = v
	return it, true, err
}

// holds reports whether the store has key.
func (p *pageStore) holds(key string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.has[key]
}

// add puts items in (one already held is skipped) and lets go of what is
// past the bounds at now; the changes wait for the next flush. It reports
// how many it added and let go.
func (p *pageStore) add(items []item, now time.Time) (added, evicted int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range items {
		if p.has[it.key] {
			continue
		}
		p.has[it.key] = true
		added++
		if p.client != nil && it.value != nil {
			p.unsaved[it.key] = it.value
		}
		if it.turn != nil {
			p.turns = insert(p.turns, &keptTurn{it.key, *it.turn}, turnBefore)
		} else {
			p.links = insert(p.links, &keptLink{it.key, *it.link}, linkBefore)
		}
	}
	evicted = p.evict(now)
	return added, evicted
}

// insert puts x into the sorted s: at the end, as most come, or where it
// belongs.
func insert[T any](s []*T, x *T, before func(a, b *T) bool) []*T {
	if len(s) == 0 || !before(x, s[len(s)-1]) {
		return append(s, x)
	}
	i := sort.Search(len(s), func(i int) bool { return !before(s[i], x) })
	s = append(s, nil)
	copy(s[i+1:], s[i:])
	s[i] = x
	return s
}

// pending returns the changes not yet stored, as storage operations.
func (p *pageStore) pending() []*storage.Operation {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.client == nil || len(p.unsaved) == 0 {
		return nil
	}
	ops := make([]*storage.Operation, 0, len(p.unsaved))
	keys := make([]string, 0, len(p.unsaved))
	for k := range p.unsaved {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := p.unsaved[k]; v != nil {
			ops = append(ops, storage.SetOperation(k, v))
		} else {
			ops = append(ops, storage.DeleteOperation(k))
		}
	}
	return ops
}

// flush stores the pending changes in one transaction.
func (p *pageStore) flush(ctx context.Context) error {
	ops := p.pending()
	if len(ops) == 0 {
		return nil
	}
	if err := p.client.Batch(ctx, ops...); err != nil {
		return err
	}
	p.saved(ops)
	return nil
}

// saved marks the operations of the last add as stored.
func (p *pageStore) saved(ops []*storage.Operation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, op := range ops {
		if v, ok := p.unsaved[op.Key]; ok && (v == nil) == (op.Type == storage.Delete) {
			delete(p.unsaved, op.Key)
		}
	}
}

func turnBefore(a, b *keptTurn) bool {
	if a.turn.Start != b.turn.Start {
		return a.turn.Start < b.turn.Start
	}
	return a.key < b.key
}

func linkBefore(a, b *keptLink) bool {
	if a.link.Time != b.link.Time {
		return a.link.Time < b.link.Time
	}
	return a.key < b.key
}

// evict lets go of the oldest past keep.turns and keep.link_changes and
// of everything older than keep.age; p.mu is held.
func (p *pageStore) evict(now time.Time) int {
	oldest := pcommon.NewTimestampFromTime(now.Add(-p.keep.Age))
	n := 0
	drop := func(key string) {
		delete(p.has, key)
		if p.client != nil {
			p.unsaved[key] = nil
		}
		n++
	}
	cut := 0
	for cut < len(p.turns) && (len(p.turns)-cut > p.keep.Turns || p.turns[cut].turn.Start < oldest) {
		drop(p.turns[cut].key)
		cut++
	}
	p.turns = dropFront(p.turns, cut)
	cut = 0
	for cut < len(p.links) && (len(p.links)-cut > p.keep.LinkChanges || p.links[cut].link.Time < oldest) {
		drop(p.links[cut].key)
		cut++
	}
	p.links = dropFront(p.links, cut)
	return n
}

// dropFront removes s's first n, copying the rest down only once the
// slice's front holds as much room as it has items (amortised O(1)).
func dropFront[T any](s []*T, n int) []*T {
	if n == 0 {
		return s
	}
	clear(s[:n])
	s = s[n:]
	if cap(s) > 2*len(s)+64 {
		s = append([]*T(nil), s...)
	}
	return s
}

// snapshot copies what the page shows of [from, now] (from zero: all kept
// within keep.age) and the installations kept.
func (p *pageStore) snapshot(from, now time.Time) (turns []dayreport.Turn, links []dayreport.LinkChange, installations []string, kept, keptLinks int) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	oldest := now.Add(-p.keep.Age)
	if from.IsZero() || from.Before(oldest) {
		from = oldest
	}
	seen := map[string]bool{}
	for _, k := range p.turns {
		if k.turn.Installation != "" && !seen[k.turn.Installation] {
			seen[k.turn.Installation] = true
			installations = append(installations, k.turn.Installation)
		}
	}
	// Both are by time: what is in range is their tail, copied once.
	lo := pcommon.NewTimestampFromTime(from)
	ti := sort.Search(len(p.turns), func(i int) bool { return p.turns[i].turn.Start >= lo })
	turns = make([]dayreport.Turn, 0, len(p.turns)-ti)
	for _, k := range p.turns[ti:] {
		turns = append(turns, k.turn)
	}
	li := sort.Search(len(p.links), func(i int) bool { return p.links[i].link.Time >= lo })
	links = make([]dayreport.LinkChange, 0, len(p.links)-li)
	for _, k := range p.links[li:] {
		links = append(links, k.link)
	}
	return turns, links, installations, len(p.turns), len(p.links)
}

// turn is the kept turn with this trace ID and the link status changes of
// its trace (ok false when no such turn is kept).
func (p *pageStore) turn(trace string) (t dayreport.Turn, links []dayreport.LinkChange, ok bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for i := len(p.turns) - 1; i >= 0 && !ok; i-- {
		if p.turns[i].turn.Trace == trace {
			t, ok = p.turns[i].turn, true
		}
	}
	if !ok {
		return t, nil, false
	}
	for _, k := range p.links {
		if k.link.Trace == trace {
			links = append(links, k.link)
		}
	}
	return t, links, true
}

// open gets the exporter's client from the storage extension id names and
// reads back what an earlier run stored; a value it cannot read is
// deleted. It returns how many spans it read back.
func (p *pageStore) open(ctx context.Context, host component.Host, id component.ID, self component.ID, now time.Time) (int, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return 0, fmt.Errorf("storage extension %s is not configured (list it under service.extensions)", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return 0, fmt.Errorf("extension %s is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindExporter, self, "page")
	if err != nil {
		return 0, fmt.Errorf("storage %s: %w", id, err)
	}
	walker, ok := client.(storage.Walker)
	if !ok {
		_ = client.Close(ctx)
		return 0, fmt.Errorf("storage %s cannot list what it holds, so the page cannot be restored from it", id)
	}
	var items []item
	err = walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		res, s, err := decodeSpan(value)
		if err != nil || len(key) == 0 || (key[0] != keyTurn && key[0] != keyLink) {
			return []*storage.Operation{storage.DeleteOperation(key)}, nil
		}
		it := item{key: key}
		if key[0] == keyTurn {
			t := dayreport.TurnFromVerdict(res, s)
			it.turn = &t
		} else {
			l := dayreport.LinkFromSpan(res, s)
			it.link = &l
		}
		items = append(items, it)
		return nil, nil
	})
	if err != nil {
		_ = client.Close(ctx)
		return 0, fmt.Errorf("reading storage %s: %w", id, err)
	}
	p.client = client
	// What was read back is stored already (an item without a value is
	// not saved again); only what is now past the bounds is news.
	n, _ := p.add(items, now)
	if err := p.flush(ctx); err != nil {
		return n, fmt.Errorf("storage %s: %w", id, err)
	}
	return n, nil
}

// close closes the storage client.
func (p *pageStore) close(ctx context.Context) error {
	if p.client == nil {
		return nil
	}
	err := p.client.Close(ctx)
	p.client = nil
	return err
}
