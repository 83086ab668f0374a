package lanes

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("alive"))
	}))
	b.Cleanup(srv.Close)
	return srv
}

// plainClient is what an app would otherwise use: net/http's default
// transport (idle timeout and all), limited to six connections per host.
func plainClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxConnsPerHost = DefaultConnsPerHost
	t.MaxIdleConnsPerHost = DefaultConnsPerHost
	return &http.Client{Transport: t}
}

// sdkClient records through the OpenTelemetry SDK with a synchronous span
// processor: the span's CPU cost is charged to the call, without the batch
// processor's goroutine wake-ups, which on a busy two-core machine measure the
// scheduler rather than the lanes.
func sdkClient(b *testing.B) *Client {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(discard{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	c, err := New(WithTracerProvider(tp), WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// otelhttpClient is plainClient instrumented with otelhttp on its own SDK
// pair, set up as sdkClient sets up its own.
func otelhttpClient(b *testing.B) *http.Client {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(discard{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	hc := plainClient()
	hc.Transport = otelhttp.NewTransport(hc.Transport, otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp))
	return hc
}

func noopClient(b *testing.B) *Client {
	c, err := New(WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider()))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func once(b *testing.B, do func(*http.Request) (*http.Response, error), req *http.Request) {
	resp, err := do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// BenchmarkCall compares one small GET on loopback through a plain
// http.Client and through the control lane (with the OpenTelemetry SDK
// recording, and with no-op providers).
func BenchmarkCall(b *testing.B) {
	srv := benchServer(b)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/check", nil)
	b.Run("plain", func(b *testing.B) {
		hc := plainClient()
		b.ReportAllocs()
		for b.Loop() {
			once(b, hc.Do, req)
		}
	})
	b.Run("lanes-sdk", func(b *testing.B) {
		c := sdkClient(b)
		do := func(r *http.Request) (*http.Response, error) { return c.Do(r, KindCheck) }
		b.ReportAllocs()
		for b.Loop() {
			once(b, do, req)
		}
	})
	b.Run("lanes-noop", func(b *testing.B) {
		c := noopClient(b)
		do := func(r *http.Request) (*http.Response, error) { return c.Do(r, KindCheck) }
		b.ReportAllocs()
		for b.Loop() {
			once(b, do, req)
		}
	})
}

// BenchmarkOverheadRatio alternates a plain call and a lanes call in one
// loop, so both see the same machine at the same moment, and reports the
// ratio of their median times, lanes/plain, as "ratio" (target ≤ 1.1): "noop" is the transports alone
// (no-op telemetry providers), "sdk" adds the OpenTelemetry SDK recording a
// span and two metric updates per call.
func BenchmarkOverheadRatio(b *testing.B) {
	srv := benchServer(b)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/check", nil)
	for _, tc := range []struct {
		name  string
		c     func(*testing.B) *Client
		plain func(*testing.B) *http.Client
	}{
		{"noop", noopClient, func(*testing.B) *http.Client { return plainClient() }},
		{"sdk", sdkClient, func(*testing.B) *http.Client { return plainClient() }},
		// The lanes recording through the SDK against net/http instrumented
		// the standard way (otelhttp) with the same SDK.
		{"sdk-vs-otelhttp", sdkClient, otelhttpClient},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.c(b)
			hc := tc.plain(b)
			do := func(r *http.Request) (*http.Response, error) { return c.Do(r, KindCheck) }
			var plain, lanes []time.Duration
			timed := func(f func(*http.Request) (*http.Response, error)) time.Duration {
				t0 := time.Now()
				once(b, f, req)
				return time.Since(t0)
			}
			i := 0
			for b.Loop() {
				// Swap which goes first on every round: the second call of a
				// pair pays for the first one's leftovers (its connection
				// going back to the pool, the server's goroutine), and that
				// must not be charged to one side.
				if i%2 == 0 {
					plain = append(plain, timed(hc.Do))
					lanes = append(lanes, timed(do))
				} else {
					lanes = append(lanes, timed(do))
					plain = append(plain, timed(hc.Do))
				}
				i++
			}
			// Medians: on a shared machine a few calls stall for
			// milliseconds behind other work, and a mean would measure that.
			mp, ml := median(plain), median(lanes)
			b.ReportMetric(float64(mp.Nanoseconds()), "plain-ns/call")
			b.ReportMetric(float64(ml.Nanoseconds()), "lanes-ns/call")
			b.ReportMetric(float64(ml)/float64(mp), "ratio")
		})
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
