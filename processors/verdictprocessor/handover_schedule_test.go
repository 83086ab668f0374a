package verdictprocessor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor/internal/changelog"
	"github.com/percause/percause/processors/verdictprocessor/internal/pending"
	"github.com/percause/percause/verdict"
)

var (
	handoverSchedules = flag.Int("handover-schedules", 40, "how many seeded handover schedules TestHandoverSchedules explores")
	handoverSeed      = flag.Uint64("handover-seed", 0, "replay this handover schedule alone (0: explore)")
)

// TestHandoverSchedules explores seeded schedules of a decide stage on
// Kafka (docs/simulation.md, "The handover's schedules"): launches' turns
// on the partitions of a turns topic, decide gateways that own them,
// each with storage of its own and the launches' changelog on an
// in-process cluster. Each seed also runs a join stage: each turn's
// phone and engine halves on the partition of its trace, join gateways
// holding a half until the other comes. Each step the seed chooses one of: a record handed
// to its partition's owner; the owner's next poll starting again from the
// group's committed offset (records read again); a partition moved to
// another gateway that lives (a rebalance); a gateway killed or stopped
// gracefully, its partitions moved; a gateway added, or one that stopped
// or was killed started again on its own storage, taking a partition;
// time passing with a sweep; a gateway's downstream refusing its next
// deliveries. Then the recovery: the refusals stop and every record is
// handed over until each is accepted. After it, every turn has exactly one
// verdict across the gateways, living or dead, and each names the cause
// its launch's history makes: the third turn pool, the fourth state. In
// the join stage every turn is sent on exactly once, whole.
func TestHandoverSchedules(t *testing.T) {
	if *handoverSeed != 0 {
		for _, shape := range []scheduleShape{shapeLoseFirst, shapeHalves} {
			st := runHandoverSchedule(t, *handoverSeed, shape)
			t.Logf("%s: %s", shape, st)
		}
		return
	}
	for _, k := range keptHandover {
		runHandoverSchedule(t, k.seed, k.shape)
		if t.Failed() {
			t.Fatalf("kept schedule %d (%s, %s) failed", k.seed, k.shape, k.found)
		}
	}
	n := *handoverSchedules
	if testing.Short() {
		n = min(n, 8)
	}
	for _, shape := range []scheduleShape{shapeLoseFirst, shapeHalves} {
		var total handoverStats
		began := time.Now()
		for seed := uint64(1); seed <= uint64(n); seed++ {
			st := runHandoverSchedule(t, seed, shape)
			if t.Failed() {
				t.Fatalf("seed %d (%s) failed; replay: go test ./processors/verdictprocessor -run TestHandoverSchedules -handover-seed %d -v", seed, shape, seed)
			}
			total.add(st)
		}
		t.Logf("%d handover schedules (%s) held in %s: %s", n, shape, time.Since(began).Round(time.Millisecond), total)
		if total.moves == 0 || total.kills == 0 || total.rereads == 0 || total.restarts == 0 {
			t.Fatalf("%s: no partition moved (%d), no gateway was killed (%d), nothing was read again (%d) or no gateway started again on its storage (%d): the schedules proved nothing", shape, total.moves, total.kills, total.rereads, total.restarts)
		}
	}
}

// scheduleShape is what a schedule's records are and which stage reads
// them.
type scheduleShape int

const (
	// shapeWhole: a decide stage's whole turns, every launch's first turn
	// among them (the schedules kept before launches lost first turns).
	shapeWhole scheduleShape = iota
	// shapeLoseFirst: whole turns; a third of the launches lost their
	// first turn on the way.
	shapeLoseFirst
	// shapeHalves: a join stage; each turn's phone and engine halves,
	// either first, on the partition of its trace.
	shapeHalves
)

func (s scheduleShape) String() string {
	return [...]string{"decide, whole turns", "decide, first turns lost", "join, halves"}[s]
}

