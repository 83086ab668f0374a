package instr

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/percause/percause/exporters/otlp"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is a real OTLP/HTTP endpoint on loopback that decodes protobuf
// requests (gzip or not) the way a collector's receiver does.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	rs  []*tracepb.ResourceSpans
	rm  []*metricpb.ResourceMetrics
	bad []string
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) URL() string { return r.srv.URL }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	gz := req.Header.Get("Content-Encoding") == "gzip"
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		r.fail("content type " + ct)
		http.Error(w, "want application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var resp proto.Message
	switch req.URL.Path {
	case "/v1/traces":
		m, err := otlp.DecodeTraces(body, gz)
		if err != nil {
			r.fail(err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.rs = append(r.rs, m.ResourceSpans...)
		r.mu.Unlock()
		resp = &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		m, err := otlp.DecodeMetrics(body, gz)
		if err != nil {
			r.fail(err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.rm = append(r.rm, m.ResourceMetrics...)
		r.mu.Unlock()
		resp = &colmetricpb.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, req)
		return
	}
	b, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func (r *receiver) fail(s string) {
	r.mu.Lock()
	r.bad = append(r.bad, s)
	r.mu.Unlock()
}

// span is one received span with its resource.
type span struct {
	res  map[string]any
	span *tracepb.Span
}

func (r *receiver) spans() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []span
	for _, rs := range r.rs {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				out = append(out, span{res: res, span: s})
			}
		}
	}
	return out
}

// metrics returns every received metric by name with its resource.
func (r *receiver) metrics() map[string][]*metricpb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]*metricpb.Metric{}
	for _, rm := range r.rm {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				out[m.Name] = append(out[m.Name], m)
			}
		}
	}
	return out
}

func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = anyOf(kv.Value)
	}
	return m
}

func anyOf(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.Values))
		for _, e := range x.ArrayValue.Values {
			out = append(out, anyOf(e))
		}
		return out
	}
	return nil
}
