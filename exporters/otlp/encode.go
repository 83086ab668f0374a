package otlp

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"

	collmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

var gzPool = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

// Gzip compresses b.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/3 + 64)
	zw := gzPool.Get().(*gzip.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(b) // writes to a bytes.Buffer cannot fail
	_ = zw.Close()
	gzPool.Put(zw)
	return buf.Bytes()
}

// Gunzip decompresses b.
func Gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// EncodeTraces returns the gzip-compressed protobuf ExportTraceServiceRequest
// carrying rs.
func EncodeTraces(rs []*tracepb.ResourceSpans) ([]byte, error) {
	b, err := proto.Marshal(&colltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	if err != nil {
		return nil, fmt.Errorf("otlp: encode traces: %w", err)
	}
	return Gzip(b), nil
}

// EncodeMetrics returns the gzip-compressed protobuf
// ExportMetricsServiceRequest carrying rm.
func EncodeMetrics(rm ...*metricpb.ResourceMetrics) ([]byte, error) {
	b, err := proto.Marshal(&collmetricpb.ExportMetricsServiceRequest{ResourceMetrics: rm})
	if err != nil {
		return nil, fmt.Errorf("otlp: encode metrics: %w", err)
	}
	return Gzip(b), nil
}

// DecodeTraces reads a gzip-compressed (or plain) protobuf
// ExportTraceServiceRequest, as a receiver would.
func DecodeTraces(body []byte, gzipped bool) (*colltracepb.ExportTraceServiceRequest, error) {
	raw, err := maybeGunzip(body, gzipped)
	if err != nil {
		return nil, err
	}
	req := &colltracepb.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(raw, req); err != nil {
		return nil, fmt.Errorf("otlp: decode traces: %w", err)
	}
	return req, nil
}

// DecodeMetrics reads a gzip-compressed (or plain) protobuf
// ExportMetricsServiceRequest, as a receiver would.
func DecodeMetrics(body []byte, gzipped bool) (*collmetricpb.ExportMetricsServiceRequest, error) {
	raw, err := maybeGunzip(body, gzipped)
	if err != nil {
		return nil, err
	}
	req := &collmetricpb.ExportMetricsServiceRequest{}
	if err := proto.Unmarshal(raw, req); err != nil {
		return nil, fmt.Errorf("otlp: decode metrics: %w", err)
	}
	return req, nil
}

func maybeGunzip(b []byte, gzipped bool) ([]byte, error) {
	if !gzipped {
		return b, nil
	}
	raw, err := Gunzip(b)
	if err != nil {
		return nil, fmt.Errorf("otlp: gunzip: %w", err)
	}
	return raw, nil
}
