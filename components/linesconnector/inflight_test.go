package linesconnector_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/percause/percause/components/linesconnector"
	"github.com/percause/percause/instr/semconv"
)

// The deliveries of one batch of lines at once: an app's OTLP client (or a
// receiver) gives up waiting on a request and sends the same logs again
// while the first request is still on its way through the traces pipeline.

const inFlightTrace = "3c2a96bd8e0f4d1c9e5b7a6f01d2e3f4"

// inFlightBatches are the batches sent twice at once: each makes one turn.
var inFlightBatches = map[string]struct {
	lines []string
	takes int
}{
	"a turn alone": {[]string{
		"[voice-turn] turn=1 trace=" + inFlightTrace + " link=wifi units=1 gaps=0.10 broke=-",
	}, 0},
	"a take, then the turn naming it": {[]string{
		"[tts-take] take=t2 trace=" + inFlightTrace + " need=0.20",
		"[voice-turn] turn=2 trace=" + inFlightTrace + " link=wifi units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2",
	}, 1},
	"a turn without its trace and its take": {[]string{
		"2026-11-30T08:00:00Z [voice-turn] turn=3 units=1 gaps=0.10 broke=1:1/0.50/1.50@t5",
		"2026-11-30T08:00:01Z [tts-take] take=t5 need=0.30",
	}, 1},
}

// gate is the traces pipeline after the connector: the first delivery to
// it is held until the test lets it go, then answered as asked; the others
// are accepted at once.
type gate struct {
	refuseFirst bool
	entered     chan struct{} // closed once the first delivery is held
	release     chan struct{} // closed (let) by the test to answer it
	once        sync.Once

	mu       sync.Mutex
	calls    int
	holding  bool // the first delivery is held now
	refused  int
	accepted []ptrace.Traces
}

var errNotReady = errors.New("the traces pipeline refuses: not ready")

func newGate(refuseFirst bool) *gate {
	return &gate{refuseFirst: refuseFirst, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	g.mu.Lock()
	g.calls++
	first := g.calls == 1
	if first {
		g.holding = true
	}
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
		g.mu.Lock()
		defer g.mu.Unlock()
		g.holding = false
		if g.refuseFirst {
			g.refused++
			return errNotReady
		}
	} else {
		g.mu.Lock()
		defer g.mu.Unlock()
	}
	c := ptrace.NewTraces()
	td.CopyTo(c)
	g.accepted = append(g.accepted, c)
	return nil
}

// let answers the first delivery.
func (g *gate) let() { g.once.Do(func() { close(g.release) }) }

func (g *gate) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

// isHolding says whether the first delivery is held in the gate now.
func (g *gate) isHolding() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holding
}

// spans counts the spans accepted, by name.
func (g *gate) spans() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := map[string]int{}
	for _, s := range spansOf(g.accepted) {
		n[s.span.Name()]++
	}
	return n
}

// noticeCore passes on, once each, the connector's log entries with a
// given message: how the test learns that a delivery waits.
type noticeCore struct {
	zapcore.LevelEnabler
	message string
	seen    chan struct{}
}

func (c *noticeCore) With([]zapcore.Field) zapcore.Core { return c }
func (c *noticeCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == c.message {
		return ce.AddCore(e, c)
	}
	return ce
}
func (c *noticeCore) Write(zapcore.Entry, []zapcore.Field) error {
	select {
	case c.seen <- struct{}{}:
	default:
	}
	return nil
}
func (c *noticeCore) Sync() error { return nil }

// startGated makes the connector as a collector does, through its factory,
// with the default configuration but a wait long enough that the sweep
// lets nothing go during the test. It returns the connector and a channel
// that receives when a delivery waits for another's outcome.
func startGated(t *testing.T, next consumer.Traces) (connector.Logs, <-chan struct{}) {
	t.Helper()
	if g, ok := next.(*gate); ok {
		t.Cleanup(g.let) // a failed test leaves no delivery held
	}
	f := linesconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*linesconnector.Config)
	cfg.Wait = time.Hour
	waits := &noticeCore{LevelEnabler: zapcore.DebugLevel, message: linesconnector.MessageWaitsForDelivery, seen: make(chan struct{}, 1)}
	set := connectortest.NewNopSettings(f.Type())
	set.Logger = zap.New(waits)
	conn, err := f.CreateLogsToTraces(context.Background(), set, cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return conn, waits.seen
}

func logsOf(lines []string) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, l := range lines {
		lrs.AppendEmpty().Body().SetStr(l)
	}
	return ld
}

// guard bounds each wait of the test on the connector; it synchronises
// nothing (channels do), it only turns a hang into a failure.
const guard = 30 * time.Second

