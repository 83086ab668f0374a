package verdictprocessor

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/internal/testsupport/storagetest"
	"github.com/percause/percause/processors/internal/launches"
	"github.com/percause/percause/processors/verdictprocessor/internal/changelog"
	"github.com/percause/percause/verdict"
)

// changelogCluster is an in-process cluster with a changelog topic of 6
// partitions and, if named, the input topic the gateways read, of as
// many, closed when the test ends.
func changelogCluster(t testing.TB, topic string, input ...string) changelog.Config {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, append([]string{topic}, input...)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := changelog.Config{Brokers: c.ListenAddrs(), Topic: topic}
	if len(input) > 0 {
		cl.Input = input[0]
	}
	return cl
}

// handoverHarness is a started decide stage with storage under dir and its
// launches' changelog on cl.
func handoverHarness(t testing.TB, dir string, cl changelog.Config) *harness {
	t.Helper()
	return handoverHarnessOf(t, dir, cl, EmitVerdicts, nil)
}

// handoverHarnessOf is handoverHarness with emit, sending on to next (nil:
// the harness's sink).
func handoverHarnessOf(t testing.TB, dir string, cl changelog.Config, emit string, next *consumertest.TracesSink) *harness {
	t.Helper()
	host := newStorageHost(t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Emit, cfg.Storage = emit, &host.ID
	cfg.Changelog = &cl
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, cfg)
	if next != nil {
		h.p.next = next
	}
	if err := h.p.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.stop(host) })
	return h
}

// fromRecord hands td to h as the Kafka receiver does a record of
// partition part at offset off.
func fromRecord(h *harness, part int32, off int64, td ptrace.Traces) {
	h.t.Helper()
	ctx := client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{
		metaKafkaPartition: {strconv.Itoa(int(part))}, metaKafkaOffset: {strconv.FormatInt(off, 10)},
	})})
	if err := h.p.ConsumeTraces(ctx, td); err != nil {
		h.t.Fatal(err)
	}
	h.drainSink()
}

// joinedTurn is turn i of launchTurns as a record of the turns topic
// carries it: the phone's spans and the engine's take in one batch.
func joinedTurn(i int) ptrace.Traces {
	lt := launchTurns[i]
	n := byte(10 + i)
	td := sdk(n, plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players))
	sdk(n, take("t1", 0.3, nil)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	return td
}

// TestLaunchFollowsItsPartition: gateway A decides a launch's first two
// turns from partition 3 of the turns topic; the partition moves to
// gateway B, which A's storage is not. B reads the partition's changelog
// back at its first record: the second turn read again (A's commit had
// not reached Kafka) is not decided twice, and the third and fourth turns
// are read against the launch's earlier ones: pool, then state.
func TestLaunchFollowsItsPartition(t *testing.T) {
	cl := changelogCluster(t, "launches")
	a := handoverHarness(t, t.TempDir(), cl)
	fromRecord(a, 3, 0, joinedTurn(0))
	fromRecord(a, 3, 1, joinedTurn(1))
	for i := range 2 {
		if cause, ev := a.causeOf(byte(10 + i)); cause != launchTurns[i].cause {
			t.Fatalf("gateway A, turn %d: %s (%s)", i+1, cause, ev)
		}
	}

	b := handoverHarness(t, t.TempDir(), cl)
	fromRecord(b, 3, 1, joinedTurn(1)) // read again after the move
	fromRecord(b, 3, 2, joinedTurn(2))
	fromRecord(b, 3, 3, joinedTurn(3))
	for _, v := range b.verdicts() {
		if v.TraceID() == traceID(11) {
			t.Errorf("gateway B decided turn 2 again: %s", verdict.FromSpan(pcommon.NewResource(), v).Cause)
		}
	}
	for i := 2; i < 4; i++ {
		cause, ev := b.causeOf(byte(10 + i))
		if cause != launchTurns[i].cause {
			t.Errorf("gateway B, turn %d: %s (%s), want %s", i+1, cause, ev, launchTurns[i].cause)
		}
	}
	if b.p.handover.last[3] != 3 {
		t.Errorf("gateway B read partition 3 up to offset %d, want 3", b.p.handover.last[3])
	}
	if n := b.counter("otelcol_processor_verdict_takeovers")[""]; n != 1 {
		t.Errorf("gateway B counted %d takeovers, want 1", n)
	}
}

