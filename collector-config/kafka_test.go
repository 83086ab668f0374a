package collectorconfig_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/verdicts"
	"github.com/percause/percause/verdict"
)

// The fleet on Kafka (kafka-edge.yaml, kafka-join.yaml, kafka-decide.yaml)
// through the real binary, against franz-go's in-process cluster on
// loopback, which speaks the Kafka protocol the contrib components use.

const (
	fleetSpans      = "percause-spans"
	fleetTurns      = "percause-turns"
	fleetJoinLog    = "percause-join-changelog"
	fleetDecideLog  = "percause-decide-changelog"
	fleetPartitions = 6
)

// kafkaFleet is a cluster and the tiers started on it.
type kafkaFleet struct {
	t       *testing.T
	brokers string
	edge    *testenv.Collector
	joins   []*testenv.Collector
	decides []*testenv.Collector
	// sentAt, when not nil, is when each turn's first request was sent.
	sentAt map[string]time.Time
}

func startKafkaCluster(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(fleetPartitions, fleetSpans, fleetTurns, fleetJoinLog, fleetDecideLog))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// startKafkaFleet starts a cluster, an edge, joins join gateways (with
// joinOpts) and decides decide gateways, and waits until both consumer
// groups have settled on them.
func startKafkaFleet(t *testing.T, joins, decides int, joinOpts ...testenv.CollectorOption) *kafkaFleet {
	t.Helper()
	f := &kafkaFleet{t: t, brokers: startKafkaCluster(t)}
	f.edge = f.startTier("kafka-edge.yaml")
	for range joins {
		f.joins = append(f.joins, f.startTier("kafka-join.yaml", joinOpts...))
	}
	for range decides {
		f.decides = append(f.decides, f.startTier("kafka-decide.yaml"))
	}
	f.waitForGroup("percause-join", joins)
	f.waitForGroup("percause-decide", decides)
	return f
}

// fleetLaunchesOf is launches 0 to n-1 of a fleet run.
func fleetLaunchesOf(n int) []fleetLaunch {
	out := make([]fleetLaunch, n)
	for i := range out {
		out[i] = fleetLaunchOf(i)
	}
	return out
}

// startTier starts one gateway of the fleet on its configuration, a
// turn's wait 2 s unless more options say otherwise.
func (f *kafkaFleet) startTier(config string, opts ...testenv.CollectorOption) *testenv.Collector {
	f.t.Helper()
	return testenv.StartCollector(f.t, append([]testenv.CollectorOption{
		testenv.WithCollectorConfig(filepath.Join(testenv.RepoRoot(), "collector-config", config)),
		testenv.WithCollectorEnv(collectorconfig.EnvKafkaBrokers, f.brokers),
		testenv.WithCollectorEnv(collectorconfig.EnvVerdictWait, "2s"),
		testenv.WithCollectorEnv(collectorconfig.EnvDecisionWait, "500ms"),
	}, opts...)...)
}

// admin is an admin client of the fleet's cluster, closed when the test
// ends.
func (f *kafkaFleet) admin() *kadm.Client {
	f.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// waitForGroup waits until the consumer group has settled on members
// gateways, each owning some of the topic's partitions and all of them
// owned.
func (f *kafkaFleet) waitForGroup(group string, members int) {
	f.t.Helper()
	adm := f.admin()
	testenv.WaitFor(f.t, 60*time.Second, fmt.Sprintf("group %s settled on %d members", group, members), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		gs, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return false
		}
		g := gs[group]
		owned := 0
		for _, m := range g.Members {
			c, ok := m.Assigned.AsConsumer()
			n := 0
			for _, tp := range c.Topics {
				n += len(tp.Partitions)
			}
			if !ok || n == 0 {
				return false
			}
			owned += n
		}
		return g.State == "Stable" && len(g.Members) == members && owned == fleetPartitions
	})
}

// send posts td to the edge as a phone's or an engine's exporter does and
// fails unless the edge answers 200.
func (f *kafkaFleet) send(td ptrace.Traces) {
	f.t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := http.Post(f.edge.OTLPURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(b))
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("the edge answered %s", resp.Status)
	}
}

// decided is every verdict the decide gateways wrote, by trace, with the
// gateway that wrote it.
type fleetVerdict struct {
	verdicts.Verdict
	gateway int
}

