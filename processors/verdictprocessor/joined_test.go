package verdictprocessor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/verdict"
)

// The two stages of a scale-out (docs/decisions/0242): a processor with
// emit: turns joins each trace and hands its readings on as spans; a
// processor with emit: verdicts, fed those, decides each turn as one fed
// the original spans would.

// joinedBatch is what the join stage sent on, and when by its clock.
type joinedBatch struct {
	at time.Time
	td ptrace.Traces
}

// joinHarness is a started harness whose processor joins (emit: turns) and
// records what it sends on.
func joinHarness(t *testing.T, cfg *Config) (*harness, *[]joinedBatch) {
	t.Helper()
	c := *cfg
	c.Emit = EmitTurns
	h := newHarness(t, &c)
	var out []joinedBatch
	h.p.next, _ = consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		cp := ptrace.NewTraces()
		td.CopyTo(cp)
		out = append(out, joinedBatch{at: h.now, td: cp})
		return nil
	})
	startHarness(t, h)
	return h, &out
}

// decideHarness is a started harness whose processor decides (emit:
// verdicts), as the stage the joined turns are routed to.
func decideHarness(t *testing.T, cfg *Config) *harness {
	t.Helper()
	c := *cfg
	c.Emit = EmitVerdicts
	h := newHarness(t, &c)
	startHarness(t, h)
	return h
}

func startHarness(t *testing.T, h *harness) {
	t.Helper()
	if err := h.p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.p.Shutdown(context.Background()) })
}

// runSteps runs a rule case's steps on h with the case's golden input.
func runSteps(t *testing.T, h *harness, tc ruleCase) {
	t.Helper()
	batches := readBatches(t, filepath.Join("testdata", "rules", tc.name+".in.jsonl"))
	k := 0
	for _, s := range tc.steps {
		switch {
		case s.batch != nil:
			h.deliver(batches[k])
			k++
		case s.shutdown:
			h.shutdown()
		default:
			h.advance(s.advance)
		}
	}
}

// feed hands the joined batches to the deciding harness, each at the time
// the join sent it, then lets its clock run out every wait.
func feed(d *harness, joined []joinedBatch, cfg *Config) {
	for _, b := range joined {
		if b.at.After(d.now) {
			d.now = b.at
		}
		d.deliver(b.td)
	}
	d.advance(cfg.Wait)
	d.advance(cfg.MaxAge)
}

// TestJoinedTurnsDecideAlike runs every rule case through the two stages:
// the golden input into a joining processor, what it sends on into a
// deciding one. Every turn gets the verdict the case's golden output gives
// it: the same span, byte for byte, for a turn the join did not have to
// force (it decides the moment its turn is whole, as one stage would);
// the same cause, causes and evidence for one forced after its wait (the
// decide stage waits too, for the same missing take); the same causes for
// one forced otherwise (the decide stage's reason is its wait).
func TestJoinedTurnsDecideAlike(t *testing.T) {
	for _, tc := range ruleCases() {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			j, joined := joinHarness(t, cfg)
			runSteps(t, j, tc)
			if n := len(j.verdicts()); n != 0 {
				t.Fatalf("the join stage wrote %d verdicts", n)
			}
			d := decideHarness(t, cfg)
			feed(d, *joined, cfg)

			want := verdictSpans(readGoldenOut(t, filepath.Join("testdata", "rules", tc.name+".out.json")))
			got := d.verdicts()
			if len(got) != len(want) {
				t.Fatalf("%d verdicts, the golden output has %d", len(got), len(want))
			}
			for _, w := range want {
				g, ok := findVerdict(got, w.TraceID())
				if !ok {
					t.Fatalf("no verdict for trace %v", w.TraceID())
				}
				compareJoinedVerdict(t, g, w)
			}
		})
	}
}

