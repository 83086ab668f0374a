package linesconnector

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/exporters/textlines"
)

// The connector's state: lines held for the lines they join, and a ring of
// recently emitted turns. Every part is bounded: held lines by max_pending
// (and by wait, after which they are let go), the ring by
// emitted_cache_size.

type heldTurn struct {
	l       *line
	trace   pcommon.TraceID
	derived bool            // the trace was derived from the line (it had none), so it may adopt a take's
	names   []string        // the take IDs the turn names
	need    map[string]bool // take IDs of underrunning units still missing
	takes   []*line
	gone    bool
	// assumed is what the connector assumed of the turn where its lines
	// left it open: its launch, the take that joined it
	// (percause.lines.assumed).
	assumed []string
}

type heldTake struct {
	l    *line
	id   string
	gone bool
}

type queued struct {
	turn     *heldTurn
	take     *heldTake
	deadline time.Time
}

type state struct {
	cfg          *Config
	turns        map[pcommon.TraceID]*heldTurn
	turnsByTake  map[string][]*heldTurn
	takesByTrace map[pcommon.TraceID][]*heldTake
	takesByID    map[string][]*heldTake
	queue        []queued // in arrival order; entries already gone are skipped
	held         int
	emitted      *emittedRing
	launches     *launchAssigner
	// store keeps the held lines through a restart (nil: memory only).
	store *heldStore
	// restoring: the lines added are read back from the store, and held
	// whole, complete or not, for the next sweep to emit.
	restoring bool
}

func newState(cfg *Config) *state {
	return &state{
		cfg:          cfg,
		turns:        map[pcommon.TraceID]*heldTurn{},
		turnsByTake:  map[string][]*heldTurn{},
		takesByTrace: map[pcommon.TraceID][]*heldTake{},
		takesByID:    map[string][]*heldTake{},
		emitted:      newEmittedRing(cfg.EmittedCacheSize),
		launches:     newLaunchAssigner(cfg.EmittedCacheSize),
	}
}

// moment is when a line was written and when it came.
type moment struct {
	at, arrived time.Time
	timed       bool // at is the line's own time (its prefix's, or its log record's)
}

func (l *line) moment() moment { return moment{l.at, l.arrived, l.timed} }

// within says whether a take and a turn are close enough in time to join:
// by their own times when both have one; else by when they came, so a take
// line without a timestamp, read all at once with timestamped turns, still
// joins its turn by take ID.
func (s *state) within(a, b moment) bool { return apart(a, b) <= s.cfg.TakeWindow }

// apart is how far apart in time a take and a turn are, as within reads
// it.
func apart(a, b moment) time.Duration {
	d := a.at.Sub(b.at)
	if !a.timed || !b.timed {
		d = a.arrived.Sub(b.arrived)
	}
	if d < 0 {
		d = -d
	}
	return d
}

// nearestFirst orders a join's candidates within the take window by how
// far each is from at, the nearest first: a take ID the engine reused
// within the window names more than one.
func nearestFirst[T any](cands []T, at moment, momentOf func(T) moment) []T {
	if len(cands) < 2 {
		return cands
	}
	out := slices.Clone(cands)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(apart(momentOf(a), at), apart(momentOf(b), at)) })
	return out
}

// ambiguousTake is what a turn says of a take ID that n takes within the
// window carry, of which it took the one at tk.
func ambiguousTake(id string, tk moment, n int) string {
	return fmt.Sprintf("assumed take %s of %s, the nearest in time of %d takes %s within the take window", id, stampOf(tk), n, id)
}

// ambiguousTurn is what a turn says when a take joined it, the nearest of
// n held turns naming the take within the window.
func ambiguousTurn(id string, tk moment, n int) string {
	return fmt.Sprintf("assumed take %s of %s for the nearest in time of %d turns naming it within the take window", id, stampOf(tk), n)
}

func stampOf(m moment) string {
	if !m.timed {
		return "the line read at " + m.arrived.UTC().Format(time.RFC3339)
	}
	return m.at.UTC().Format(time.RFC3339Nano)
}

// add takes one line in: it joins what it can and releases what is complete.
func (s *state) add(l *line, out *emission) {
	if l.rec.Kind == textlines.KindTurn {
		s.addTurn(l, out)
		return
	}
	s.addTake(l, out)
}