func (f *kafkaFleet) decided() map[string][]fleetVerdict {
	out := map[string][]fleetVerdict{}
	for i, d := range f.decides {
		for id, vs := range readVerdicts(f.t, d.VerdictFile) {
			for _, v := range vs {
				out[id] = append(out[id], fleetVerdict{v, i})
			}
		}
	}
	return out
}

// fleetLaunch is one launch of the fleet run and its turns' traces.
type fleetLaunch struct {
	installation, launch string
	traces               []string
}

// fleetLaunchOf is launch i of a fleet run. Its installation and launch
// IDs differ in their digits: the exporter's default hash (FNV-1a) of two
// IDs whose digits are alike leaves half the partitions empty.
func fleetLaunchOf(i int) fleetLaunch {
	return fleetLaunch{installation: fmt.Sprintf("install-%03d", i*7+1), launch: fmt.Sprintf("launch-%03d", i*13+5)}
}

// TestKafkaFleetDecidesEachLaunchWhole: one edge, two join gateways and
// three decide gateways on a six-partition cluster. 40 launches of 4
// turns, each turn its own trace sent as two requests (the phone's and
// the engine's, either first), without history of their own: pool tally
// 0, 0, 2, 2 and players 1, 2, 3, 4, so a turn is read right only against
// its launch's earlier turns. Every turn gets exactly one verdict, and
// every launch's verdicts are none, none, pool, state, all from the one
// gateway that owns its partition; the launches are spread over more than
// one decide gateway (else keying by launch was never put to the test).
func TestKafkaFleetDecidesEachLaunchWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary six times against an in-process Kafka")
	}
	f := startKafkaFleet(t, 2, 3)
	const nLaunches = 40
	launches := fleetLaunchesOf(nLaunches)
	start := time.Now()
	for round := range oneLaunch {
		f.sendRound(launches, round)
		f.waitForVerdicts((round+1)*nLaunches, fmt.Sprintf("round %d's verdicts", round+1))
	}
	took := time.Since(start)

	got := f.decided()
	deciders, wrong := checkLaunches(t, got, launches)
	byGateway := map[int]int{}
	for _, gs := range deciders {
		if len(gs) != 1 {
			t.Errorf("a launch was decided by gateways %v, with nothing moved", gs)
		}
		for g := range gs {
			byGateway[g]++
		}
	}
	if len(byGateway) < 2 {
		t.Errorf("launches by decide gateway %v: all on one, so keying by launch was not put to the test", byGateway)
	}
	t.Logf("%d turns of %d launches in %s; launches by decide gateway %v; %d read wrong", len(got), nLaunches, took.Round(time.Millisecond), byGateway, wrong)
	f.logTopics(nLaunches * len(oneLaunch))
	f.logCPU(nLaunches * len(oneLaunch))
}

// checkLaunches fails each turn of launches without exactly one verdict
// in got, or whose verdict is not the one its launch's earlier turns give
// (none, none, pool, state), and returns the gateways that decided each
// launch's turns and how many turns were read wrong.
func checkLaunches(t *testing.T, got map[string][]fleetVerdict, launches []fleetLaunch) ([]map[int]bool, int) {
	t.Helper()
	wrong := 0
	deciders := make([]map[int]bool, len(launches))
	for i, l := range launches {
		deciders[i] = map[int]bool{}
		for k, id := range l.traces {
			vs := got[id]
			if len(vs) != 1 {
				t.Errorf("%s turn %d (trace %s): %d verdicts, want 1", l.launch, k+1, id, len(vs))
				continue
			}
			deciders[i][vs[0].gateway] = true
			if vs[0].Cause != oneLaunch[k].cause {
				wrong++
				t.Errorf("%s turn %d, decided by gateway %d: %s (%s), want %s", l.launch, k+1, vs[0].gateway, vs[0].Cause, vs[0].Evidence, oneLaunch[k].cause)
			}
		}
	}
	return deciders, wrong
}