func compareJoinedVerdict(t *testing.T, got, want ptrace.Span) {
	t.Helper()
	g, w := verdict.FromSpan(pcommon.NewResource(), got), verdict.FromSpan(pcommon.NewResource(), want)
	if !reflect.DeepEqual(g.Causes, w.Causes) || g.Cause != w.Cause {
		t.Errorf("trace %v: %s %v (%s), one stage gives %s %v (%s)", w.TraceID, g.Cause, g.Causes, g.Evidence, w.Cause, w.Causes, w.Evidence)
		return
	}
	switch w.Forced {
	case "":
		if a, b := spanJSON(t, got), spanJSON(t, want); a != b {
			t.Errorf("trace %v: verdict span\n%s\none stage writes\n%s", w.TraceID, a, b)
		}
	case verdict.ForcedWait:
		if g.Evidence != w.Evidence || g.Forced != w.Forced {
			t.Errorf("trace %v: forced %q, %q; one stage: forced %q, %q", w.TraceID, g.Forced, g.Evidence, w.Forced, w.Evidence)
		}
	}
}

// spanJSON is a span alone as OTLP JSON.
func spanJSON(t *testing.T, s ptrace.Span) string {
	td := ptrace.NewTraces()
	s.CopyTo(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
	return string(marshalIndent(t, td))
}

func readGoldenOut(t *testing.T, path string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return td
}

func verdictSpans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, s := range verdict.Spans(td) {
		out = append(out, s)
	}
	return out
}

func findVerdict(spans []ptrace.Span, id pcommon.TraceID) (ptrace.Span, bool) {
	for _, s := range spans {
		if s.TraceID() == id {
			return s, true
		}
	}
	return ptrace.Span{}, false
}

// joinedGolden are the rule cases whose joined output is kept under
// testdata/joined: a turn whose engine takes came first, in a request of
// their own, under the engine's resource; a launch's rising count with its
// history; bad input beside a cause.
var joinedGolden = []string{"takes_before_turn", "state_rising", "bad_input_beside_a_cause"}

// TestJoinedOutput: what the join stage sends on for a turn is its
// voice.turn, its units and the takes they read, all under the phone's
// resource, with the readings the rules read and nothing else
// (testdata/joined/<case>.json, -update rewrites them).
func TestJoinedOutput(t *testing.T) {
	cases := map[string]ruleCase{}
	for _, tc := range ruleCases() {
		cases[tc.name] = tc
	}
	for _, name := range joinedGolden {
		t.Run(name, func(t *testing.T) {
			tc, ok := cases[name]
			if !ok {
				t.Fatalf("no rule case %s", name)
			}
			cfg := createDefaultConfig().(*Config)
			j, joined := joinHarness(t, cfg)
			runSteps(t, j, tc)
			out := ptrace.NewTraces()
			for _, b := range *joined {
				b.td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
			}
			for i := 0; i < out.ResourceSpans().Len(); i++ {
				name, _ := out.ResourceSpans().At(i).Resource().Attributes().Get("service.name")
				if name.Str() != "pippa-phone" {
					t.Errorf("joined spans under %q, want the phone's resource", name.Str())
				}
			}
			compareGolden(t, filepath.Join("testdata", "joined", name+".json"), marshalIndent(t, out))
		})
	}
}

// sendLaunchTurn sends turn i of launchTurns (trace 10+i) to h as a phone
// and an engine do, in two requests: the engine's take first on odd turns.
func sendLaunchTurn(h *harness, i int) {
	lt := launchTurns[i]
	n := byte(10 + i)
	phone := sdk(n, plainUnit("launch-A"), plainTurn("launch-A", lt.index, lt.pool, lt.players))
	engine := sdk(n, take("t1", 0.3, nil))
	if i%2 == 1 {
		phone, engine = engine, phone
	}
	h.deliver(phone)
	h.deliver(engine)
}