// keptHandover are schedules that once failed, replayed in every run,
// each in the shape it had when it was kept.
var keptHandover = []struct {
	seed  uint64
	found string
	shape scheduleShape
}{
	{22, "a launch read back at a takeover lost to the copy the gateway kept from before the partition moved away, when both were last seen at the same time: turns 3 and 4 read none", shapeWhole},
	{24, "a partition came back to a gateway at the offset after its last, from an owner that accepted a record and never committed its mark: no takeover, the record decided twice", shapeWhole},
	{32, "a gateway killed while holding refused verdicts, started again on its storage, sent them again, though the partitions' new owners had decided their turns", shapeWhole},
	{301, "a verdict refused before the partition moved away was sent again after it came back, though the owner in between had decided its turn", shapeWhole},
	{46, "a sweep before the gateway's look (once a second) decided a turn whose partition another gateway had taken over and decided: two verdicts (docs/decisions/0319)", shapeLoseFirst},
	{6, "a join's half read again after its partition moved, its trace sent on by the last owner: held alone until max_age (decision 0320)", shapeHalves},
	{103, "both halves of a turn read again after its partition moved, the turn sent on by the last owner: sent on twice (decision 0320)", shapeHalves},
	{19, "a partition moved after its last record while its owner held a launch's turns (the first turn lost, the rest waiting): no record came, nobody read the changelog back, turn 3 never got a verdict (docs/decisions/0318)", shapeLoseFirst},
}

type handoverStats struct {
	steps, records, moves, kills, stops, adds, restarts, rereads, refused, takeovers, heartbeats int
}

func (s *handoverStats) add(o handoverStats) {
	s.steps += o.steps
	s.records += o.records
	s.moves += o.moves
	s.kills += o.kills
	s.stops += o.stops
	s.adds += o.adds
	s.restarts += o.restarts
	s.rereads += o.rereads
	s.refused += o.refused
	s.takeovers += o.takeovers
	s.heartbeats += o.heartbeats
}

func (s handoverStats) String() string {
	return fmt.Sprintf("%d steps, %d records handed in (%d heartbeats), %d partitions moved, %d gateways killed, %d stopped, %d added, %d started again on their storage, %d partitions given back from the committed offset, %d deliveries refused, %d takeovers",
		s.steps, s.records, s.heartbeats, s.moves, s.kills, s.stops, s.adds, s.restarts, s.rereads, s.refused, s.takeovers)
}

// turnsPartition is one partition of the turns topic: its records in
// order, the group's committed offset, and its owner's next offset.
type turnsPartition struct {
	records   []launchRecord
	committed int
	position  int
	owner     int
}

// launchRecord is turn turn (0 to 3, as launchTurns) of launch launch,
// whole or one of its halves, or a gateway's heartbeat (launch -1), a
// record of no data.
type launchRecord struct {
	launch, turn int
	half         recordHalf
}

// recordHalf is what of a turn a record carries.
type recordHalf int

const (
	wholeTurn  recordHalf = iota // as the join sends it on
	phoneHalf                    // the phone's: its unit underran, naming the engine's take
	engineHalf                   // the engine's: the take
)

var heartbeatRecord = launchRecord{launch: -1}

func (r launchRecord) heartbeat() bool { return r.launch < 0 }

func (r launchRecord) String() string {
	if r.heartbeat() {
		return "a heartbeat"
	}
	return fmt.Sprintf("launch %d turn %d", r.launch, r.turn+1) + [...]string{"", " (the phone's half)", " (the engine's half)"}[r.half]
}

func (r launchRecord) trace() byte { return byte(10 + 4*r.launch + r.turn) }

