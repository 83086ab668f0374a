package verdictprocessor

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/percause/percause/processors/internal/compact"
	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/changelog"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/processors/verdictprocessor/internal/persist"
	"github.com/percause/percause/verdict"
)

// The handover (changelog): a gateway reading its input from Kafka keeps
// what it holds for each partition in a changelog topic, on the partition
// number each record came from, beside each commit: the traces it holds
// (a join's half-joined traces, a decide's turns waiting) and, when it
// keeps launches, each launch with which of its kept turns were decided.
// A gateway that takes a partition over (a rebalance, a gateway killed,
// added or stopped) reads the partition's changelog back before it reads
// the partition's next record: what the last owner held is held again,
// the launches' history follows the partition, and a turn read again
// after the move is decided once, its trace among the decided
// (docs/decisions/0317-what-a-gateway-holds-follows-its-partition.md).
//
// The Kafka receiver names each record's partition and offset in its
// client metadata; a record of a partition this processor has not read
// since it started, or whose offset skips past the last one it read
// there (another gateway read those), is a takeover.

// The Kafka receiver's client metadata keys.
const (
	metaKafkaPartition = "kafka.partition"
	metaKafkaOffset    = "kafka.offset"
)

type handover struct {
	log *changelog.Log
	// takeovers serializes the reads back: a partition is read once.
	takeovers sync.Mutex
	// Under the processor's lock:
	// last is the offset of the last record read of each partition.
	last map[int32]int64
	// launchPart and tracePart are the partition each kept launch's turns
	// and each held trace's spans come on.
	launchPart map[launches.Key]int32
	tracePart  map[pcommon.TraceID]int32
	// sent is a join's traces sent on in the last max_age, each with its
	// partition, and sentOrder the order they were, oldest first: each is
	// in the changelog, so a half of one read again after its partition
	// moved is not held alone and sent on again (decision 0320). A mark
	// leaves the changelog when it leaves sent.
	sent      map[pcommon.TraceID]sentMark
	sentOrder []sentAt
}

type sentMark struct {
	part int32
	at   time.Time
}

type sentAt struct {
	id pcommon.TraceID
	at time.Time
}

// openHandover connects the changelog's producer and hears what changes
// (Start, after storage).
func (p *verdictProcessor) openHandover() error {
	l, err := changelog.Open(*p.cfg.Changelog, "percause-"+p.id.String())
	if err != nil {
		return fmt.Errorf("verdict processor: %w", err)
	}
	p.handover = &handover{log: l, last: map[int32]int64{},
		launchPart: map[launches.Key]int32{}, tracePart: map[pcommon.TraceID]int32{},
		sent: map[pcommon.TraceID]sentMark{}}
	p.held.ReportTo(heldChanges{Changes: p.state, p: p})
	if p.launches != nil {
		p.launches.ReportTo(launchChanges{Changes: p.state, p: p})
	}
	return nil
}

// letGoOfRestoredHeld lets go of the held traces storage restored. Each
// commit wrote them to the changelog before the store, so the changelog
// has them, and a partition they came on may have moved to another
// gateway while this one was down: held here too, a turn (or a verdict
// refused then and sent again) would be decided twice. They leave memory
// and storage; whoever takes each partition over, this gateway included,
// holds them again from the changelog at its first record.
func (p *verdictProcessor) letGoOfRestoredHeld(ctx context.Context) {
	var out tally
	p.mu.Lock()
	var restored []*pending.Entry
	p.held.Each(func(e *pending.Entry) { restored = append(restored, e) })
	for _, e := range restored {
		p.releaseLocked(e, &out)
	}
	p.mu.Unlock()
	if len(restored) == 0 {
		return
	}
	p.tel.record(ctx, &out)
	p.logger.Info("verdict processor: held traces restored from storage are let go; the changelog holds them for whoever takes their partitions over",
		zap.Int("traces", len(restored)))
}

// A changelog key names what it keeps: a held trace ("t" and its ID in
// hex), a trace a join sent on ("s" and its ID in hex) or a launch ("l"
// and its two IDs quoted, so no two launches share one).
const (
	keyHeldTrace = 't'
	keySentTrace = 's'
	keyLaunch    = 'l'
)

// changelogKeyKind is what a changelog key names.
type changelogKeyKind int

const (
	keyUnreadable changelogKeyKind = iota
	keyIsHeld
	keyIsSent
	keyIsLaunch
)