// TestLaunchAcrossTwoJoins: one launch's four turns, each its own trace,
// without history of their own, go alternately to two join stages (as
// routing by trace ID sends them); the stage their joined turns meet in
// reads each against the launch's earlier turns: none, none, pool, state.
func TestLaunchAcrossTwoJoins(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	a, fromA := joinHarness(t, cfg)
	b, fromB := joinHarness(t, cfg)
	d := decideHarness(t, cfg)
	for i := range launchTurns {
		j, from := a, fromA
		if i%2 == 1 {
			j, from = b, fromB
		}
		sendLaunchTurn(j, i)
		for _, jb := range *from {
			d.deliver(jb.td)
		}
		*from = nil
	}
	checkLaunch(t, d, 10)
	if n := a.p.held.Len() + b.p.held.Len() + d.p.held.Len(); n != 0 {
		t.Errorf("%d traces still held", n)
	}
}

// TestLaunchSplitByTraceRouting is the shape the two stages replace: the
// same sends into two processors that decide, as gateways routed by trace
// ID alone did. Neither sees the launch's previous turn of any turn but
// the first, so each later turn is decided after history_wait without it:
// pool and state are missed.
func TestLaunchSplitByTraceRouting(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	gw := []*harness{decideHarness(t, cfg), decideHarness(t, cfg)}
	for i := range launchTurns {
		sendLaunchTurn(gw[i%2], i)
	}
	for _, h := range gw {
		h.advance(cfg.HistoryWait)
	}
	for i, lt := range launchTurns {
		cause, ev := gw[i%2].causeOf(byte(10 + i))
		if cause != "none" {
			t.Errorf("turn %d: %s (%s), want none (its launch's previous turn went to the other gateway)", lt.index, cause, ev)
		}
		// Turns 3 and 4 report what a rule could read across turns (a
		// tally above 0, players at 3 and more): they say what they missed.
		if lt.index >= 3 && !strings.Contains(ev, "of this launch not seen") {
			t.Errorf("turn %d: evidence %q does not say its previous turn was not seen", lt.index, ev)
		}
	}
}

// TestJoinedTurnSettledLikeAVerdict: a joined turn the next consumer
// refuses leaves its trace held and the refusal goes back to the sender;
// the retry sends it again; once accepted the trace is decided, and a
// duplicate yields nothing. The join stage counts no verdict.
func TestJoinedTurnSettledLikeAVerdict(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Emit = EmitTurns
	h := newHarness(t, cfg)
	sink := new(consumertest.TracesSink)
	g := newGate(sink)
	h.p.next = g
	startHarness(t, h)
	batch := func() ptrace.Traces { return sdk(1, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)) }

	g.refuse.Store(true)
	if err := h.try(batch()); !errors.Is(err, errRefused) {
		t.Fatalf("refused joined turn answered %v, want the refusal", err)
	}
	if h.p.held.Decided(traceID(1)) || h.p.held.Len() != 1 || sink.SpanCount() != 0 {
		t.Fatalf("after the refusal: decided %v, %d held, %d spans on; want held, nothing on", h.p.held.Decided(traceID(1)), h.p.held.Len(), sink.SpanCount())
	}
	g.refuse.Store(false)
	if err := h.try(batch()); err != nil {
		t.Fatalf("retry answered %v", err)
	}
	if got := sink.SpanCount(); got != 3 {
		t.Fatalf("%d joined spans after the retry, want the turn, its unit and its take", got)
	}
	if !h.p.held.Decided(traceID(1)) || h.p.held.Len() != 0 {
		t.Fatalf("after acceptance: decided %v, %d held", h.p.held.Decided(traceID(1)), h.p.held.Len())
	}
	if err := h.try(batch()); err != nil || sink.SpanCount() != 3 {
		t.Fatalf("a duplicate: %v, %d spans on, want nothing more", err, sink.SpanCount())
	}
	if got := h.counter("otelcol_processor_verdict_verdicts"); len(got) != 0 {
		t.Errorf("the join stage counted verdicts %v", got)
	}
	if got := h.counter("otelcol_processor_verdict_refused")[""]; got != 1 {
		t.Errorf("refused %d, want 1", got)
	}
}