func (r launchRecord) traces() ptrace.Traces {
	if r.heartbeat() {
		return ptrace.NewTraces()
	}
	switch r.half {
	case phoneHalf:
		return sdk(r.trace(), underrun(1, 1, 0.9, nil), turn(nil))
	case engineHalf:
		return sdk(r.trace(), take("t1", 2.0, nil))
	}
	lt := launchTurns[r.turn]
	name := "launch-" + strconv.Itoa(r.launch)
	td := sdk(r.trace(), plainUnit(name), plainTurn(name, lt.index, lt.pool, lt.players))
	sdk(r.trace(), take("t1", 0.3, nil)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	return td
}

// gateway is one decide gateway: its processor, its storage and what it
// emitted, kept after it dies.
type gateway struct {
	name      string
	dir       string // its storage's folder
	h         *harness
	host      *storageHost
	alive     bool
	closed    bool // its storage let go (stopped, or killed and started again)
	restarted bool // started again as another gateway
	refuse    int  // its downstream refuses this many deliveries more
	// sent is what a join gateway sent on: each trace, and whether it was
	// whole (its turn, its unit and its take), once a delivery.
	sent []sentTurn
}

type sentTurn struct {
	id    pcommon.TraceID
	whole bool
}

var errScheduleRefuses = errors.New("the schedule's downstream refuses")

type handoverSchedule struct {
	t   *testing.T
	rng *rand.Rand
	// more chooses what the schedules came to explore after some were
	// kept (the heartbeats, the launches that lost their first turn), so a
	// kept seed's steps stay the ones that found its hole.
	more     *rand.Rand
	shape    scheduleShape
	lost     map[int]bool // the launches whose first turn never came
	cl       changelog.Config
	parts    []*turnsPartition
	gateways []*gateway
	journal  []string
	st       handoverStats
}

// runHandoverSchedule runs schedule seed in shape.
func runHandoverSchedule(t *testing.T, seed uint64, shape scheduleShape) handoverStats {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x4a11))
	nparts := 2 + rng.IntN(3)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(nparts), "launches", "turns"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := &handoverSchedule{t: t, rng: rng, more: rand.New(rand.NewPCG(seed, 0x5b22)), shape: shape, lost: map[int]bool{},
		cl: changelog.Config{Brokers: c.ListenAddrs(), Topic: "launches", Input: "turns"}}
	defer s.stopAll()

	// Launches without history, each on the partition its key hashes to,
	// their turns in order, interleaved with the other launches'. A third
	// of them lost their first turn on the way: their second is held after
	// its record is accepted, waiting history_wait for the first, which
	// never comes; if its partition moves then and no record follows, only
	// a heartbeat makes the new owner read it back.
	launches := 2 + rng.IntN(5)
	for range nparts {
		s.parts = append(s.parts, &turnsPartition{})
	}
	next := make([]int, launches)
	for left := 4 * launches; left > 0; left-- {
		l := rng.IntN(launches)
		for next[l] == 4 {
			l = (l + 1) % launches
		}
		p := s.parts[l%nparts]
		p.records = append(p.records, launchRecord{launch: l, turn: next[l]})
		next[l]++
	}
	switch shape {
	case shapeLoseFirst:
		for l := range launches {
			s.lost[l] = s.more.IntN(3) == 0
		}
		for _, p := range s.parts {
			p.records = slices.DeleteFunc(p.records, func(r launchRecord) bool { return r.turn == 0 && s.lost[r.launch] })
		}
	case shapeHalves:
		s.splitIntoHalves()
	}
	for range 1 + rng.IntN(3) {
		s.addGateway("", "")
	}
	for i, p := range s.parts {
		p.owner = i % len(s.gateways)
	}
	s.event("seed %d (%s): %d launches on %d partitions, %d gateways", seed, shape, launches, nparts, len(s.gateways))

	steps := 20 + rng.IntN(60)
	for n := range steps {
		s.step(n)
		if t.Failed() {
			s.fail()
			return s.st
		}
	}
	s.st.steps = steps
	s.recover()
	s.check()
	if t.Failed() {
		s.fail()
	}
	return s.st
}

