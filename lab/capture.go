package lab

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// span is one exported span as the lab reads it back.
type span struct {
	Name    string
	Service string
	Attrs   map[attribute.Key]attribute.Value
	Events  []event
}

type event struct {
	Name  string
	Attrs map[attribute.Key]attribute.Value
}

// capture keeps a copy of every span exported, by trace ID: the lab's
// readings are what was shipped, not what the lab meant to ship.
type capture struct {
	mu     sync.Mutex
	traces map[string][]span
}

func newCapture() *capture { return &capture{traces: map[string][]span{}} }

func (c *capture) add(spans []sdktrace.ReadOnlySpan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range spans {
		sp := span{Name: s.Name(), Attrs: attrMap(s.Attributes())}
		if v, ok := s.Resource().Set().Value("service.name"); ok {
			sp.Service = v.AsString()
		}
		for _, e := range s.Events() {
			sp.Events = append(sp.Events, event{Name: e.Name, Attrs: attrMap(e.Attributes)})
		}
		id := s.SpanContext().TraceID().String()
		c.traces[id] = append(c.traces[id], sp)
	}
}

func (c *capture) trace(id string) []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]span(nil), c.traces[id]...)
}

func attrMap(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// tee hands every batch to the capture and then to the real exporter.
type tee struct {
	next sdktrace.SpanExporter
	c    *capture
}

func (t tee) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	t.c.add(spans)
	return t.next.ExportSpans(ctx, spans)
}

func (t tee) Shutdown(ctx context.Context) error { return t.next.Shutdown(ctx) }