func traceChangelogKey(id pcommon.TraceID) string { return string(keyHeldTrace) + id.String() }

func sentChangelogKey(id pcommon.TraceID) string { return string(keySentTrace) + id.String() }

func launchChangelogKey(k launches.Key) string {
	return string(keyLaunch) + strconv.Quote(k.Installation) + strconv.Quote(k.Instance)
}

// parseChangelogKey reads a key back: a held trace's, a sent trace's, or
// a launch's.
func parseChangelogKey(key string) (id pcommon.TraceID, k launches.Key, kind changelogKeyKind) {
	if len(key) == 0 {
		return id, k, keyUnreadable
	}
	switch key[0] {
	case keyHeldTrace, keySentTrace:
		b, err := hex.DecodeString(key[1:])
		if err != nil || len(b) != len(id) {
			return id, k, keyUnreadable
		}
		copy(id[:], b)
		if key[0] == keySentTrace {
			return id, k, keyIsSent
		}
		return id, k, keyIsHeld
	case keyLaunch:
		rest := key[1:]
		inst, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return id, k, keyUnreadable
		}
		instance := rest[len(inst):]
		var err1, err2 error
		k.Installation, err1 = strconv.Unquote(inst)
		k.Instance, err2 = strconv.Unquote(instance)
		if err1 != nil || err2 != nil {
			return id, k, keyUnreadable
		}
		return id, k, keyIsLaunch
	}
	return id, k, keyUnreadable
}

// markLaunchLocked says launch k changed: the next commit writes it, on
// the partition its turns come on (a launch whose turns came from no
// partition, before this processor read Kafka, is not written).
func (h *handover) markLaunchLocked(k launches.Key) {
	if part, ok := h.launchPart[k]; ok {
		h.log.Mark(part, launchChangelogKey(k))
	}
}

// markTraceLocked says held trace id changed or left.
func (h *handover) markTraceLocked(id pcommon.TraceID) {
	if part, ok := h.tracePart[id]; ok {
		h.log.Mark(part, traceChangelogKey(id))
	}
}

// heldChanges hears what the held traces tell storage, and marks it for
// the changelog too.
type heldChanges struct {
	pending.Changes
	p *verdictProcessor
}

func (c heldChanges) Changed(e *pending.Entry) {
	c.Changes.Changed(e)
	c.p.handover.markTraceLocked(e.ID)
}

func (c heldChanges) Released(id pcommon.TraceID) {
	c.Changes.Released(id)
	c.p.handover.markTraceLocked(id) // written empty: it is held no longer
	delete(c.p.handover.tracePart, id)
}

// launchChanges hears what the launches book tells storage, and marks it
// for the changelog too.
type launchChanges struct {
	launches.Changes
	p *verdictProcessor
}

func (c launchChanges) LaunchChanged(l *launches.Launch) {
	c.Changes.LaunchChanged(l)
	c.p.handover.markLaunchLocked(l.Key)
}

func (c launchChanges) LaunchForgotten(k launches.Key) {
	c.Changes.LaunchForgotten(k)
	c.p.handover.markLaunchLocked(k) // written empty: the book no longer has it
	delete(c.p.handover.launchPart, k)
}

// decidedForHandoverLocked marks what the changelog says of a trace whose
// decision was accepted (before it leaves the held traces): its launch,
// which says which of its turns were decided, or, for a join, which keeps
// no launches, the trace as sent on. Without a changelog it costs a nil
// check on the acceptance path.
func (p *verdictProcessor) decidedForHandoverLocked(e *pending.Entry, now time.Time) {
	h := p.handover
	if h == nil {
		return
	}
	if p.launches == nil {
		if part, ok := h.tracePart[e.ID]; ok {
			h.noteSentLocked(e.ID, part, now)
		}
		return
	}
	if k, ok := p.launchOf(e); ok {
		h.markLaunchLocked(k)
	}
}

// noteSentLocked keeps trace id as sent on, from partition part: the next
// commit writes it.
func (h *handover) noteSentLocked(id pcommon.TraceID, part int32, now time.Time) {
	h.sent[id] = sentMark{part: part, at: now}
	h.sentOrder = append(h.sentOrder, sentAt{id: id, at: now})
	h.log.Mark(part, sentChangelogKey(id))
}

