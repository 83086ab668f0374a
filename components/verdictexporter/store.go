package verdictexporter

import (
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
	"github.com/percause/percause/internal/page/verdictpage"
)

// The page's store: the turns (read from their verdict spans) and the link
// status changes (from pippa.link.status spans) the page shows, bounded by
// keep.*, in memory. It is derived state: the verdict file holds every span
// it was read from, and the start reads it back from there (rebuild.go).
// Each is kept under its kind, trace ID and span ID.
const (
	keyTurn = 't'
	keyLink = 'l'
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
	turn dayreport.JudgedTurn
}

type keptLink struct {
	key  string
	link dayreport.LinkChange
}

func (k *keptTurn) storeKey() string { return k.key }
func (k *keptLink) storeKey() string { return k.key }

// pageStore holds what the page shows. Writers (ConsumeTraces, Start) are
// serialised by the exporter; the page reads a snapshot.
type pageStore struct {
	keep KeepConfig

	mu    sync.RWMutex
	turns []*keptTurn // by time, then key
	links []*keptLink
	has   map[string]bool
}

func newPageStore(keep KeepConfig) *pageStore {
	return &pageStore{keep: keep, has: map[string]bool{}}
}

// item is one span offered to the store, read as it will be kept (the
// store keeps the very value: reading it into one and copying it into
// another was two allocations a verdict).
type item struct {
	turn *keptTurn
	link *keptLink
}

func (it item) key() string {
	if it.turn != nil {
		return it.turn.key
	}
	return it.link.key
}

// itemOf reads a verdict or link status span for the store (ok false for
// any other span).
func itemOf(rs ptrace.ResourceSpans, s ptrace.Span) (item, bool) {
	switch s.Name() {
	case semconv.SpanVerdict:
		return item{turn: &keptTurn{storeKey(keyTurn, s), dayreport.TurnFromVerdict(rs.Resource(), s)}}, true
	case semconv.SpanLinkStatus:
		return item{link: &keptLink{storeKey(keyLink, s), dayreport.LinkFromSpan(rs.Resource(), s)}}, true
	}
	return item{}, false
}

// add puts items in (one already held is skipped) and lets go of what is
// past the bounds at now. It reports how many it added and let go.
func (p *pageStore) add(items []item, now time.Time) (added, evicted int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range items {
		key := it.key()
		if p.has[key] {
			continue
		}
		p.has[key] = true
		added++
		if it.turn != nil {
			p.turns = insert(p.turns, it.turn, turnBefore)
		} else {
			p.links = insert(p.links, it.link, linkBefore)
		}
	}
	evicted = p.evict(now)
	return added, evicted
}

// replace makes what the store holds items alone (read back from the
// file; the bounds at now apply), and reports how many of those it did
// not hold before and how many it held that it holds no more. The new
// contents are put together aside, so a page rendered meanwhile reads the
// old ones whole.
func (p *pageStore) replace(items []item, now time.Time) (added, letGo int) {
	fresh := newPageStore(p.keep)
	fresh.add(items, now)
	p.mu.Lock()
	defer p.mu.Unlock()
	for key := range fresh.has {
		if !p.has[key] {
			added++
		}
	}
	for key := range p.has {
		if !fresh.has[key] {
			letGo++
		}
	}
	p.turns, p.links, p.has = fresh.turns, fresh.links, fresh.has
	return added, letGo
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

// counts is how many turns and link changes the store keeps.
func (p *pageStore) counts() (turns, links int) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.turns), len(p.links)
}

// snapshot copies what the page shows of [from, now] (from zero: all kept
// within keep.age) and the installations kept.
func (p *pageStore) snapshot(from, now time.Time) (turns []dayreport.JudgedTurn, links []dayreport.LinkChange, installations []string, kept, keptLinks int) {
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
	turns = make([]dayreport.JudgedTurn, 0, len(p.turns)-ti)
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
func (p *pageStore) turn(trace string) (t dayreport.JudgedTurn, links []dayreport.LinkChange, ok bool) {
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

// linkAlertsToTurns gives each alert that names an installation and a
// cause but no turn the installation's latest kept turn that implicated
// the cause: the rules group by installation, so the turn that moved is
// known only here. An alert no kept turn matches keeps its link to the
// installation's turns. One pass over the kept turns, newest first, ends
// once every installation and cause asked for is found, however many
// alerts Alertmanager lists.
func (p *pageStore) linkAlertsToTurns(alerts []verdictpage.Alert) {
	type wanted struct{ installation, cause string }
	trace := map[wanted]string{}
	for _, a := range alerts {
		if a.Trace == "" && a.Installation != "" && a.Cause != "" {
			trace[wanted{a.Installation, a.Cause}] = ""
		}
	}
	if len(trace) == 0 {
		return
	}
	p.mu.RLock()
	left := len(trace)
	for j := len(p.turns) - 1; j >= 0 && left > 0; j-- {
		t := &p.turns[j].turn
		if !verdictpage.TraceID(t.Trace) {
			continue
		}
		for _, c := range t.Causes {
			w := wanted{t.Installation, c}
			if tr, ok := trace[w]; ok && tr == "" {
				trace[w] = t.Trace
				left--
			}
		}
	}
	p.mu.RUnlock()
	for i := range alerts {
		if a := &alerts[i]; a.Trace == "" {
			a.Trace = trace[wanted{a.Installation, a.Cause}]
		}
	}
}