// TestHeldTraceFollowsItsPartition: join gateway A holds a trace whose
// phone half came on partition 2 of the spans topic, waiting for its take.
// The partition moves to gateway B, which A's storage is not; the take
// comes there. B reads the partition's changelog back at that record,
// holds the phone half again, and sends the turn on whole, its take
// joined.
func TestHeldTraceFollowsItsPartition(t *testing.T) {
	cl := changelogCluster(t, "join")
	a := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, new(consumertest.TracesSink))
	// An underrun names its take: the turn waits for it.
	fromRecord(a, 2, 0, sdk(1, underrun(1, 1, 0.9, nil), turn(nil)))
	if a.p.held.Len() != 1 {
		t.Fatalf("gateway A holds %d traces, want the phone half waiting for its take", a.p.held.Len())
	}

	joined := new(consumertest.TracesSink)
	b := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, joined)
	fromRecord(b, 2, 1, sdk(1, take("t1", 2.0, nil)))
	names := map[string]int{}
	for _, td := range joined.AllTraces() {
		for _, s := range verdict.Spans(td) {
			names[s.Name()]++
		}
	}
	if names["voice.turn"] != 1 || names["voice.unit"] != 1 || names["tts.take"] != 1 {
		t.Fatalf("gateway B sent on %v, want the turn whole: its voice.turn, its unit and its take", names)
	}
	if b.p.held.Len() != 0 {
		t.Errorf("gateway B still holds %d traces", b.p.held.Len())
	}
}

// TestALostPartitionsHeldTracesAreLetGo: join gateway A holds a phone's
// half from partition 2; gateway B takes partition 2 over while A lives
// (a rebalance), holding it again from the changelog. A's own writes do
// not make it let go; B's takeover does: A drops what it held for
// partition 2 without sending it on (counted as moved), and the turn is
// sent on once, by B, when its take comes.
func TestALostPartitionsHeldTracesAreLetGo(t *testing.T) {
	cl := changelogCluster(t, "join")
	fromA, fromB := new(consumertest.TracesSink), new(consumertest.TracesSink)
	a := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, fromA)
	fromRecord(a, 2, 0, sdk(1, underrun(1, 1, 0.9, nil), turn(nil)))
	fromRecord(a, 2, 1, sdk(2, underrun(1, 1, 0.9, nil), turn(nil)))
	a.p.letGoOfMovedHeld(context.Background())
	if a.p.held.Len() != 2 {
		t.Fatalf("gateway A let go of what it holds with partition 2 still its own: %d held", a.p.held.Len())
	}

	b := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, fromB)
	fromRecord(b, 2, 2, sdk(1, take("t1", 2.0, nil)))
	a.p.letGoOfMovedHeld(context.Background())
	if a.p.held.Len() != 0 {
		t.Errorf("gateway A still holds %d traces of the partition B took over", a.p.held.Len())
	}
	if n := a.counter("otelcol_processor_verdict_dropped")["moved"]; n != 2 {
		t.Errorf("gateway A counted %d dropped as moved, want 2", n)
	}
	if fromA.SpanCount() != 0 {
		t.Errorf("gateway A sent on %d spans of a partition it lost", fromA.SpanCount())
	}
	turns := 0
	for _, td := range fromB.AllTraces() {
		for _, s := range verdict.Spans(td) {
			if s.Name() == "voice.turn" {
				turns++
			}
		}
	}
	if turns != 1 || b.p.held.Len() != 1 {
		t.Errorf("gateway B sent on %d turns and holds %d, want trace 1's turn sent and trace 2's held", turns, b.p.held.Len())
	}
}