// forgetSentLocked lets the sent traces older than keep go, and the
// oldest beyond limit: the next commit takes them out of the changelog.
// A half of one read again after that is held alone, as a half that came
// after max_age is.
func (h *handover) forgetSentLocked(now time.Time, keep time.Duration, limit int) (forgot int) {
	n := 0
	for ; n < len(h.sentOrder); n++ {
		o := h.sentOrder[n]
		if now.Sub(o.at) < keep && len(h.sent) <= limit {
			break
		}
		if m, ok := h.sent[o.id]; ok && m.at.Equal(o.at) {
			delete(h.sent, o.id)
			h.log.Mark(m.part, sentChangelogKey(o.id))
			forgot++
		}
	}
	if n > 0 {
		h.sentOrder = slices.Delete(h.sentOrder, 0, n)
	}
	return forgot
}

// prepareLocked takes what was marked for the changelog, each as it
// stands now: a trace still held, a launch still kept (with which of its
// kept turns were decided), or nothing, which forgets the key.
func (h *handover) prepareLocked(p *verdictProcessor) changelog.Batch {
	return h.log.Prepare(func(key string) []byte {
		id, k, kind := parseChangelogKey(key)
		switch {
		case kind == keyIsHeld:
			if e := p.held.Get(id); e != nil {
				return persist.EncodeHeld(e)
			}
		case kind == keyIsSent:
			if _, ok := h.sent[id]; ok {
				return sentValue
			}
		case kind == keyIsLaunch && p.launches != nil:
			if l := p.launches.Get(k); l != nil {
				return encodeHandover(l, p.held.Decided)
			}
		}
		return nil
	})
}

// writeChangelog writes what the commit's changelog batch holds; on a
// failure what it held is marked again, and the commit fails with it.
func (p *verdictProcessor) writeChangelog(ctx context.Context, b changelog.Batch) error {
	err := p.handover.log.Write(ctx, b)
	if err == nil {
		return nil
	}
	p.mu.Lock()
	p.handover.log.Failed(b)
	p.mu.Unlock()
	return fmt.Errorf("verdict processor: writing the changelog: %w", err)
}

