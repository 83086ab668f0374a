package lanes

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
)

// TestDefaultPropagatorCarriesTheTrace: without WithPropagator, every call
// carries the turn's W3C traceparent (and baggage) even when the process's
// global propagator carries nothing, as it does until an app sets one:
// the engine reads W3C trace context whatever the phone's global says
// (docs/decisions/0104-setup-leaves-globals-alone.md).
func TestDefaultPropagatorCarriesTheTrace(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator()) // carries nothing

	var mu sync.Mutex
	var got []http.Header
	srv, _ := newFreezingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	tel := newTelemetry(t)
	c, err := New(tel.options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	turnCtx, turn := tel.tp.Tracer("test").Start(context.Background(), "voice.turn")
	member, _ := baggage.NewMember("turn", "1")
	bag, _ := baggage.New(member)
	turnCtx = baggage.ContextWithBaggage(turnCtx, bag)
	for _, k := range []Kind{KindCheck, KindTake} {
		req, _ := http.NewRequestWithContext(turnCtx, http.MethodGet, srv.URL+"/"+string(k), nil)
		resp, err := c.Do(req, k)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	turn.End()

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d calls reached the server, want 2", len(got))
	}
	traceID := turn.SpanContext().TraceID().String()
	for i, h := range got {
		tp := h.Get("traceparent")
		if !strings.Contains(tp, traceID) {
			t.Errorf("call %d: traceparent %q, want the turn's trace %s", i+1, tp, traceID)
		}
		if b := h.Get("baggage"); b != "turn=1" {
			t.Errorf("call %d: baggage %q, want turn=1", i+1, b)
		}
	}
}
