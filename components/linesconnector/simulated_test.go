package linesconnector_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/components/linesconnector"
	"github.com/percause/percause/instr/semconv"
)

// TestSimulatedOnItsClock: the connector the fault simulation drives holds
// a turn line for its take until its own Sweep, on the clock it was given,
// lets it go; TurnTrace names the trace it is emitted in, derived from the
// line when the line has none.
func TestSimulatedOnItsClock(t *testing.T) {
	f := linesconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*linesconnector.Config)
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	sink := new(consumertest.TracesSink)
	c, err := linesconnector.NewSimulated(connectortest.NewNopSettings(f.Type()), cfg, sink, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const text = "[voice-turn] turn=3 units=1 gaps=0.10 broke=1:1/0.50/1.50@t5"
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(semconv.ServiceInstanceID, "launch-1")
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(text)
	want, ok := linesconnector.TurnTrace(rl.Resource(), text)
	if !ok {
		t.Fatal("TurnTrace took the turn line for no turn line")
	}
	if err := c.ConsumeLogs(ctx, ld); err != nil {
		t.Fatal(err)
	}
	if c.Held() != 1 {
		t.Fatalf("holds %d lines, want the turn line of %s", c.Held(), want)
	}
	now = now.Add(cfg.Wait - time.Millisecond)
	c.Sweep(ctx)
	if sink.SpanCount() != 0 {
		t.Fatal("let go before its wait was over")
	}
	now = now.Add(time.Millisecond)
	c.Sweep(ctx)
	if c.Held() != 0 || sink.SpanCount() == 0 {
		t.Fatalf("after its wait: %d lines held, %d spans emitted", c.Held(), sink.SpanCount())
	}
	got := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	if got != want {
		t.Errorf("emitted in trace %s, TurnTrace says %s", got, want)
	}
	if _, ok := linesconnector.TurnTrace(pcommon.NewResource(), "[tts-take] take=t5 need=0.30"); ok {
		t.Error("TurnTrace took a take line for a turn line")
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