// TestAResendWaitsForTheRefusedDeliveryStillInFlight: the first delivery
// of a batch is held in the traces pipeline; the same logs are sent again
// meanwhile; then the first is refused. The client, once the resend is
// acknowledged, sends nothing more: the turn must still be accepted
// downstream, once. A resend acknowledged as a duplicate of lines whose
// delivery then fails would lose the turn.
func TestAResendWaitsForTheRefusedDeliveryStillInFlight(t *testing.T) {
	for name, b := range inFlightBatches {
		t.Run(name, func(t *testing.T) {
			g := newGate(true)
			conn, waits := startGated(t, g)
			ctx := context.Background()

			first := make(chan error, 1)
			go func() { first <- conn.ConsumeLogs(ctx, logsOf(b.lines)) }()
			select {
			case <-g.entered:
			case <-time.After(guard):
				t.Fatal("the first delivery never reached the traces pipeline")
			}

			// The client's resend, while the first is held downstream.
			second := make(chan error, 1)
			concurrent := make(chan bool, 1)
			go func() {
				concurrent <- g.isHolding()
				second <- conn.ConsumeLogs(ctx, logsOf(b.lines))
			}()
			var secondErr error
			answered := false
			select {
			case secondErr = <-second:
				answered = true // answered while the first was still in flight
			case <-waits:
			case <-time.After(guard):
				t.Fatal("the resend neither was answered nor waited")
			}
			if !<-concurrent {
				t.Fatal("the resend was not sent while the first delivery was held (no fault, no test)")
			}

			g.let() // the first delivery is refused
			if err := <-first; err == nil {
				t.Fatal("the first delivery's refusal did not go back to its sender")
			}
			if !answered {
				secondErr = <-second
			}
			if answered && secondErr == nil {
				t.Logf("the resend was acknowledged while the first delivery was in flight")
			}
			// The client retries until it has an acknowledgement, then stops.
			for tries := 0; secondErr != nil; tries++ {
				if tries == 3 {
					t.Fatalf("the client's logs were not accepted in the end: %v", secondErr)
				}
				secondErr = conn.ConsumeLogs(ctx, logsOf(b.lines))
			}
			if err := conn.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown: %v", err)
			}

			g.mu.Lock()
			refused := g.refused
			g.mu.Unlock()
			if refused != 1 {
				t.Fatalf("the traces pipeline refused %d deliveries, want 1 (no refusal, no test)", refused)
			}
			if got := g.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != b.takes {
				t.Fatalf("accepted downstream: %v, want the turn once and %d take(s): the client was told its lines were taken and the turn is lost", got, b.takes)
			}
		})
	}
}

// TestAResendOfAnAcceptedDeliveryInFlightIsADuplicate: the same, but the
// first delivery is accepted: the resend waited for it and is acknowledged
// as a duplicate, sending nothing.
func TestAResendOfAnAcceptedDeliveryInFlightIsADuplicate(t *testing.T) {
	for name, b := range inFlightBatches {
		t.Run(name, func(t *testing.T) {
			g := newGate(false)
			conn, waits := startGated(t, g)
			ctx := context.Background()

			first := make(chan error, 1)
			go func() { first <- conn.ConsumeLogs(ctx, logsOf(b.lines)) }()
			<-g.entered
			second := make(chan error, 1)
			go func() { second <- conn.ConsumeLogs(ctx, logsOf(b.lines)) }()
			select {
			case <-waits:
			case err := <-second:
				t.Fatalf("the resend was answered (%v) before the delivery carrying its lines was", err)
			case <-time.After(guard):
				t.Fatal("the resend never waited")
			}
			g.let()
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			if err := <-second; err != nil {
				t.Fatalf("the duplicate was refused: %v", err)
			}
			if err := conn.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			// The turn is a duplicate. A take line with a trace ID whose turn
			// was emitted goes into that trace again (the connector does not
			// remember takes; the same line makes the same span).
			if got := g.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] < b.takes {
				t.Fatalf("accepted downstream: %v, want the turn once and %d take(s)", got, b.takes)
			}
		})
	}
}

// TestAWaitingResendGivesUpWithItsContext: a resend waiting for the
// delivery carrying its lines returns its context's error when the
// context ends (a refusal: its sender sends again), and takes nothing in.
func TestAWaitingResendGivesUpWithItsContext(t *testing.T) {
	b := inFlightBatches["a take, then the turn naming it"]
	g := newGate(true)
	conn, waits := startGated(t, g)
	first := make(chan error, 1)
	go func() { first <- conn.ConsumeLogs(context.Background(), logsOf(b.lines)) }()
	<-g.entered
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { second <- conn.ConsumeLogs(ctx, logsOf(b.lines)) }()
	select {
	case <-waits:
	case err := <-second:
		t.Fatalf("the resend was answered (%v) before the delivery carrying its lines was", err)
	}
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting resend returned %v, want context.Canceled", err)
	}
	g.let()
	if err := <-first; err == nil {
		t.Fatal("the refusal did not go back")
	}
	// Neither delivery was taken: the sender's next one carries the turn.
	if err := conn.ConsumeLogs(context.Background(), logsOf(b.lines)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := g.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] != 1 {
		t.Fatalf("accepted downstream: %v, want the turn and its take once", got)
	}
}