// splitIntoHalves makes the records a join stage's: each turn its own
// trace, its phone's and its engine's halves on the partition its trace
// hashes to, either first, interleaved with the other turns' halves.
func (s *handoverSchedule) splitIntoHalves() {
	var turns []launchRecord
	for _, p := range s.parts {
		turns = append(turns, p.records...)
		p.records = nil
	}
	halves := make([]launchRecord, 0, 2*len(turns))
	for _, r := range turns {
		for _, h := range []recordHalf{phoneHalf, engineHalf} {
			r.half = h
			halves = append(halves, r)
		}
	}
	s.more.Shuffle(len(halves), func(i, j int) { halves[i], halves[j] = halves[j], halves[i] })
	for _, r := range halves {
		p := s.parts[int(r.trace())%len(s.parts)]
		p.records = append(p.records, r)
	}
}

func (s *handoverSchedule) event(format string, args ...any) {
	s.journal = append(s.journal, fmt.Sprintf(format, args...))
}

func (s *handoverSchedule) fail() {
	s.t.Log("the schedule:\n  " + strings.Join(s.journal, "\n  "))
}

// addGateway starts a gateway with storage of its own and the sweep left
// to the schedule.
func (s *handoverSchedule) addGateway(name, dir string) *gateway {
	if dir == "" {
		dir = s.t.TempDir()
	}
	if name == "" {
		name = "g" + strconv.Itoa(len(s.gateways))
	}
	host := newStorageHost(s.t, dir)
	cfg := createDefaultConfig().(*Config)
	cfg.Emit, cfg.Storage = EmitVerdicts, &host.ID
	if s.shape == shapeHalves {
		// A join: a phone's half waits for its take however long the
		// schedule runs, so every turn is sent on whole or not at all.
		cfg.Emit, cfg.Wait, cfg.MaxAge = EmitTurns, time.Hour, 2*time.Hour
	}
	cl := s.cl
	cfg.Changelog = &cl
	if err := cfg.Validate(); err != nil {
		s.t.Fatal(err)
	}
	g := &gateway{name: name, dir: dir, host: host, alive: true}
	g.h = newHarness(s.t, cfg)
	sink := g.h.sink
	g.h.p.next, _ = consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		if g.refuse > 0 {
			g.refuse--
			s.st.refused++
			return errScheduleRefuses
		}
		if s.shape == shapeHalves {
			g.sent = append(g.sent, sentTurns(td)...)
		}
		return sink.ConsumeTraces(ctx, td)
	})
	if len(s.gateways) > 0 {
		g.h.now = s.gateways[0].h.now
	}
	// The schedule sweeps when it chooses to, and checks ownership with
	// each sweep, as the background loop does once a second.
	g.h.p.manual = true
	if err := g.h.p.Start(context.Background(), host); err != nil {
		s.t.Fatal(err)
	}
	s.gateways = append(s.gateways, g)
	return g
}

func (s *handoverSchedule) living() []int {
	var out []int
	for i, g := range s.gateways {
		if g.alive {
			out = append(out, i)
		}
	}
	return out
}