// takeOverIfMoved reads a partition's changelog back before the
// processor reads a record of it that another gateway may have read the
// partition's earlier records for, and notes the partition the record's
// launches and traces come on. A failed read refuses the record, which
// the receiver sends again.
func (p *verdictProcessor) takeOverIfMoved(ctx context.Context, td ptrace.Traces) error {
	part, off, ok := kafkaRecordOf(ctx)
	if !ok {
		return nil
	}
	h := p.handover
	h.takeovers.Lock()
	defer h.takeovers.Unlock()
	p.mu.Lock()
	last, seen := h.last[part]
	p.mu.Unlock()
	moved := !seen || off > last+1
	if !moved {
		// The partition may have gone to another gateway and come back
		// with offsets that do not show it: one killed after accepting
		// records, before its group committed their marks, hands the same
		// offsets on. Its writing moved the changelog's end.
		m, err := h.log.Moved(ctx, []int32{part})
		if err != nil {
			p.tel.storageError(ctx, opTakeover, 1)
			return fmt.Errorf("verdict processor: whether partition %d moved: %w", part, err)
		}
		moved = len(m) > 0
	}
	if moved {
		if err := p.readBack(ctx, part); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !seen || off > last {
		h.last[part] = off
	}
	for res, span := range verdict.Spans(td) {
		if k, ok := launches.KeyOf(res); ok && p.launches != nil {
			h.launchPart[k] = part
		}
		// A trace decided already is not held again: noting it would keep
		// its entry here for good.
		if id := span.TraceID(); !p.held.Decided(id) {
			h.tracePart[id] = part
		}
	}
	return nil
}

// readBack reads partition part's changelog and keeps what it says: each
// trace held there that this processor neither holds nor decided, held
// again; each launch it kept less recently than the changelog did; every
// decided turn.
func (p *verdictProcessor) readBack(ctx context.Context, part int32) error {
	start := time.Now()
	values, err := p.handover.log.Read(ctx, part)
	if err == nil {
		// A gateway that held the partition and lives sees its end move,
		// and lets go of what it held for it (letGoOfMovedPartitions).
		err = p.handover.log.Fence(ctx, part, p.id.String())
	}
	if err != nil {
		p.tel.storageError(ctx, opTakeover, 1)
		p.logger.Warn("verdict processor: reading a partition's changelog back failed; the record is refused for a retry",
			zap.Int32("partition", part), zap.Error(err))
		return fmt.Errorf("verdict processor: taking partition %d over: %w", part, err)
	}
	var n handoverRead
	var out tally
	now := p.now()
	p.mu.Lock()
	// What this gateway holds for the partition it kept from before it
	// last lost it, and whoever held the partition since wrote each change
	// to the changelog: its copies go (a verdict refused then, sent again
	// later, would be a second), and what the changelog holds is held
	// again below.
	mine := p.releasePartitionsLocked(map[int32]bool{part: true}, &out)
	// The launches first: the turns they name decided are not held again.
	var traces []pcommon.TraceID
	for key, v := range values {
		switch id, _, kind := parseChangelogKey(key); kind {
		case keyUnreadable:
			n.bad++
		case keyIsHeld:
			traces = append(traces, id)
		case keyIsSent:
			// Sent on by the last owner: a half of it read again is not
			// held alone. Kept as this gateway's own, so it leaves the
			// changelog in time.
			if !p.held.Decided(id) {
				p.held.MarkDecided(id)
				n.decided++
			}
			p.handover.noteSentLocked(id, part, now)
		default:
			p.readBackLaunchLocked(v, part, &n)
		}
	}
	for _, id := range traces {
		p.readBackTraceLocked(id, values[traceChangelogKey(id)], part, now, &n, &out)
	}
	for _, id := range mine {
		if p.held.Get(id) == nil {
			out.inc(&out.dropped, dropMoved)
		}
	}
	p.mu.Unlock()
	p.tel.record(ctx, &out)
	p.tel.b.ProcessorVerdictTakeovers.Add(ctx, 1)
	fields := []zap.Field{zap.Int32("partition", part), zap.String("changelog", p.handover.log.Topic()),
		zap.Int("held", n.held), zap.Int("launches", n.launches), zap.Int("decided_turns", n.decided),
		zap.Duration("took", time.Since(start))}
	if n.bad > 0 {
		p.logger.Warn("verdict processor: records of the changelog could not be read; what they kept is lost to this gateway",
			append(fields, zap.Int("unreadable", n.bad))...)
	}
	p.logger.Info("verdict processor: took over partition "+strconv.Itoa(int(part)), fields...)
	return nil
}

// handoverRead counts what a read back kept.
type handoverRead struct{ held, launches, decided, bad int }

func (p *verdictProcessor) readBackTraceLocked(id pcommon.TraceID, v []byte, part int32, now time.Time, n *handoverRead, out *tally) {
	e, err := persist.DecodeHeld(v)
	if err != nil || e.ID != id {
		n.bad++
		return
	}
	if p.held.Get(id) != nil || p.held.Decided(id) {
		return
	}
	p.handover.tracePart[id] = part
	p.held.Restore(e, now)
	p.state.Changed(e)
	out.pendingDelta++
	n.held++
}

func (p *verdictProcessor) readBackLaunchLocked(v []byte, part int32, n *handoverRead) {
	l, ids, err := decodeHandover(v)
	if err != nil {
		n.bad++
		return
	}
	if p.launches == nil {
		return
	}
	p.handover.launchPart[l.Key] = part
	// The changelog's launch is the newer, whatever the clocks say: what
	// this gateway kept of it, it kept when it last held the partition,
	// and whoever held it since wrote each change there before its store.
	// (Comparing when each last saw the launch kept a copy from before the
	// partition moved away and back on gateways whose clocks agreed.)
	if p.launches.Get(l.Key) == nil {
		p.tel.b.ProcessorVerdictLaunches.Add(1)
	}
	p.launches.Restore(l)
	p.state.LaunchChanged(l)
	n.launches++
	for _, id := range ids {
		if !p.held.Decided(id) {
			p.held.MarkDecided(id)
			n.decided++
		}
	}
}

// heartbeatLoop writes the heartbeats until the sweep stops.
func (p *verdictProcessor) heartbeatLoop(every time.Duration) {
	defer close(p.heartbeatDone)
	// A round on its way when the processor stops is cut short.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.stopSweep:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stopSweep:
			return
		case <-t.C:
			_ = p.heartbeat(ctx)
		}
	}
}

// heartbeat writes a record of no content on each partition of the input
// topic. Its owner, whoever that is now, reads the record as any other:
// a partition it has not read since it started, the first of a partition
// taken over, makes it read back what the last owner held, though no
// record of data comes to the partition again.
func (p *verdictProcessor) heartbeat(ctx context.Context) error {
	_, err := p.handover.log.Heartbeat(ctx)
	if err != nil {
		p.tel.storageError(ctx, opHeartbeat, 1)
		if p.storageErrLog.Allow() {
			p.logger.Warn("verdict processor: writing the heartbeats failed; what a moved partition held waits for its next record",
				zap.String("input", p.cfg.Changelog.Input), zap.Error(err))
		}
	}
	return err
}

