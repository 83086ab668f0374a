package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/percause/percause/exporters/otlp"
	"github.com/percause/percause/exporters/spool"
	"github.com/percause/percause/instr"
)

// Export settings of the lab's SDKs: short, so a turn's verdict follows it
// within a second or two.
const (
	flushInterval  = 100 * time.Millisecond
	metricInterval = 2 * time.Second
)

// launch is one launch of a process's telemetry: the SDK and its spool.
type launch struct {
	sdk    *instr.SDK
	spool  *spool.Spool
	client *otlp.Client
	// busy is the voice lane busy signal: export defers while she speaks
	// or listens, unless the spool is near full.
	busy atomic.Bool

	// refused are the readings the SDK refused since the last take: the
	// lab's readings are evidence, so a refused one fails its turn.
	mu      sync.Mutex
	refused []string
}

func (l *launch) refuse(err error) {
	l.mu.Lock()
	l.refused = append(l.refused, err.Error())
	l.mu.Unlock()
}

// takeRefused returns the refusals since the last call and starts over.
func (l *launch) takeRefused() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.refused
	l.refused = nil
	return out
}

// setupSDK builds an SDK that exports through a disk spool in dir to the
// collector at endpoint, with a copy of every span for the lab's readings.
func setupSDK(ctx context.Context, endpoint, dir string, scale float64, c *capture, log *slog.Logger, opts ...instr.Option) (*launch, error) {
	client, err := otlp.NewClient(endpoint)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	l := &launch{client: client}
	opts = append(opts, instr.WithErrorHandler(l.refuse))
	l.spool, err = spool.Open(dir, func(ctx context.Context, kind string, payload []byte) error {
		return client.Send(ctx, otlp.Signal(kind), payload)
	}, spool.WithBusy(l.busy.Load), spool.WithLogger(log))
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("lab: %w", err)
	}
	sink := func(_ context.Context, sig otlp.Signal, payload []byte) error {
		return l.spool.Put(string(sig), payload)
	}
	all := append([]instr.Option{
		instr.WithTimeScale(scale),
		instr.WithSpanExporter(tee{next: otlp.NewSpanExporter(sink), c: c}),
		instr.WithMetricReader(sdkmetric.NewPeriodicReader(otlp.NewMetricExporter(sink), sdkmetric.WithInterval(metricInterval))),
		instr.WithFlushInterval(flushInterval),
		instr.WithLogger(log),
	}, opts...)
	l.sdk, err = instr.Setup(ctx, all...)
	if err != nil {
		_ = l.spool.Close()
		client.Close()
		return nil, fmt.Errorf("lab: %w", err)
	}
	return l, nil
}

// setupLostSDK builds an SDK whose export never reaches the collector (a
// process whose telemetry is lost on the way): the lab still keeps its copy
// of every span for the readings.
func setupLostSDK(ctx context.Context, scale float64, c *capture, log *slog.Logger, opts ...instr.Option) (*launch, error) {
	l := &launch{}
	all := append([]instr.Option{
		instr.WithErrorHandler(l.refuse),
		instr.WithTimeScale(scale),
		instr.WithSpanExporter(tee{next: lost{}, c: c}),
		instr.WithMetricReader(sdkmetric.NewManualReader()),
		instr.WithFlushInterval(flushInterval),
		instr.WithLogger(log),
	}, opts...)
	sdk, err := instr.Setup(ctx, all...)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	l.sdk = sdk
	return l, nil
}

// lost is an exporter whose batches never arrive anywhere.
type lost struct{}

func (lost) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (lost) Shutdown(context.Context) error                             { return nil }

// flush spools what the SDK holds and delivers the spool.
func (l *launch) flush(ctx context.Context) error {
	err := l.sdk.ForceFlush(ctx)
	if l.spool != nil {
		err = errors.Join(err, l.spool.Flush(ctx))
	}
	return err
}

// shutdown ends the launch, delivering what it can within ctx.
func (l *launch) shutdown(ctx context.Context) error {
	err := l.sdk.Shutdown(ctx)
	if l.spool != nil {
		err = errors.Join(err, l.spool.Flush(ctx), l.spool.Close())
		l.client.Close()
	}
	return err
}