// logTopics reads both topics from their start and logs the bytes a turn
// took on each (keys, values and headers).
func (f *kafkaFleet) logTopics(turns int) {
	f.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers), kgo.ConsumeTopics(fleetSpans, fleetTurns),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	records, bytes := map[string]int{}, map[string]int{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			records[r.Topic]++
			bytes[r.Topic] += len(r.Key) + len(r.Value)
			for _, h := range r.Headers {
				bytes[r.Topic] += len(h.Key) + len(h.Value)
			}
		})
	}
	for _, topic := range []string{fleetSpans, fleetTurns} {
		f.t.Logf("%s: %d records, %d bytes, %d bytes a turn", topic, records[topic], bytes[topic], bytes[topic]/turns)
	}
}

// logCPU logs each tier's CPU (user and system, from /proc) per turn over
// the whole run, start-up included.
func (f *kafkaFleet) logCPU(turns int) {
	f.t.Helper()
	tier := func(name string, cs []*testenv.Collector) {
		var ticks int64
		for _, c := range cs {
			ticks += cpuTicks(f.t, c.Cmd.Process.Pid)
		}
		f.t.Logf("%s (%d): %d ms CPU, %.0f µs a turn", name, len(cs), ticks*10, float64(ticks)*10000/float64(turns))
	}
	tier("edge", []*testenv.Collector{f.edge})
	tier("join", f.joins)
	tier("decide", f.decides)
}

// cpuTicks is a live process's user and system time in clock ticks
// (1/100 s on Linux).
func cpuTicks(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Logf("cpu of %d: %v", pid, err)
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	sy, _ := strconv.ParseInt(fields[12], 10, 64)
	return u + sy
}

// sendRound sends turn round (0-based) of every launch to the edge.
func (f *kafkaFleet) sendRound(launches []fleetLaunch, round int) {
	f.t.Helper()
	lt := oneLaunch[round]
	for i := range launches {
		l := &launches[i]
		phone, engine := launchTurnRequests(lt, l.installation, l.launch)
		id := phone.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
		l.traces = append(l.traces, id)
		if (i+round)%2 == 0 {
			phone, engine = engine, phone
		}
		if f.sentAt != nil {
			f.sentAt[id] = time.Now()
		}
		f.send(phone)
		f.send(engine)
	}
}

// waitForVerdicts waits until the decide gateways' files hold n traces.
func (f *kafkaFleet) waitForVerdicts(n int, what string) {
	f.t.Helper()
	testenv.WaitFor(f.t, 90*time.Second, what, func() bool { return len(f.decided()) >= n })
}

// TestKafkaFleetStateFollowsThePartition: three decide gateways decide
// the first two turns of 40 launches. Then one is killed (kill -9) and
// one added; the third turns are decided; then one is stopped gracefully
// and the fourth turns are decided. The launches the killed and the
// stopped gateways owned are decided after their partitions moved by
// gateways that never saw their earlier turns: every turn must still get
// exactly one verdict, and every launch none, none, pool, state. The run
// fails when no launch moved.
func TestKafkaFleetStateFollowsThePartition(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary eight times against an in-process Kafka")
	}
	f := startKafkaFleet(t, 2, 3)
	const nLaunches = 40
	launches := fleetLaunchesOf(nLaunches)
	for round := range 2 {
		f.sendRound(launches, round)
		f.waitForVerdicts((round+1)*nLaunches, fmt.Sprintf("round %d's verdicts", round+1))
	}

	killedAt := time.Now()
	f.decides[0].Kill()
	f.waitForGroup("percause-decide", 2)
	t.Logf("the decide group settled on the two left %s after a gateway was killed (the session timeout)", time.Since(killedAt).Round(time.Millisecond))
	addedAt := time.Now()
	f.decides = append(f.decides, f.startTier("kafka-decide.yaml"))
	f.waitForGroup("percause-decide", 3)
	t.Logf("the decide group settled %s after a gateway was started", time.Since(addedAt).Round(time.Millisecond))
	f.sendRound(launches, 2)
	f.waitForVerdicts(3*nLaunches, "round 3's verdicts")

	stoppedAt := time.Now()
	f.decides[1].Stop()
	f.waitForGroup("percause-decide", 2)
	t.Logf("the decide group settled %s after a gateway stopped", time.Since(stoppedAt).Round(time.Millisecond))
	f.sendRound(launches, 3)
	f.waitForVerdicts(4*nLaunches, "round 4's verdicts")

	got := f.decided()
	deciders, wrong := checkLaunches(t, got, launches)
	moved := 0
	for _, gs := range deciders {
		if len(gs) > 1 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no launch changed gateways: the run proves nothing")
	}
	// Each gateway still running counts what its file holds: the count
	// connector counted each verdict once. (The killed and the stopped
	// gateways' counters went with their processes; their files stay.)
	files := map[int]int{}
	for _, vs := range got {
		for _, v := range vs {
			files[v.gateway]++
		}
	}
	for _, i := range []int{2, 3} {
		counted := 0
		testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("gateway %d's counters to catch up with its file", i), func() bool {
			counted = sum(scrapeTurnsByCause(t, f.decides[i].PromURL, ""))
			return counted >= files[i]
		})
		if counted != files[i] {
			t.Errorf("gateway %d counted %d turns, its verdict file holds %d", i, counted, files[i])
		}
	}
	t.Logf("%d of %d launches changed gateways; %d turns read wrong", moved, nLaunches, wrong)
	for i, d := range f.decides {
		for _, line := range strings.Split(d.Output(), "\n") {
			if strings.Contains(line, "took over partition") {
				t.Logf("gateway %d took over %s", i, line[strings.Index(line, `"partition"`):])
			}
		}
	}
}