func (s *handoverSchedule) step(n int) {
	rng := s.rng
	switch k := rng.IntN(100); {
	case k < 55:
		p := rng.IntN(len(s.parts))
		if s.parts[p].position < len(s.parts[p].records) {
			s.deliver(n, p)
		}
	case k < 63:
		p := s.parts[rng.IntN(len(s.parts))]
		if p.position > p.committed {
			s.event("step %d: %s is given the partition back from the committed offset %d, was at %d (its session lapsed)", n, s.gateways[p.owner].name, p.committed, p.position)
			p.position = p.committed
			s.st.rereads++
		}
	case k < 73:
		live := s.living()
		if len(live) < 2 {
			return
		}
		pi := rng.IntN(len(s.parts))
		to := live[rng.IntN(len(live))]
		if to == s.parts[pi].owner {
			return
		}
		s.move(n, pi, to, "a rebalance")
	case k < 78:
		live := s.living()
		if len(live) < 2 {
			return
		}
		s.kill(n, live[rng.IntN(len(live))])
	case k < 81:
		live := s.living()
		if len(live) < 2 {
			return
		}
		s.stopGracefully(n, live[rng.IntN(len(live))])
	case k < 85:
		if len(s.living()) >= 4 {
			return
		}
		// A new gateway, or one that stopped or was killed started again
		// on its own storage: what it held then is restored.
		var dead []*gateway
		for _, g := range s.gateways {
			if !g.alive && !g.restarted {
				dead = append(dead, g)
			}
		}
		var g *gateway
		if len(dead) > 0 && rng.IntN(2) == 0 {
			old := dead[rng.IntN(len(dead))]
			old.restarted = true
			if !old.closed {
				// The killed process's files and connections go with it;
				// nothing more is written.
				_ = old.h.p.state.Close(context.Background())
				old.h.p.handover.log.Close()
				_ = old.host.Ext.Shutdown(context.Background())
				old.closed = true
			}
			g = s.addGateway(old.name+"'", old.dir)
			s.st.restarts++
			s.event("step %d: %s starts again on %s's storage", n, g.name, old.name)
		} else {
			g = s.addGateway("", "")
			s.st.adds++
			s.event("step %d: %s is added", n, g.name)
		}
		s.move(n, rng.IntN(len(s.parts)), len(s.gateways)-1, "a gateway added")
	case k < 95:
		d := time.Duration(200+rng.IntN(9800)) * time.Millisecond
		// A gateway looks which of its partitions moved once a second, and
		// sweeps more often: one time in two the sweep comes first.
		look := s.more.IntN(2) == 0
		s.event("step %d: %s pass; a sweep (the looks first: %v)", n, d, look)
		s.sweep(d, look)
		// Time passing, a living gateway may write its heartbeats (chosen
		// by the second source: the kept schedules' steps stay theirs).
		if live := s.living(); s.more.IntN(3) == 0 {
			s.heartbeat(n, s.gateways[live[s.more.IntN(len(live))]])
		}
	default:
		live := s.living()
		g := s.gateways[live[rng.IntN(len(live))]]
		g.refuse += 1 + rng.IntN(3)
		s.event("step %d: %s's downstream refuses its next %d deliveries", n, g.name, g.refuse)
	}
}

// deliver hands partition p's next record to its owner, as the Kafka
// receiver does: marked once accepted, the mark committed with the poll
// (most of the time: a poll's commit may not have happened yet).
func (s *handoverSchedule) deliver(n, pi int) {
	p := s.parts[pi]
	r := p.records[p.position]
	g := s.gateways[p.owner]
	ctx := client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{
		metaKafkaPartition: {strconv.Itoa(pi)}, metaKafkaOffset: {strconv.Itoa(p.position)},
	})})
	takeovers := g.h.counter("otelcol_processor_verdict_takeovers")[""]
	err := g.h.p.ConsumeTraces(ctx, r.traces())
	g.h.drainSink()
	s.st.records++
	what := r.String()
	if r.heartbeat() {
		s.st.heartbeats++
	}
	if more := g.h.counter("otelcol_processor_verdict_takeovers")[""] - takeovers; more > 0 {
		s.st.takeovers += int(more)
		s.event("step %d: %s takes partition %d over", n, g.name, pi)
	}
	if err != nil {
		s.event("step %d: %s refused %s (partition %d offset %d): %v", n, g.name, what, pi, p.position, err)
		return
	}
	s.event("step %d: %s accepted %s (partition %d offset %d)", n, g.name, what, pi, p.position)
	p.position++
	if s.rng.IntN(5) != 0 {
		p.committed = p.position
	}
}

// heartbeat has gateway g write its heartbeats: a record of no data on
// each partition, which its owner reads as any other.
func (s *handoverSchedule) heartbeat(n int, g *gateway) {
	if err := g.h.p.heartbeat(context.Background()); err != nil {
		s.t.Errorf("step %d: %s's heartbeat: %v", n, g.name, err)
		return
	}
	for _, p := range s.parts {
		p.records = append(p.records, heartbeatRecord)
	}
	s.event("step %d: %s writes a heartbeat on every partition", n, g.name)
}