func (s *state) addTurn(l *line, out *emission) {
	h := &heldTurn{l: l, trace: l.trace, need: map[string]bool{}}
	if h.trace.IsEmpty() {
		h.trace, h.derived = derivedTrace(l), true
	}
	if _, dup := s.turns[h.trace]; dup || s.emitted.hasTrace(h.trace) {
		out.drop(dropDuplicate)
		return
	}
	if s.restoring && l.launch != "" {
		s.launches.place(l, h.trace)
	} else {
		l.launch, l.launchAssumed = s.launches.launchOf(l, h.trace)
	}
	if l.launchAssumed != "" {
		h.assumed = append(h.assumed, l.launchAssumed)
	}
	for _, u := range l.rec.Turn.Units {
		if u.TakeID == "" {
			continue
		}
		h.names = append(h.names, u.TakeID)
		if u.Underruns > 0 {
			h.need[u.TakeID] = true
		}
	}
	// Takes already here: by trace, then by the take IDs the turn names.
	if !h.derived {
		for _, tk := range s.takesByTrace[h.trace] {
			s.attach(h, tk, out)
		}
	}
	for _, id := range h.names {
		var cands []*heldTake
		for _, tk := range s.takesByID[id] {
			if !tk.gone && s.within(l.moment(), tk.l.moment()) {
				cands = append(cands, tk)
			}
		}
		for _, tk := range nearestFirst(cands, l.moment(), func(tk *heldTake) moment { return tk.l.moment() }) {
			if tk.gone || hasTake(h, id) {
				continue
			}
			if !tk.l.trace.IsEmpty() && tk.l.trace != h.trace {
				if !h.derived {
					continue // another trace's take with the same ID
				}
				if s.adopt(h, tk.l.trace, out); h.trace != tk.l.trace {
					continue
				}
			}
			s.attach(h, tk, out)
			if len(cands) > 1 {
				h.assumed = append(h.assumed, ambiguousTake(id, tk.l.moment(), len(cands)))
			}
			break
		}
	}
	if len(h.need) == 0 && !s.restoring {
		s.release(h, "", out)
		return
	}
	s.turns[h.trace] = h
	for _, id := range h.names {
		s.turnsByTake[id] = append(s.turnsByTake[id], h)
	}
	s.hold(queued{turn: h, deadline: l.arrived.Add(s.cfg.Wait)}, out)
}

// adopt gives a turn that had no trace ID the trace of a take it joins, and
// takes in the other takes of that trace already held.
func (s *state) adopt(h *heldTurn, trace pcommon.TraceID, out *emission) {
	if _, taken := s.turns[trace]; taken || s.emitted.hasTrace(trace) {
		return
	}
	if cur, ok := s.turns[h.trace]; ok && cur == h {
		delete(s.turns, h.trace)
		s.turns[trace] = h
	}
	h.trace, h.derived = trace, false
	for _, tk := range s.takesByTrace[trace] {
		s.attach(h, tk, out)
	}
}

func hasTake(h *heldTurn, id string) bool {
	for _, t := range h.takes {
		if t.rec.Take.ID == id {
			return true
		}
	}
	return false
}

func (s *state) addTake(l *line, out *emission) {
	id := l.rec.Take.ID
	tk := &heldTake{l: l, id: id}
	if !l.trace.IsEmpty() {
		if h, ok := s.turns[l.trace]; ok {
			if hasTake(h, id) {
				out.drop(dropDuplicate)
				return
			}
			s.attach(h, tk, out)
			s.maybeRelease(h, out)
			return
		}
		if s.emitted.hasTrace(l.trace) {
			s.releaseTake(l, l.trace, out)
			return
		}
		for _, o := range s.takesByTrace[l.trace] {
			if !o.gone && o.id == id {
				out.drop(dropDuplicate)
				return
			}
		}
	}
	// A turn that names the take and has no trace of its own (or the same).
	var cands []*heldTurn
	for _, h := range s.turnsByTake[id] {
		if !h.gone && !hasTake(h, id) && s.within(h.l.moment(), l.moment()) {
			cands = append(cands, h)
		}
	}
	for _, h := range nearestFirst(cands, l.moment(), func(h *heldTurn) moment { return h.l.moment() }) {
		if !l.trace.IsEmpty() && l.trace != h.trace {
			if !h.derived {
				continue
			}
			s.adopt(h, l.trace, out)
			if h.trace != l.trace {
				continue
			}
		}
		s.attach(h, tk, out)
		if len(cands) > 1 {
			h.assumed = append(h.assumed, ambiguousTurn(id, l.moment(), len(cands)))
		}
		s.maybeRelease(h, out)
		return
	}
	if l.trace.IsEmpty() {
		if trace, ok := s.emitted.byTake(id, l.moment(), s); ok {
			s.releaseTake(l, trace, out)
			return
		}
	}
	if !l.trace.IsEmpty() {
		s.takesByTrace[l.trace] = append(s.takesByTrace[l.trace], tk)
	}
	s.takesByID[id] = append(s.takesByID[id], tk)
	s.hold(queued{take: tk, deadline: l.arrived.Add(s.cfg.Wait)}, out)
}

