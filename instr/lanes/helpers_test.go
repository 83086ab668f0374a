package lanes

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// telemetry is a real OpenTelemetry SDK pair that keeps what the lanes record.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

func (tel *telemetry) options() []Option {
	return []Option{WithTracerProvider(tel.tp), WithMeterProvider(tel.mp)}
}

// sum returns the int64 sum of metric name for the given pippa.lane.
func (tel *telemetry) sum(t testing.TB, name, lane string) (int64, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			s, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s is %T, want an int64 sum", name, m.Data)
			}
			for _, dp := range s.DataPoints {
				if v, ok := dp.Attributes.Value("pippa.lane"); ok && v.AsString() == lane {
					return dp.Value, true
				}
			}
		}
	}
	return 0, false
}

// freezingListener hands out connections that can be frozen: a frozen
// connection stays open and swallows everything, never answering — a stale
// kept-alive connection whose far end is gone without a word.
type freezingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*freezableConn
}

type freezableConn struct {
	net.Conn
	mu     sync.Mutex
	frozen bool
	thaw   chan struct{}
}

func (l *freezingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &freezableConn{Conn: c, thaw: make(chan struct{})}
	l.mu.Lock()
	l.conns = append(l.conns, fc)
	l.mu.Unlock()
	return fc, nil
}

// freeze freezes every connection accepted so far; later ones work.
func (l *freezingListener) freeze() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.mu.Lock()
		c.frozen = true
		c.mu.Unlock()
	}
	return len(l.conns)
}

func (l *freezingListener) accepted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

func (l *freezingListener) Close() error {
	l.mu.Lock()
	for _, c := range l.conns {
		c.mu.Lock()
		select {
		case <-c.thaw:
		default:
			close(c.thaw)
		}
		c.mu.Unlock()
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

func (c *freezableConn) isFrozen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frozen
}

func (c *freezableConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.isFrozen() {
		// Swallow what arrived and never answer: block until the test ends
		// or the client gives the connection up.
		buf := make([]byte, 4096)
		for {
			if _, err := c.Conn.Read(buf); err != nil {
				return 0, err
			}
		}
	}
	return n, err
}

func (c *freezableConn) Write(p []byte) (int, error) {
	if c.isFrozen() {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// newFreezingServer starts an HTTP server on loopback whose connections can
// be frozen.
func newFreezingServer(t testing.TB, h http.Handler) (*httptest.Server, *freezingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &freezingListener{Listener: ln}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = fl
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, fl
}

// startTakes streams n takes from url on c in the background and returns once
// all n are in flight on lane, so the lane is known to be full; Wait on the
// result for them to finish.
func startTakes(t testing.TB, c *Client, url string, n int, lane string) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			resp, err := c.Do(req, KindTake)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	for c.RepliesInFlight(lane) < n {
		time.Sleep(time.Millisecond)
	}
	return &wg
}