// move gives partition pi to gateway to; the next poll starts from the
// group's committed offset.
func (s *handoverSchedule) move(n, pi, to int, why string) {
	p := s.parts[pi]
	s.event("step %d: partition %d moves from %s to %s (%s), from offset %d", n, pi, s.gateways[p.owner].name, s.gateways[to].name, why, p.committed)
	p.owner, p.position = to, p.committed
	s.st.moves++
}

// kill ends gateway i as kill -9 does: nothing more of it runs, its
// storage is not read again (the next owner has its own), and its
// partitions move once the group sees it gone.
func (s *handoverSchedule) kill(n, i int) {
	g := s.gateways[i]
	g.alive = false
	s.st.kills++
	s.event("step %d: %s is killed", n, g.name)
	s.reassign(n, i, "a gateway killed")
}

// stopGracefully stops gateway i (its last cycle and commit run, its
// marks are committed) and moves its partitions.
func (s *handoverSchedule) stopGracefully(n, i int) {
	g := s.gateways[i]
	if err := g.h.p.Shutdown(context.Background()); err != nil {
		s.t.Errorf("%s's graceful stop: %v", g.name, err)
	}
	g.h.drainSink()
	_ = g.host.Ext.Shutdown(context.Background())
	g.alive, g.closed = false, true
	s.st.stops++
	s.event("step %d: %s stops gracefully", n, g.name)
	for _, p := range s.parts {
		if p.owner == i {
			p.committed = p.position
		}
	}
	s.reassign(n, i, "a gateway stopped")
}

func (s *handoverSchedule) reassign(n, from int, why string) {
	live := s.living()
	for pi, p := range s.parts {
		if p.owner == from {
			s.move(n, pi, live[s.rng.IntN(len(live))], why)
		}
	}
}

// sweep lets d pass on every living gateway's clock; each checks what it
// still owns when look says so, then sweeps.
func (s *handoverSchedule) sweep(d time.Duration, look bool) {
	for _, g := range s.gateways {
		g.h.now = g.h.now.Add(d)
	}
	for _, i := range s.living() {
		g := s.gateways[i]
		if look {
			g.h.p.letGoOfMovedHeld(context.Background())
		}
		g.h.p.sweep(context.Background())
		g.h.drainSink()
	}
}

// recover ends the schedule: refusals stop, and every record is handed
// to its partition's owner until it is accepted, with sweeps between.
// Each round begins with a heartbeat, as a living gateway writes one
// every few seconds: what a partition held when it moved, with no record
// of it left, is read back by its owner then.
func (s *handoverSchedule) recover() {
	s.event("recovery: the refusals stop; every record is handed over until accepted")
	for _, g := range s.gateways {
		g.refuse = 0
	}
	for round := 0; ; round++ {
		s.heartbeat(-1, s.gateways[s.living()[0]])
		left := 0
		for pi, p := range s.parts {
			for p.position < len(p.records) {
				if !p.records[p.position].heartbeat() {
					left++
				}
				before := p.position
				s.deliver(-1, pi)
				if p.position == before {
					break
				}
			}
		}
		s.sweep(10*time.Second, true)
		held := 0
		for _, i := range s.living() {
			held += s.gateways[i].h.p.held.Len()
		}
		if left == 0 && held == 0 {
			return
		}
		if round == 30 {
			var which []string
			for _, i := range s.living() {
				s.gateways[i].h.p.held.Each(func(e *pending.Entry) {
					which = append(which, fmt.Sprintf("%s holds %s (its turn: %v, refusals %d)", s.gateways[i].name, e.ID, e.Turn != nil, e.Delivery.Refusals))
				})
			}
			s.t.Errorf("after %d rounds of the recovery, %d records are still refused and %d traces held: %s", round, left, held, strings.Join(which, "; "))
			return
		}
	}
}