func (s *state) hold(q queued, out *emission) {
	s.queue = append(s.queue, q)
	s.held++
	out.pendingDelta++
	if q.turn != nil {
		s.holdLines(q.turn)
		return
	}
	q.take.l.held = true
	s.store.took(q.take.l)
}

// holdLines notes a held turn's lines as held, for the store.
func (s *state) holdLines(h *heldTurn) {
	h.l.held = true
	s.store.took(h.l)
	for _, tk := range h.takes {
		tk.held = true
		s.store.took(tk)
	}
}

// letGo notes a turn's lines as no longer held.
func (h *heldTurn) letGo() {
	h.l.held = false
	for _, tk := range h.takes {
		tk.held = false
	}
}

// attach joins a take to a turn; a held take stops being held.
func (s *state) attach(h *heldTurn, tk *heldTake, out *emission) {
	if tk.gone {
		return
	}
	if s.unholdTake(tk) {
		out.pendingDelta--
	}
	tk.gone = true
	h.takes = append(h.takes, tk.l)
	delete(h.need, tk.id)
	if cur, ok := s.turns[h.trace]; ok && cur == h && !h.gone {
		tk.l.held = true
		s.store.took(tk.l)
	}
}

// unholdTake removes a take from the indexes; it reports whether it was held.
func (s *state) unholdTake(tk *heldTake) bool {
	held := removeFrom(s.takesByID, tk.id, tk)
	if tr := tk.l.trace; !tr.IsEmpty() {
		removeFrom(s.takesByTrace, tr, tk)
	}
	if held {
		s.held--
	}
	return held
}

// removeFrom removes the first v from the list of k, and k when its list is
// left empty; it reports whether v was there.
func removeFrom[K, V comparable](m map[K][]V, k K, v V) bool {
	list := m[k]
	i := slices.Index(list, v)
	if i < 0 {
		return false
	}
	if len(list) == 1 {
		delete(m, k)
	} else {
		m[k] = append(list[:i:i], list[i+1:]...)
	}
	return true
}

func (s *state) maybeRelease(h *heldTurn, out *emission) {
	if len(h.need) == 0 && !s.restoring {
		s.release(h, "", out)
	}
}

// release emits a turn with the takes it has; why is "" when it is complete.
func (s *state) release(h *heldTurn, why string, out *emission) {
	if h.gone {
		return
	}
	h.gone = true
	h.letGo()
	if cur, ok := s.turns[h.trace]; ok && cur == h {
		delete(s.turns, h.trace)
		s.held--
		out.pendingDelta--
	}
	for _, id := range h.names {
		removeFrom(s.turnsByTake, id, h)
	}
	if why != "" {
		out.released = append(out.released, released{what: "turn", file: h.l.file, number: h.l.number, reason: why})
	}
	appendTurnSpans(out.traces.ResourceSpans(), h.l, h.trace, h.assumed)
	out.count(h.l)
	for _, tk := range h.takes {
		appendTakeSpan(out.traces.ResourceSpans(), tk, h.trace)
		out.count(tk)
	}
	out.turns++
	out.takes += len(h.takes)
	if h.l.batch != out.batch {
		out.carried = append(out.carried, h)
	}
	// Remembered as emitted now, so the lines that follow in this call join
	// it; forgotten again if the next consumer refuses the emission.
	out.emitted = append(out.emitted, s.emitted.add(h.trace, h.names, h.l.moment()))
}

