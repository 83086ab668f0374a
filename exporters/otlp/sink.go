package otlp

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Sink receives encoded payloads (gzip-compressed protobuf export requests).
// The disk spool is the usual Sink; a Client can be one directly through
// SendSink.
type Sink func(ctx context.Context, sig Signal, payload []byte) error

// SendSink sends each payload at once on c (no spool: a failed send is lost).
func SendSink(c *Client) Sink {
	return func(ctx context.Context, sig Signal, payload []byte) error { return c.Send(ctx, sig, payload) }
}

// NewSpanExporter returns a span exporter that encodes each batch and hands it
// to sink.
func NewSpanExporter(sink Sink) sdktrace.SpanExporter {
	// otlptrace does the SDK-span-to-protobuf transform; the client below only
	// encodes. NewUnstarted never fails and Start of traceClient is a no-op.
	return otlptrace.NewUnstarted(&traceClient{sink: sink})
}

type traceClient struct{ sink Sink }

func (c *traceClient) Start(context.Context) error { return nil }
func (c *traceClient) Stop(context.Context) error  { return nil }
func (c *traceClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	if len(rs) == 0 {
		return nil
	}
	payload, err := EncodeTraces(rs)
	if err != nil {
		return err
	}
	return c.sink(ctx, SignalTraces, payload)
}

// MetricExporter encodes metric collections and hands them to a Sink. It asks
// for cumulative temporality for every instrument: counters then start at the
// launch (the pool-reset tally's contract) and Prometheus reads them as is.
type MetricExporter struct {
	sink     Sink
	shutdown atomic.Bool
}

var _ metric.Exporter = (*MetricExporter)(nil)

// NewMetricExporter returns a MetricExporter writing to sink.
func NewMetricExporter(sink Sink) *MetricExporter { return &MetricExporter{sink: sink} }

// Temporality is cumulative for every instrument kind.
func (e *MetricExporter) Temporality(metric.InstrumentKind) metricdata.Temporality {
	return metricdata.CumulativeTemporality
}

// Aggregation is the SDK's default.
func (e *MetricExporter) Aggregation(k metric.InstrumentKind) metric.Aggregation {
	return metric.DefaultAggregationSelector(k)
}

// ErrShutdown is returned by an exporter used after Shutdown.
var ErrShutdown = errors.New("otlp: exporter is shut down")

// Export encodes rm and hands it to the sink.
func (e *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if e.shutdown.Load() {
		return ErrShutdown
	}
	pb, err := ResourceMetrics(rm)
	if err != nil {
		// A partial transform still carries the valid metrics; send those.
		err = fmt.Errorf("otlp: metrics transform: %w", err)
	}
	if len(pb.ScopeMetrics) == 0 {
		return err
	}
	payload, encErr := EncodeMetrics(pb)
	if encErr != nil {
		return errors.Join(err, encErr)
	}
	return errors.Join(err, e.sink(ctx, SignalMetrics, payload))
}

// ForceFlush has nothing buffered to flush.
func (e *MetricExporter) ForceFlush(context.Context) error { return nil }

// Shutdown stops the exporter.
func (e *MetricExporter) Shutdown(context.Context) error {
	e.shutdown.Store(true)
	return nil
}
