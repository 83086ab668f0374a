package otlp

import (
	"fmt"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// BenchmarkEncodeTurn is the export goroutine's cost for one turn: 21 spans
// (a voice.turn with 40 attributes and 20 voice.unit with 9) to a
// gzip-compressed protobuf request.
func BenchmarkEncodeTurn(b *testing.B) {
	kv := func(k string, v float64) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
	}
	root := &tracepb.Span{Name: "voice.turn", TraceId: make([]byte, 16), SpanId: make([]byte, 8)}
	for i := range 40 {
		root.Attributes = append(root.Attributes, kv(fmt.Sprintf("pippa.turn.attr%d", i), float64(i)))
	}
	spans := []*tracepb.Span{root}
	for i := range 20 {
		u := &tracepb.Span{Name: "voice.unit", TraceId: make([]byte, 16), SpanId: make([]byte, 8), ParentSpanId: make([]byte, 8)}
		for j := range 9 {
			u.Attributes = append(u.Attributes, kv(fmt.Sprintf("pippa.unit.attr%d", j), float64(i*j)))
		}
		spans = append(spans, u)
	}
	rs := []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", 1)}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		p, err := EncodeTraces(rs)
		if err != nil {
			b.Fatal(err)
		}
		n = len(p)
	}
	b.ReportMetric(float64(n), "bytes/turn")
}