func (s *state) releaseTake(l *line, trace pcommon.TraceID, out *emission) {
	l.held = false
	appendTakeSpan(out.traces.ResourceSpans(), l, trace)
	out.count(l)
	out.takes++
}

// refused undoes what a refused emission remembered: its turns were not
// emitted, so the same lines delivered again are no duplicates.
func (s *state) refused(out *emission) {
	for _, ref := range out.emitted {
		s.emitted.forget(ref)
	}
}

// rehold holds again the turns of earlier calls that a refused emission
// carried, with the takes they had: their senders were answered, and
// nothing else would send them again. Their wait is over, so the next
// sweep emits them again (a take delivered again meanwhile is a duplicate
// of the one they hold). It returns how many turns it holds again, and
// how many lines of earlier calls they keep (the turn lines and their
// takes).
func (s *state) rehold(out *emission, now time.Time) (turns, kept int) {
	for _, h := range out.carried {
		if _, taken := s.turns[h.trace]; taken || s.emitted.hasTrace(h.trace) {
			continue // read again meanwhile
		}
		h.gone = false
		s.holdLines(h)
		s.turns[h.trace] = h
		for _, id := range h.names {
			s.turnsByTake[id] = append(s.turnsByTake[id], h)
		}
		// First in the queue: its wait is over at once. Its earlier place
		// in the queue, live again with it, is passed over once it has
		// gone.
		s.queue = slices.Insert(s.queue, 0, queued{turn: h, deadline: now})
		s.held++
		turns++
		kept++
		for _, tk := range h.takes {
			if tk.batch != out.batch {
				kept++
			}
		}
	}
	return turns, kept
}

// releaseHeld ends a held entry's wait: a turn is emitted with what it has, a take
// with a trace ID alone, a take without one is dropped.
func (s *state) releaseHeld(q queued, why string, out *emission) {
	if q.turn != nil {
		s.release(q.turn, why, out)
		return
	}
	tk := q.take
	if tk.gone {
		return
	}
	tk.gone = true
	if s.unholdTake(tk) {
		out.pendingDelta--
	}
	if tk.l.trace.IsEmpty() {
		tk.l.held = false
		s.store.settle(tk.l)
		out.drop(dropTakeWithoutTurn)
		out.released = append(out.released, released{what: "take " + tk.id, file: tk.l.file, number: tk.l.number, reason: why})
		return
	}
	out.released = append(out.released, released{what: "take " + tk.id, file: tk.l.file, number: tk.l.number, reason: why})
	s.releaseTake(tk.l, tk.l.trace, out)
}

func (q queued) gone() bool {
	if q.turn != nil {
		return q.turn.gone
	}
	return q.take.gone
}

// expire lets go the entries whose wait is over.
func (s *state) expire(now time.Time, out *emission) {
	i := 0
	for ; i < len(s.queue); i++ {
		q := s.queue[i]
		if q.gone() {
			continue
		}
		if q.deadline.After(now) {
			break
		}
		why := releaseWait
		if q.turn != nil && len(q.turn.need) == 0 {
			why = "" // complete, held again after a refusal
		}
		s.releaseHeld(q, why, out)
	}
	s.compact(i)
}

// limit lets the oldest entries go while more than max_pending are held.
func (s *state) limit(out *emission) {
	i := 0
	for ; i < len(s.queue) && s.held > s.cfg.MaxPending; i++ {
		if q := s.queue[i]; !q.gone() {
			s.releaseHeld(q, releaseLimit, out)
		}
	}
	s.compact(i)
}

func (s *state) releaseAll(out *emission, why string) {
	for _, q := range s.queue {
		if !q.gone() {
			s.releaseHeld(q, why, out)
		}
	}
	s.queue = nil
}

// compact drops the first n queue entries, and gone ones when they are many.
func (s *state) compact(n int) {
	s.queue = s.queue[n:]
	if len(s.queue) > 64 && len(s.queue) > 2*s.held {
		kept := make([]queued, 0, s.held)
		for _, q := range s.queue {
			if !q.gone() {
				kept = append(kept, q)
			}
		}
		s.queue = kept
	}
}