// check holds the invariants over what every gateway emitted.
func (s *handoverSchedule) check() {
	if s.shape == shapeHalves {
		s.checkJoined()
		return
	}
	got := map[pcommon.TraceID][]string{}
	for _, g := range s.gateways {
		for _, v := range g.h.verdicts() {
			got[v.TraceID()] = append(got[v.TraceID()], g.name+": "+verdict.FromSpan(pcommon.NewResource(), v).Cause)
		}
	}
	for _, p := range s.parts {
		for _, r := range p.records {
			if r.heartbeat() {
				continue
			}
			id := traceID(r.trace())
			vs := got[id]
			delete(got, id)
			want := launchTurns[r.turn].cause
			if s.lost[r.launch] && r.turn == 3 {
				// Its players rose on the two turns before it that came,
				// not three: the state rule does not fire.
				want = semconv.CauseNone
			}
			switch {
			case len(vs) != 1:
				s.t.Errorf("launch %d turn %d has %d verdicts, want 1: %v", r.launch, r.turn+1, len(vs), vs)
			case !strings.HasSuffix(vs[0], ": "+want):
				s.t.Errorf("launch %d turn %d: %s, want %s", r.launch, r.turn+1, vs[0], want)
			}
		}
	}
	for id, vs := range got {
		s.t.Errorf("a verdict for trace %s, which no turn has: %v", id, vs)
	}
}

// stopAll stops the gateways still running and lets go of the dead ones'
// storage and changelog clients.
func (s *handoverSchedule) stopAll() {
	for _, g := range s.gateways {
		if g.alive {
			_ = g.h.p.Shutdown(context.Background())
		} else if g.h.p.handover != nil && !g.closed {
			g.h.p.handover.log.Close()
		}
		if !g.closed {
			_ = g.host.Ext.Shutdown(context.Background())
		}
	}
}

// sentTurns is each trace of a delivery a join sent on, and whether it
// was whole: its turn, its unit and its take.
func sentTurns(td ptrace.Traces) []sentTurn {
	names := map[pcommon.TraceID]map[string]bool{}
	var order []pcommon.TraceID
	for _, span := range verdict.Spans(td) {
		id := span.TraceID()
		if names[id] == nil {
			names[id] = map[string]bool{}
			order = append(order, id)
		}
		names[id][span.Name()] = true
	}
	out := make([]sentTurn, len(order))
	for i, id := range order {
		n := names[id]
		out[i] = sentTurn{id: id, whole: n[semconv.SpanVoiceTurn] && n[semconv.SpanVoiceUnit] && n[semconv.SpanTTSTake]}
	}
	return out
}

// checkJoined holds the join stage's invariants: every turn sent on
// exactly once across the gateways, living or dead, and whole.
func (s *handoverSchedule) checkJoined() {
	got := map[pcommon.TraceID][]string{}
	for _, g := range s.gateways {
		for _, st := range g.sent {
			what := g.name + ": whole"
			if !st.whole {
				what = g.name + ": not whole"
			}
			got[st.id] = append(got[st.id], what)
		}
	}
	for _, p := range s.parts {
		for _, r := range p.records {
			if r.half != phoneHalf {
				continue
			}
			id := traceID(r.trace())
			vs := got[id]
			delete(got, id)
			switch {
			case len(vs) != 1:
				s.t.Errorf("launch %d turn %d was sent on %d times, want 1: %v", r.launch, r.turn+1, len(vs), vs)
			case !strings.HasSuffix(vs[0], ": whole"):
				s.t.Errorf("launch %d turn %d was sent on without all of it: %s", r.launch, r.turn+1, vs[0])
			}
		}
	}
	for id, vs := range got {
		s.t.Errorf("trace %s was sent on, which no turn has: %v", id, vs)
	}
}