// TestHandoverValueRoundTrip: a launch and its decided turns come back as
// they were written.
func TestHandoverValueRoundTrip(t *testing.T) {
	l := &launches.Launch{Key: launches.Key{Installation: "i/1", Instance: "l\"2"}, Runs: 1,
		Turns: []launches.KeptTurn{{PastTurn: verdict.PastTurn{Index: 1}, Trace: traceID(1)}, {PastTurn: verdict.PastTurn{Index: 2}, Trace: traceID(2)}}}
	b := encodeHandover(l, func(id pcommon.TraceID) bool { return id == traceID(2) })
	got, ids, err := decodeHandover(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != l.Key || len(got.Turns) != 2 || len(ids) != 1 || ids[0] != traceID(2) {
		t.Errorf("read back %+v and %v", got, ids)
	}
	if _, _, err := decodeHandover(append([]byte{9}, b[1:]...)); err == nil {
		t.Error("a value of an unknown version was read")
	}
}

// FuzzDecodeHandover: whatever the changelog holds, reading it returns an
// error or a launch, never panics.
func FuzzDecodeHandover(f *testing.F) {
	l := &launches.Launch{Key: launches.Key{Installation: "i", Instance: "l"}, Runs: 1,
		Turns: []launches.KeptTurn{{PastTurn: verdict.PastTurn{Index: 1}, Trace: traceID(1)}}}
	f.Add(encodeHandover(l, func(pcommon.TraceID) bool { return true }))
	f.Add([]byte{1, 200, 1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		l, ids, err := decodeHandover(b)
		if err == nil && (l == nil || len(ids) > launches.KeptTurns) {
			t.Fatalf("read %v and %d IDs without an error", l, len(ids))
		}
	})
}

// BenchmarkHandover is what the changelog costs a decide stage: whole
// joined turns, each its own record of partition 0 and the first turn of
// a launch of its own (so each commit writes one launch), decided with
// storage alone and with the changelog beside it, on an in-process
// cluster over loopback. A record waits for its commit either way; with
// the changelog the commit waits for every in-sync replica's
// acknowledgement too. The join's runs send the same turns on, whole,
// as a join stage does.
func BenchmarkHandover(b *testing.B) {
	for _, run := range []struct {
		name, emit string
		withLog    bool
	}{
		{"storage", EmitVerdicts, false},
		{"storage+changelog", EmitVerdicts, true},
		{"join/storage", EmitTurns, false},
		{"join/storage+changelog", EmitTurns, true},
	} {
		withLog := run.withLog
		b.Run(run.name, func(b *testing.B) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "launches"))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			host := storagetest.FileStorage(b, b.TempDir())
			cfg := createDefaultConfig().(*Config)
			cfg.Emit, cfg.Storage = run.emit, &host.ID
			if withLog {
				cfg.Changelog = &changelog.Config{Brokers: c.ListenAddrs(), Topic: "launches"}
			}
			h := newHarness(b, cfg)
			if err := h.p.Start(context.Background(), host); err != nil {
				b.Fatal(err)
			}
			defer func() {
				_ = h.p.Shutdown(context.Background())
				_ = host.Ext.Shutdown(context.Background())
			}()
			i := 0
			for b.Loop() {
				n := byte(i)
				launch := "launch-" + strconv.Itoa(i)
				td := sdk(n, plainUnit(launch), plainTurn(launch, 1, 0, 1))
				sdk(n, take("t1", 0.3, nil)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
				// Each its own trace: the byte n repeats every 256 turns.
				id := traceID(n)
				id[8], id[9], id[10] = byte(i>>8), byte(i>>16), byte(i>>24)
				setTrace(td, id)
				ctx := client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{
					metaKafkaPartition: {"0"}, metaKafkaOffset: {strconv.Itoa(i)},
				})})
				if err := h.p.ConsumeTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
				h.sink.Reset()
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/turn")
		})
	}
}

// FuzzChangelogKey: a launch's key reads back as the launch, a held or a
// sent trace's as the trace, whatever their IDs hold, and no key, written
// by anyone, makes the reader panic.
func FuzzChangelogKey(f *testing.F) {
	f.Add("install-1", "launch-1", `l"a"b`)
	f.Add(`quo"te`, "\x00\n", "t00")
	f.Add("", "", "t0102030405060708090a0b0c0d0e0f10")
	f.Add("", "", "s0102030405060708090a0b0c0d0e0f10")
	f.Fuzz(func(t *testing.T, installation, instance, raw string) {
		k := launches.Key{Installation: installation, Instance: instance}
		if _, got, kind := parseChangelogKey(launchChangelogKey(k)); kind != keyIsLaunch || got != k {
			t.Fatalf("launch %+v read back as %+v (kind %d)", k, got, kind)
		}
		id := traceID(byte(len(raw)))
		if got, _, kind := parseChangelogKey(traceChangelogKey(id)); kind != keyIsHeld || got != id {
			t.Fatalf("held trace %s read back as %s (kind %d)", id, got, kind)
		}
		if got, _, kind := parseChangelogKey(sentChangelogKey(id)); kind != keyIsSent || got != id {
			t.Fatalf("sent trace %s read back as %s (kind %d)", id, got, kind)
		}
		_, _, _ = parseChangelogKey(raw)
	})
}