// derivedTrace is the trace ID of a turn line that carries none: a hash of
// its source (the resource and the process ID, sourceOf), its prefix as
// written (its own time in whatever format: RFC 3339, BSD syslog's
// "Nov 30 08:00:30", os_log's) and its readings (the text from the tag on,
// fields in order), so reading the same line again gives the same trace,
// and the same readings from two processes, two phones or two times give
// two.
func derivedTrace(l *line) pcommon.TraceID {
	h := sha256.New()
	h.Write([]byte("percause.lines/voice.turn\x00"))
	h.Write([]byte(sourceOf(l)))
	h.Write([]byte{0})
	prefix, rest := splitAtTag(l.text)
	h.Write([]byte(strings.Join(strings.Fields(prefix), " ")))
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(strings.Fields(rest), " ")))
	var id pcommon.TraceID
	copy(id[:], h.Sum(nil))
	return id
}

// splitAtTag splits a line at its tag: the prefix before it, and the tag
// and what follows.
func splitAtTag(text string) (prefix, rest string) {
	for _, tag := range []string{textlines.PrefixTurn, textlines.PrefixTake} {
		if i := strings.Index(text, tag); i >= 0 {
			return text[:i], text[i:]
		}
	}
	return "", text
}

// emittedRing remembers the last emitted turns: their trace and the take IDs
// they named, for takes that arrive after their turn was emitted.
type emittedRing struct {
	entries []emitted
	next    int
	traces  map[pcommon.TraceID]int
	takes   map[string][]int // take ID → ring slots
	gen     uint64
}

type emitted struct {
	trace pcommon.TraceID
	names []string
	at    moment
	used  bool
	gen   uint64 // which add filled the slot
}

// ringRef names one add to the ring: its slot and which add it was.
type ringRef struct {
	slot int
	gen  uint64
}

func newEmittedRing(n int) *emittedRing {
	return &emittedRing{entries: make([]emitted, n), traces: map[pcommon.TraceID]int{}, takes: map[string][]int{}}
}

// entry is what one add put in the ring, unless a later add has taken its
// slot since.
func (r *emittedRing) entry(ref ringRef) (emitted, bool) {
	e := r.entries[ref.slot]
	return e, e.used && e.gen == ref.gen
}

func (r *emittedRing) hasTrace(t pcommon.TraceID) bool { return r.traces[t] > 0 }

func (r *emittedRing) add(trace pcommon.TraceID, names []string, at moment) ringRef {
	slot := r.next
	r.next = (r.next + 1) % len(r.entries)
	r.clear(slot)
	r.gen++
	r.entries[slot] = emitted{trace: trace, names: names, at: at, used: true, gen: r.gen}
	r.traces[trace]++
	for _, id := range names {
		r.takes[id] = append(r.takes[id], slot)
	}
	return ringRef{slot, r.gen}
}

// forget removes what one add put in the ring, unless a later add has taken
// its slot since.
func (r *emittedRing) forget(ref ringRef) {
	if e := r.entries[ref.slot]; e.used && e.gen == ref.gen {
		r.clear(ref.slot)
	}
}

func (r *emittedRing) clear(slot int) {
	old := r.entries[slot]
	if !old.used {
		return
	}
	if r.traces[old.trace]--; r.traces[old.trace] <= 0 {
		delete(r.traces, old.trace)
	}
	for _, id := range old.names {
		removeFrom(r.takes, id, slot)
	}
	r.entries[slot] = emitted{}
}

// byTake finds the emitted turn naming the take nearest it in time within
// the window (the most recent of those as near).
func (r *emittedRing) byTake(id string, at moment, s *state) (pcommon.TraceID, bool) {
	list := r.takes[id]
	var best pcommon.TraceID
	found, bestD := false, time.Duration(0)
	for i := len(list) - 1; i >= 0; i-- {
		e := r.entries[list[i]]
		if d := apart(e.at, at); d <= s.cfg.TakeWindow && (!found || d < bestD) {
			best, bestD, found = e.trace, d, true
		}
	}
	return best, found
}

// restore holds again the lines read back from the store, record by record
// in the order they were written, joined as they were; nothing is let go
// here (the next sweep emits what is complete or whose wait is over). A
// record none of whose lines is held (each a duplicate of one before it)
// is deleted.
func (s *state) restore(recs []*heldRecord, lines [][]*line, out *emission) {
	s.restoring = true
	defer func() { s.restoring = false }()
	for i, rec := range recs {
		for _, l := range lines[i] {
			l.stored = rec
			s.add(l, out)
		}
	}
	s.store.restored(recs, lines)
}