// TestKafkaFleetCost (PERCAUSE_FLEET_COST=1; make fleet) measures the
// fleet on the same turns as the embedded default: each tier's CPU per
// span over the run, start-up left out, against the embedded default's;
// the time each hop adds, from Kafka's record timestamps and the verdicts'
// decision times (p50 and p99); and the bytes a turn takes on each topic.
func TestKafkaFleetCost(t *testing.T) {
	if os.Getenv("PERCAUSE_FLEET_COST") == "" {
		t.Skip("a measurement: PERCAUSE_FLEET_COST=1 (make fleet)")
	}
	const nLaunches = 250
	launches := fleetLaunchesOf(nLaunches)
	turns := nLaunches * len(oneLaunch)
	spans := 3 * turns

	f := startKafkaFleet(t, 2, 3)
	tiers := map[string][]*testenv.Collector{"edge": {f.edge}, "join": f.joins, "decide": f.decides}
	before := map[string]int64{}
	for name, cs := range tiers {
		before[name] = ticksOf(t, cs)
	}
	f.sentAt = map[string]time.Time{}
	for round := range oneLaunch {
		f.sendRound(launches, round)
		f.waitForVerdicts((round+1)*nLaunches, fmt.Sprintf("round %d's verdicts", round+1))
	}
	fleetCPU := map[string]int64{}
	for name, cs := range tiers {
		fleetCPU[name] = ticksOf(t, cs) - before[name]
	}

	// The embedded default, on turns of the same shape.
	def := testenv.StartCollector(t)
	f0 := &kafkaFleet{t: t, edge: def}
	defBefore := ticksOf(t, []*testenv.Collector{def})
	again := fleetLaunchesOf(nLaunches)
	for round := range oneLaunch {
		f0.sendRound(again, round)
		testenv.WaitFor(t, 90*time.Second, "the default's verdicts", func() bool {
			return len(readVerdicts(t, def.VerdictFile)) >= (round+1)*nLaunches
		})
	}
	defCPU := ticksOf(t, []*testenv.Collector{def}) - defBefore
	perSpan := func(ticks int64) float64 { return float64(ticks) * 10000 / float64(spans) }
	t.Logf("CPU a span, %d turns: embedded default %.1f µs; edge %.1f, join %.1f, decide %.1f, fleet %.1f µs (%.2f× the default)",
		turns, perSpan(defCPU), perSpan(fleetCPU["edge"]), perSpan(fleetCPU["join"]), perSpan(fleetCPU["decide"]),
		perSpan(fleetCPU["edge"]+fleetCPU["join"]+fleetCPU["decide"]),
		float64(fleetCPU["edge"]+fleetCPU["join"]+fleetCPU["decide"])/float64(defCPU))

	hops := f.hopTimes(f.sentAt)
	for _, hop := range []string{"edge", "join", "decide"} {
		ds := hops[hop]
		slices.Sort(ds)
		t.Logf("%s hop: p50 %s, p99 %s (%d turns)", hop, ds[len(ds)/2].Round(time.Microsecond), ds[len(ds)*99/100].Round(time.Microsecond), len(ds))
	}
	f.logTopics(turns)
}

