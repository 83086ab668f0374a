package load

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Sink is an OTLP/HTTP traces endpoint on loopback that answers 200, with
// an empty export response, to every export and counts the spans in them:
// what the durable peer exports to, so that the peer's own CPU is what a
// run measures (the sink's is the load tool's) and a round can wait until
// the peer has handed on everything it was sent.
type Sink struct {
	URL string // its traces endpoint, http://127.0.0.1:PORT/v1/traces

	spans, undecodable atomic.Int64
	srv                *http.Server
	done               chan struct{}
}

// StartSink listens on addr (host:port; "127.0.0.1:0" for a free port).
func StartSink(addr string) (*Sink, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("load: the sink: %w", err)
	}
	s := &Sink{URL: fmt.Sprintf("http://%s/v1/traces", ln.Addr()), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", s.export)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln); close(s.done) }()
	return s, nil
}

func (s *Sink) export(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		if zr, err := gzip.NewReader(r.Body); err == nil {
			body = zr
		}
	}
	b, err := io.ReadAll(body)
	req := ptraceotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(b)
	}
	if err != nil {
		s.undecodable.Add(1)
	} else {
		s.spans.Add(int64(req.Traces().SpanCount()))
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// Spans is how many spans the sink was sent (a request sent twice, as a
// queue may after a restart, counts twice).
func (s *Sink) Spans() int64 { return s.spans.Load() }

// Undecodable is how many exports were not OTLP protobuf traces (answered
// 200 all the same).
func (s *Sink) Undecodable() int64 { return s.undecodable.Load() }

// WaitSpans waits until the sink has been sent at least n spans, or
// timeout passes.
func (s *Sink) WaitSpans(ctx context.Context, n int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for s.Spans() < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("load: the sink got %d of %d spans within %v", s.Spans(), n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Close stops the sink and waits for it: the exports under way are
// answered, then every connection is closed (an exporter's connection
// dialled but not yet used would hold a graceful shutdown for seconds).
func (s *Sink) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