// BenchmarkTwoStages: the same 100-span requests (two 20-unit turns with
// their takes and HTTP spans) through one deciding processor and through a
// join stage feeding a decide stage in process (the hop between them, over
// the network and through an agent, is not in it), side by side in one
// run: process CPU per span of each, their ratio, and the size of what the
// join sends on against what it received.
func BenchmarkTwoStages(b *testing.B) {
	body, offs := requestBytes(b)
	u := ptrace.ProtoUnmarshaler{}
	sizer := ptrace.ProtoMarshaler{}
	var joinedBytes int
	start := func(emit string, next consumer.Traces) *verdictProcessor {
		cfg := createDefaultConfig().(*Config)
		cfg.Emit = emit
		h := newHarness(b, cfg)
		h.p.next = next
		if err := h.p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = h.p.Shutdown(context.Background()) })
		return h.p
	}
	one := start(EmitVerdicts, consumertest.NewNop())
	decide := start(EmitVerdicts, consumertest.NewNop())
	measured, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		joinedBytes += sizer.TracesSize(td)
		return decide.ConsumeTraces(ctx, td)
	})
	join := start(EmitTurns, measured)
	spans := benchRequest().SpanCount()
	var cpu [2]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for side, p := range []*verdictProcessor{one, join} {
			stamp(body, offs, uint64(i+1))
			td, err := u.UnmarshalTraces(body)
			if err != nil {
				b.Fatal(err)
			}
			c0 := cpuTime()
			if err := p.ConsumeTraces(context.Background(), td); err != nil {
				b.Fatal(err)
			}
			cpu[side] += cpuTime() - c0
		}
	}
	b.StopTimer()
	n := float64(b.N * spans)
	b.ReportMetric(float64(cpu[0].Nanoseconds())/n, "one-cpu-ns/span")
	b.ReportMetric(float64(cpu[1].Nanoseconds())/n, "two-cpu-ns/span")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio")
	b.ReportMetric(float64(joinedBytes)/float64(b.N*len(body)), "joined-bytes-ratio")
	if one.held.Len()+join.held.Len()+decide.held.Len() != 0 {
		b.Fatalf("turns left held")
	}
}

// TestJoinedTurnAcrossARestart: with storage, a join stage restarted
// between a turn's two requests keeps the phone's half, and joins the turn
// whole when the engine's half comes; the decide stage reads it as one
// stage reads the same spans.
func TestJoinedTurnAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	h, host := storedHarness(t, dir, EmitTurns)
	h.deliver(sdk(1, underrun(1, 1, 0.9, nil), turn(nil)))
	if n := h.p.held.Len(); n != 1 {
		t.Fatalf("%d traces held, want the turn waiting for its take", n)
	}
	h.stop(host)

	h2, host2 := storedHarness(t, dir, EmitTurns)
	defer h2.stop(host2)
	var joined []ptrace.Traces
	h2.p.next, _ = consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		cp := ptrace.NewTraces()
		td.CopyTo(cp)
		joined = append(joined, cp)
		return nil
	})
	h2.deliver(sdk(1, take("t1", 2.0, nil)))
	if len(joined) != 1 || joined[0].SpanCount() != 3 {
		t.Fatalf("joined %d batches after the restart, want one of the turn, its unit and its take", len(joined))
	}
	d := decideHarness(t, createDefaultConfig().(*Config))
	d.deliver(joined[0])
	v := d.verdicts()
	if len(v) != 1 {
		t.Fatalf("%d verdicts, want 1", len(v))
	}
	checkVerdict(t, v[0], want{cause: "synthesis", causes: cs("synthesis"),
		evidence: "unit 1: 1 underrun, 0.90 s silent; take t1 need 2.00 s > cushion 1.50 s"})
}
