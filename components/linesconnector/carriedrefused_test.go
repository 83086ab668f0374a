package linesconnector

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/percause/percause/instr/semconv"
)

// TestARefusedTurnOfAnEarlierDeliveryIsEmittedAgain: a turn line waits for
// its take, and its delivery is acknowledged. What emits the turn then (the
// take's delivery that completes it, or the sweep once its wait is over)
// is refused by the next consumer (the verdict processor, whose commit
// failed). The take's sender, refused, sends the take again; the turn's was
// answered long ago and sends nothing more: the connector must emit the
// turn again itself, or it is lost.
func TestARefusedTurnOfAnEarlierDeliveryIsEmittedAgain(t *testing.T) {
	refuse := consumertest.NewErr(errors.New("the next consumer refuses"))
	for name, emitOnce := range map[string]func(h *stateHarness) error{
		"the take completing it": func(h *stateHarness) error { return h.c.ConsumeLogs(context.Background(), logs(takeA)) },
		"the sweep":              func(h *stateHarness) error { h.advance(DefaultWait + time.Second); return nil },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.feed(turnA) // held for its take, acknowledged
			h.c.next = refuse
			_ = emitOnce(h)
			if got := h.spans(); got[semconv.SpanVoiceTurn] != 0 {
				t.Fatalf("the refusing consumer took %v", got)
			}
			h.c.next = h.sink
			// The refused take's sender sends it again (a take whose turn
			// is held again is a duplicate of the one it holds).
			if err := h.c.ConsumeLogs(context.Background(), logs(takeA)); err != nil {
				t.Fatal(err)
			}
			h.advance(time.Second)
			if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 || got[semconv.SpanTTSTake] < 1 {
				t.Fatalf("after the refusal, the take sent again and a sweep: %v, want the turn once with its take", got)
			}
			h.advance(DefaultWait + time.Second)
			if got := h.spans(); got[semconv.SpanVoiceTurn] != 1 {
				t.Fatalf("later: %v, want the turn once", got)
			}
		})
	}
}

func logs(lines ...string) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, l := range lines {
		lrs.AppendEmpty().Body().SetStr(l)
	}
	return ld
}