// ownershipCheck is how often a gateway holding traces for partitions
// looks whether another took one over.
const ownershipCheck = time.Second

// letGoOfMovedPartitions lets go of the traces held for those of parts
// another gateway took over while this one lived (a rebalance, a
// scale-up): the new owner read them back from the changelog and decides
// them, so this one must not (decision 0317). They go without a verdict,
// counted as dropped (moved), and without a word to the changelog, which
// the new owner reads; a later record of such a partition is a takeover
// again.
func (p *verdictProcessor) letGoOfMovedPartitions(ctx context.Context, parts []int32) error {
	if len(parts) == 0 {
		return nil
	}
	h := p.handover
	// Under the takeovers' lock: a record of a partition found moved here
	// must find it unseen (h.last let go), not its end known no more.
	h.takeovers.Lock()
	defer h.takeovers.Unlock()
	moved, err := h.log.Moved(ctx, parts)
	if err != nil {
		p.tel.storageError(ctx, opTakeover, 1)
		return err
	}
	if len(moved) == 0 {
		return nil
	}
	gone := map[int32]bool{}
	for _, part := range moved {
		gone[part] = true
	}
	var out tally
	p.mu.Lock()
	for range p.releasePartitionsLocked(gone, &out) {
		out.inc(&out.dropped, dropMoved)
	}
	for part := range gone {
		delete(h.last, part)
	}
	// The new owner read the sent traces and the launches back and keeps
	// them; nothing of them is written here again (a write to a partition
	// not its own would read to the owner as a takeover).
	for id, m := range h.sent {
		if gone[m.part] {
			delete(h.sent, id)
		}
	}
	for k, part := range h.launchPart {
		if gone[part] {
			delete(h.launchPart, k)
		}
	}
	h.log.Forget(gone)
	p.mu.Unlock()
	p.tel.record(ctx, &out)
	if out.pendingDelta != 0 {
		p.cycles.poke()
	}
	p.logger.Info("verdict processor: partitions taken over by another gateway; what was held for them is let go",
		zap.Int32s("partitions", moved), zap.Int64("traces", -out.pendingDelta))
	return nil
}

// letGoOfMovedHeld is the look once a second: letGoOfMovedPartitions on
// every partition this gateway keeps something for, a held trace, a
// launch or a sent trace: each of them may write to its partition.
func (p *verdictProcessor) letGoOfMovedHeld(ctx context.Context) {
	h := p.handover
	p.mu.Lock()
	parts := p.partitionsLocked(func(*pending.Entry) bool { return true })
	seen := map[int32]bool{}
	for _, part := range parts {
		seen[part] = true
	}
	add := func(part int32) {
		if !seen[part] {
			seen[part] = true
			parts = append(parts, part)
		}
	}
	for _, m := range h.sent {
		add(m.part)
	}
	for _, part := range h.launchPart {
		add(part)
	}
	p.mu.Unlock()
	_ = p.letGoOfMovedPartitions(ctx, parts)
}

// lookBeforeDecidingLocked makes sure a sweep at now neither decides a
// trace nor sends its refused verdict again for a partition another
// gateway took over since the last look (once a second): that one read
// the trace back and decides it (decision 0319). When the look fails, the
// traces that came from Kafka wait for the next sweep. It finds the traces the
// sweep would act on and, when one would be decided, looks at their
// partitions, the lock let go meanwhile; it returns the sweep's walk over
// those of them still held, oldest first.
func (p *verdictProcessor) lookBeforeDecidingLocked(ctx context.Context, now time.Time) func(func(*pending.Entry)) {
	surplus := p.held.Len() > p.cfg.MaxPending // the sweep decides the oldest
	var due []*pending.Entry
	seen := map[int32]bool{}
	var parts []int32
	p.held.Each(func(e *pending.Entry) {
		if e.Delivery.Sending || now.Before(e.Delivery.RetryAt) {
			return
		}
		act, _ := p.dueLocked(e, now)
		if act == sweepNothing && !surplus {
			return
		}
		due = append(due, e)
		if part, ok := p.handover.tracePart[e.ID]; ok && (act == sweepDecide || surplus) && !seen[part] {
			seen[part] = true
			parts = append(parts, part)
		}
	})
	var unknown bool // whether the look failed: the partitions' traces wait
	if len(parts) > 0 {
		p.mu.Unlock()
		unknown = p.letGoOfMovedPartitions(ctx, parts) != nil
		p.mu.Lock()
	}
	return func(fn func(*pending.Entry)) {
		for _, e := range due {
			if p.held.Get(e.ID) != e {
				continue
			}
			if _, fromKafka := p.handover.tracePart[e.ID]; unknown && fromKafka {
				continue
			}
			fn(e)
		}
	}
}