// ticksOf is the CPU of running collectors, in clock ticks.
func ticksOf(t *testing.T, cs []*testenv.Collector) int64 {
	var n int64
	for _, c := range cs {
		n += cpuTicks(t, c.Cmd.Process.Pid)
	}
	return n
}

// hopTimes is, for each turn whose first request was sent at
// sent[trace], the time each hop added: edge (to its last span on the
// spans topic, both its requests), join (to its joined turn on the turns
// topic) and decide (to its verdict's decision). Kafka's timestamps are
// in milliseconds.
func (f *kafkaFleet) hopTimes(sent map[string]time.Time) map[string][]time.Duration {
	f.t.Helper()
	spansAt, turnsAt := map[string]time.Time{}, map[string]time.Time{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers), kgo.ConsumeTopics(fleetSpans, fleetTurns),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		f.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var u ptrace.ProtoUnmarshaler
	for ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			td, err := u.UnmarshalTraces(r.Value)
			if err != nil {
				f.t.Errorf("a record of %s is not OTLP: %v", r.Topic, err)
				return
			}
			for _, id := range traceIDsOf(td) {
				if r.Topic == fleetTurns {
					turnsAt[id] = r.Timestamp
				} else if r.Timestamp.After(spansAt[id]) {
					spansAt[id] = r.Timestamp
				}
			}
		})
	}
	decidedAt := map[string]time.Time{}
	var ju ptrace.JSONUnmarshaler
	for _, d := range f.decides {
		b, err := os.ReadFile(d.VerdictFile)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			td, err := ju.UnmarshalTraces(line)
			if err != nil {
				f.t.Fatal(err)
			}
			verdict.Each(td, func(_ pcommon.Resource, s ptrace.Span) {
				decidedAt[s.TraceID().String()] = s.EndTimestamp().AsTime()
			})
		}
	}
	out := map[string][]time.Duration{}
	for id, at := range sent {
		if spansAt[id].IsZero() || turnsAt[id].IsZero() || decidedAt[id].IsZero() {
			f.t.Errorf("trace %s: spans at %v, turn at %v, decided at %v", id, spansAt[id], turnsAt[id], decidedAt[id])
			continue
		}
		out["edge"] = append(out["edge"], spansAt[id].Sub(at))
		out["join"] = append(out["join"], turnsAt[id].Sub(spansAt[id]))
		out["decide"] = append(out["decide"], decidedAt[id].Sub(turnsAt[id]))
	}
	return out
}

// traceIDsOf is every trace a batch holds spans of.
func traceIDsOf(td ptrace.Traces) []string {
	seen := map[string]bool{}
	var ids []string
	for _, s := range verdict.Spans(td) {
		if id := s.TraceID().String(); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// waitForCommitted waits until group has committed every record topic
// holds: each was accepted by a gateway of the group.
func (f *kafkaFleet) waitForCommitted(group, topic string) {
	f.t.Helper()
	adm := f.admin()
	testenv.WaitFor(f.t, 30*time.Second, fmt.Sprintf("group %s to commit all of %s", group, topic), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return false
		}
		committed, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		all := true
		ends.Each(func(o kadm.ListedOffset) {
			c, ok := committed.Lookup(topic, o.Partition)
			if o.Offset > 0 && (!ok || c.At < o.Offset) {
				all = false
			}
		})
		return all
	})
}

// underrunTurnRequests is launchTurnRequests with the phone's unit
// underrunning: its turn then waits for the engine's take it names.
func underrunTurnRequests(lt launchTurn, installation, launch string) (phone, engine ptrace.Traces) {
	phone, engine = launchTurnRequests(lt, installation, launch)
	unit := phone.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0).Attributes()
	unit.PutInt(semconv.UnitUnderruns, 1)
	unit.PutDouble(semconv.UnitSilent, 0.4)
	return phone, engine
}