// TestAQuietPartitionIsReadBack: join gateway A holds a phone's half from
// partition 2 of the spans topic, waiting for its take, and is killed;
// the partition moves to gateway B and no record of it comes again (the
// last turn of a trip). Gateway B's heartbeat reaches the partition's
// owner, itself: at that record it reads the changelog back, holds the
// half again, and sends the turn on at its wait, forced. Without the
// heartbeat B never learns the partition held anything.
func TestAQuietPartitionIsReadBack(t *testing.T) {
	cl := changelogCluster(t, "join", "spans")
	a := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, new(consumertest.TracesSink))
	fromRecord(a, 2, produceInput(t, cl, 2), sdk(1, underrun(1, 1, 0.9, nil), turn(nil)))
	if a.p.held.Len() != 1 {
		t.Fatalf("gateway A holds %d traces, want the phone half waiting for its take", a.p.held.Len())
	}
	// A is killed: the group committed its record; B reads on from offset 1.
	joined := new(consumertest.TracesSink)
	b := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, joined)
	if err := b.p.heartbeat(context.Background()); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	records := readInput(t, cl, 2, 1)
	if len(records) != 1 {
		t.Fatalf("partition 2 of the input holds %d records past offset 1, want B's heartbeat", len(records))
	}
	for _, off := range records {
		fromRecord(b, 2, off, ptrace.NewTraces())
	}
	b.now = b.now.Add(b.p.cfg.Wait)
	b.p.sweep(context.Background())
	b.drainSink()
	turns := 0
	for _, td := range joined.AllTraces() {
		for _, s := range verdict.Spans(td) {
			if s.Name() == "voice.turn" {
				turns++
			}
		}
	}
	if turns != 1 {
		t.Errorf("gateway B sent on %d turns, want the half A held, forced at its wait", turns)
	}
	if n := b.counter("otelcol_processor_verdict_takeovers")[""]; n != 1 {
		t.Errorf("gateway B counted %d takeovers, want 1", n)
	}
}

// produceInput writes a record on partition part of cl's input topic, for
// the offset a test hands its traces at, and returns that offset.
func produceInput(t *testing.T, cl changelog.Config, part int32) int64 {
	t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(cl.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.ProduceSync(context.Background(), &kgo.Record{Topic: cl.Input, Partition: part, Value: []byte("a record")}).First()
	if err != nil {
		t.Fatal(err)
	}
	return r.Offset
}

// readInput reads partition part of cl's input topic from offset from to
// its end, and returns the records' offsets.
func readInput(t *testing.T, cl changelog.Config, part int32, from int64) []int64 {
	t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(cl.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cl.Input: {part: kgo.NewOffset().At(from)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var offs []int64
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		fs := c.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			offs = append(offs, r.Offset)
			n++
		})
		if n == 0 {
			return offs
		}
	}
}

// BenchmarkSweepLook is what a sweep adds on a gateway reading Kafka
// (decision 0318): a sweep over 10,000 held phone halves on 6 partitions,
// none of them due (the common sweep), with the scan for the partitions
// of the traces it would decide and without, and the look at the
// changelog's ends when some are.
func BenchmarkSweepLook(b *testing.B) {
	h := handoverHarnessOf(b, b.TempDir(), changelogCluster(b, "launches"), EmitTurns, nil)
	const held = 10000
	for i := range held {
		td := sdk(byte(i), underrun(1, 1, 0.4, nil))
		id := traceID(byte(i))
		id[8], id[9] = byte(i>>8), byte(i>>16)
		setTrace(td, id)
		fromRecord(h, int32(i%6), int64(i/6), td)
	}
	if n := h.p.held.Len(); n != held {
		b.Fatalf("%d held, want %d", n, held)
	}
	for _, look := range []bool{true, false} {
		name := "sweep"
		if look {
			name = "sweep+scan"
		}
		b.Run(name, func(b *testing.B) {
			if !look {
				defer func(hv *handover) { h.p.handover = hv }(h.p.handover)
				h.p.handover = nil // the sweep of a gateway not on Kafka
			}
			for b.Loop() {
				h.p.sweep(context.Background())
			}
			if n := h.p.held.Len(); n != held {
				b.Fatalf("%d held after the sweeps, want %d", n, held)
			}
		})
	}
	b.Run("look", func(b *testing.B) {
		for b.Loop() {
			h.p.letGoOfMovedPartitions(context.Background(), []int32{0, 1, 2, 3, 4, 5})
		}
	})
}