// partitionsLocked is every partition a trace came from whose held entry
// (nil when none is held) want chooses.
func (p *verdictProcessor) partitionsLocked(want func(*pending.Entry) bool) []int32 {
	seen := map[int32]bool{}
	var parts []int32
	for id, part := range p.handover.tracePart {
		if seen[part] {
			continue
		}
		if want(p.held.Get(id)) {
			seen[part] = true
			parts = append(parts, part)
		}
	}
	return parts
}

// releasePartitionsLocked lets go of the traces held for the partitions
// in gone, but for those a cycle is sending, and returns those it let go.
// Nothing is written to the changelog for them: the partition's owner
// keeps them there.
func (p *verdictProcessor) releasePartitionsLocked(gone map[int32]bool, out *tally) []pcommon.TraceID {
	var released []pcommon.TraceID
	for id, part := range p.handover.tracePart {
		if !gone[part] {
			continue
		}
		delete(p.handover.tracePart, id) // before the release: nothing is written for it
		if e := p.held.Get(id); e != nil && !e.Delivery.Sending {
			p.releaseLocked(e, out)
			released = append(released, id)
		}
	}
	return released
}

// kafkaRecordOf is the partition and offset the Kafka receiver named for
// the record a request came from.
func kafkaRecordOf(ctx context.Context) (int32, int64, bool) {
	md := client.FromContext(ctx).Metadata
	ps, os := md.Get(metaKafkaPartition), md.Get(metaKafkaOffset)
	if len(ps) != 1 || len(os) != 1 {
		return 0, 0, false
	}
	part, err1 := strconv.ParseInt(ps[0], 10, 32)
	off, err2 := strconv.ParseInt(os[0], 10, 64)
	if err1 != nil || err2 != nil || part < 0 || off < 0 {
		return 0, 0, false
	}
	return int32(part), off, true
}

// sentValue is the changelog value of a trace a join sent on: what
// matters is its key.
var sentValue = []byte{1}

// handoverVersion is the changelog value's version.
const handoverVersion = 1

// encodeHandover is a launch's changelog value: the version, the traces
// of its kept turns that were decided, then the launch as storage keeps
// it (launches.Encode).
func encodeHandover(l *launches.Launch, decided func(pcommon.TraceID) bool) []byte {
	e := compact.Encoder{B: make([]byte, 0, 96+48*len(l.Turns))}
	e.B = append(e.B, handoverVersion)
	n := 0
	for i := range l.Turns {
		if decided(l.Turns[i].Trace) {
			n++
		}
	}
	e.Uint(uint64(n))
	for i := range l.Turns {
		if decided(l.Turns[i].Trace) {
			e.B = append(e.B, l.Turns[i].Trace[:]...)
		}
	}
	e.B = append(e.B, launches.Encode(l)...)
	return e.B
}

// errHandoverVersion is a changelog value of a version this build does
// not read.
var errHandoverVersion = errors.New("changelog value of a version this build does not read")

// decodeHandover reads a changelog value.
func decodeHandover(b []byte) (*launches.Launch, []pcommon.TraceID, error) {
	if len(b) == 0 {
		return nil, nil, compact.ErrCorrupt
	}
	if b[0] != handoverVersion {
		return nil, nil, fmt.Errorf("%w: %d", errHandoverVersion, b[0])
	}
	d := compact.Decoder{B: b[1:]}
	n := d.Count(launches.KeptTurns)
	ids := make([]pcommon.TraceID, n)
	for i := range ids {
		copy(ids[i][:], d.Raw(len(ids[i])))
	}
	if d.Err != nil {
		return nil, nil, d.Err
	}
	l, err := launches.Decode(d.B)
	if err != nil {
		return nil, nil, err
	}
	return l, ids, nil
}