// TestKafkaFleetHeldTracesFollowThePartition: two join gateways hold the
// phone's half of 40 turns, each waiting for the take its underrunning
// unit names (the wait is 30 s here), every spans record acknowledged and
// committed. One join gateway is killed (kill -9) and its partitions move
// to the other; then the engines' halves come. Every turn gets exactly one
// verdict, none decided with its take missing: the surviving gateway held
// again the halves the killed one had acknowledged. The run fails when
// the killed gateway held nothing.
func TestKafkaFleetHeldTracesFollowThePartition(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary four times against an in-process Kafka")
	}
	f := startKafkaFleet(t, 2, 1, testenv.WithCollectorEnv(collectorconfig.EnvVerdictWait, "30s"))
	const nLaunches = 40
	var traces []string
	var engines []ptrace.Traces
	for i := range nLaunches {
		l := fleetLaunchOf(i)
		phone, engine := underrunTurnRequests(oneLaunch[0], l.installation, l.launch)
		traces = append(traces, phone.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String())
		engines = append(engines, engine)
		f.send(phone)
	}
	f.waitForCommitted("percause-join", fleetSpans)
	killedAt := time.Now()
	f.joins[0].Kill()
	f.waitForGroup("percause-join", 1)
	t.Logf("the join group settled %s after a gateway was killed", time.Since(killedAt).Round(time.Millisecond))
	for _, e := range engines {
		f.send(e)
	}
	f.waitForVerdicts(nLaunches, "a verdict for every turn")
	got := f.decided()
	for k, id := range traces {
		vs := got[id]
		if len(vs) != 1 {
			t.Errorf("turn of launch %d (trace %s): %d verdicts, want 1", k, id, len(vs))
			continue
		}
		if vs[0].Forced != "" {
			t.Errorf("turn of launch %d: decided without what it named (%s): %s", k, vs[0].Forced, vs[0].Evidence)
		}
	}
	held := heldAgain(f.joins[1])
	if held == 0 {
		t.Fatal("the surviving join gateway held nothing again: the killed one held nothing, and the run proves nothing")
	}
	t.Logf("the surviving join gateway held %d of the killed one's traces again", held)
}

// TestKafkaFleetQuietPartitionIsReadBack: two join gateways hold the
// phone's half of 40 turns whose engines never answer, every spans record
// acknowledged and committed. One join gateway is killed (kill -9) and no
// span comes after: its partitions get no record but the heartbeats the
// surviving gateway writes (docs/decisions/0318). The survivor reads back
// what the killed one held and sends each turn on at its wait: every turn
// gets exactly one verdict, its take missing. The run fails when the
// killed gateway held nothing.
func TestKafkaFleetQuietPartitionIsReadBack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary four times against an in-process Kafka")
	}
	f := startKafkaFleet(t, 2, 1, testenv.WithCollectorEnv(collectorconfig.EnvVerdictWait, "8s"))
	const nLaunches = 40
	var traces []string
	for i := range nLaunches {
		l := fleetLaunchOf(i)
		phone, _ := underrunTurnRequests(oneLaunch[0], l.installation, l.launch)
		traces = append(traces, phone.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String())
		f.send(phone)
	}
	f.waitForCommitted("percause-join", fleetSpans)
	killedAt := time.Now()
	f.joins[0].Kill()
	f.waitForVerdicts(nLaunches, "a verdict for every turn, none sent after the kill")
	t.Logf("every turn had its verdict %s after a join gateway was killed", time.Since(killedAt).Round(time.Millisecond))
	got := f.decided()
	for k, id := range traces {
		if vs := got[id]; len(vs) != 1 {
			t.Errorf("turn of launch %d (trace %s): %d verdicts, want 1", k, id, len(vs))
		}
	}
	held := heldAgain(f.joins[1])
	if held == 0 {
		t.Fatal("the surviving join gateway held nothing again: the killed one held nothing, and the run proves nothing")
	}
	t.Logf("the surviving join gateway held %d of the killed one's traces again, read back on the heartbeats alone", held)
}

// heldAgain is how many traces a gateway held again from the changelog
// over its takeovers, as its log tells them.
func heldAgain(c *testenv.Collector) int {
	held := 0
	for _, line := range strings.Split(c.Output(), "\n") {
		if i := strings.Index(line, `"held": `); i >= 0 && strings.Contains(line, "took over partition") {
			n, _ := strconv.Atoi(strings.TrimRight(strings.Fields(line[i+len(`"held": `):])[0], ","))
			held += n
		}
	}
	return held
}