// TestASentTurnIsNotSentAgainAfterItsPartitionMoved: join gateway A reads
// both halves of a turn from partition 2 and sends the turn on; it dies
// before its group committed the marks, so gateway B, taking the
// partition over, reads both halves again. The changelog says A sent the
// trace on: B sends nothing and holds nothing (decision 0320). After
// max_age B takes the mark out of the changelog.
func TestASentTurnIsNotSentAgainAfterItsPartitionMoved(t *testing.T) {
	cl := changelogCluster(t, "join")
	fromA, fromB := new(consumertest.TracesSink), new(consumertest.TracesSink)
	a := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, fromA)
	halves := func() (phone, engine ptrace.Traces) {
		return sdk(1, underrun(1, 1, 0.9, nil), turn(nil)), sdk(1, take("t1", 2.0, nil))
	}
	phone, engine := halves()
	fromRecord(a, 2, 0, phone)
	fromRecord(a, 2, 1, engine)
	if n := len(fromA.AllTraces()); n != 1 {
		t.Fatalf("gateway A sent on %d deliveries, want the joined turn", n)
	}

	b := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, fromB)
	phone, engine = halves()
	fromRecord(b, 2, 0, phone)
	fromRecord(b, 2, 1, engine)
	if n := len(fromB.AllTraces()); n != 0 {
		t.Errorf("gateway B sent the turn on again: %d deliveries", n)
	}
	if n := b.p.held.Len(); n != 0 {
		t.Errorf("gateway B holds %d traces, want none", n)
	}
	if got := b.counter("otelcol_processor_verdict_dropped")[dropDecided]; got == 0 {
		t.Errorf("the halves read again were not counted as dropped (%s)", dropDecided)
	}

	key := sentChangelogKey(traceID(1))
	marked := func() bool {
		values, err := b.p.handover.log.Read(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		_, ok := values[key]
		return ok
	}
	if !marked() {
		t.Fatal("the changelog does not say the trace was sent on")
	}
	b.advance(b.p.cfg.MaxAge)
	for deadline := time.Now().Add(10 * time.Second); marked(); {
		if time.Now().After(deadline) {
			t.Fatal("the mark is still in the changelog after max_age")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestALostPartitionsSentMarksAreNotWritten: join gateway A joins trace
// 1 from partition 2 and sends it on, holding nothing after; gateway B
// takes partition 2 over and holds trace 2's half. A's look finds the
// partition moved by its sent mark alone and forgets the mark: max_age
// later A writes nothing to partition 2, and B's look keeps what it holds
// (before, A's late tombstone read to B as another gateway taking the
// partition over, and B let trace 2 go).
func TestALostPartitionsSentMarksAreNotWritten(t *testing.T) {
	cl := changelogCluster(t, "join")
	fromA, fromB := new(consumertest.TracesSink), new(consumertest.TracesSink)
	a := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, fromA)
	fromRecord(a, 2, 0, sdk(1, underrun(1, 1, 0.9, nil), turn(nil)))
	fromRecord(a, 2, 1, sdk(1, take("t1", 2.0, nil)))
	if a.p.held.Len() != 0 || len(fromA.AllTraces()) != 1 {
		t.Fatalf("gateway A holds %d and sent on %d deliveries, want the turn sent on", a.p.held.Len(), len(fromA.AllTraces()))
	}

	b := handoverHarnessOf(t, t.TempDir(), cl, EmitTurns, fromB)
	fromRecord(b, 2, 2, sdk(2, underrun(1, 1, 0.9, nil), turn(nil)))
	if b.p.held.Len() != 1 {
		t.Fatalf("gateway B holds %d traces, want trace 2's half", b.p.held.Len())
	}
	a.p.letGoOfMovedHeld(context.Background())
	a.advance(a.p.cfg.MaxAge)
	if err := a.p.cycles.await(context.Background(), a.p.cycles.ride(nil)); err != nil {
		t.Fatal(err)
	}
	b.p.letGoOfMovedHeld(context.Background())
	if b.p.held.Len() != 1 {
		t.Errorf("gateway B let trace 2 go (dropped as moved: %d): gateway A wrote to the partition it lost",
			b.counter("otelcol_processor_verdict_dropped")["moved"])
	}
}
