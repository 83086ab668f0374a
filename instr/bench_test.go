package instr

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// discard is a span exporter that drops everything: the benchmarks measure
// recording, not export.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

const benchUnits = 20

func benchUnit(i int, start time.Time) Unit {
	u := Unit{Index: i + 1, TakeID: "t" + string(rune('a'+i)), Gap: 0.12, Lead: 0.3, Cushion: 1.5, Player: "queue",
		Start: start.Add(time.Duration(i) * time.Second), End: start.Add(time.Duration(i+1) * time.Second)}
	if i%5 == 2 {
		u.Underruns, u.Silent, u.Longest, u.Lead = 1, 0.4, 0.4, -0.2
	}
	return u
}

func newBenchSDK(b *testing.B, opts ...Option) *SDK {
	sdk, err := Setup(context.Background(), append([]Option{WithServiceName(semconv.ServicePhone),
		WithInstallationID(testInstallation), WithSpanExporter(discard{}), WithMetricReader(sdkmetric.NewManualReader())},
		opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	return sdk
}

// recordTurnSDK is a whole 20-unit turn report through the SDK.
func recordTurnSDK(sdk *SDK) {
	ctx, turn := sdk.StartTurn(context.Background())
	_ = ctx
	start := time.Now()
	turn.SetLink(semconv.LinkWifi, "")
	turn.SetRoute(Route{Inputs: []string{semconv.PortBuiltinMic}, Outputs: []string{semconv.PortBluetoothA2DP},
		SampleRate: 16000, Category: "play_and_record", Mode: "voice_chat"})
	turn.SetHealth(Health{DeviceUptime: 86400, AppUptime: 3600, Activations: 4, Memory: 180 << 20})
	turn.SetListen(Listen{Grant: 0.2, Session: 0.3, Total: 0.6})
	turn.SetRPM(0.18, 0.25)
	turn.SetSpeechEndToPost(0.8)
	turn.SetPoolResets(0)
	for i := range benchUnits {
		turn.Unit(benchUnit(i, start))
	}
	turn.End()
}

// rawTurn is the same turn written directly against the OpenTelemetry Go
// SDK: the same 21 spans with the same attributes and the same metric records.
type rawTurn struct {
	tracer                               trace.Tracer
	underruns, turns                     metric.Int64Counter
	silence, lead, cushion, notSent, s2p metric.Float64Histogram
	listen                               metric.Float64Histogram
	deviceUptime, appUptime              metric.Float64Gauge
	memory                               metric.Int64Gauge
	index                                int
	history                              [][6]int64
}

func newRawTurn(b *testing.B) *rawTurn {
	res := resource.NewSchemaless(attribute.String(semconv.ServiceName, semconv.ServicePhone),
		attribute.String(semconv.ServiceInstanceID, "i"), attribute.String(semconv.AppInstallationID, testInstallation))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(discard{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	m := mp.Meter("raw")
	r := &rawTurn{tracer: tp.Tracer("raw")}
	r.underruns, _ = m.Int64Counter(semconv.MetricUnderruns)
	r.turns, _ = m.Int64Counter(semconv.MetricTurns)
	r.silence, _ = m.Float64Histogram(semconv.MetricSilence, metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	r.lead, _ = m.Float64Histogram(semconv.MetricUnitLead, metric.WithExplicitBucketBoundaries(bucketsLead...))
	r.cushion, _ = m.Float64Histogram(semconv.MetricCushion, metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	r.notSent, _ = m.Float64Histogram(semconv.MetricNotSent, metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	r.s2p, _ = m.Float64Histogram(semconv.MetricSpeechEndToPost, metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	r.listen, _ = m.Float64Histogram(semconv.MetricListenOpen, metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	r.deviceUptime, _ = m.Float64Gauge(semconv.MetricDeviceUptime)
	r.appUptime, _ = m.Float64Gauge(semconv.MetricAppUptime)
	r.memory, _ = m.Int64Gauge(semconv.MetricMemory)
	return r
}

func (r *rawTurn) record() {
	ctx, root := r.tracer.Start(context.Background(), semconv.SpanVoiceTurn, trace.WithNewRoot(), trace.WithTimestamp(time.Now()))
	r.index++
	start := time.Now()
	link := metric.WithAttributes(attribute.String(semconv.NetworkConnectionType, semconv.LinkWifi))
	units := 0
	for i := range benchUnits {
		u := benchUnit(i, start)
		_, sp := r.tracer.Start(ctx, semconv.SpanVoiceUnit, trace.WithTimestamp(u.Start), trace.WithAttributes(
			attribute.Int(semconv.UnitIndex, u.Index),
			attribute.String(semconv.TakeID, u.TakeID),
			attribute.Float64(semconv.UnitGap, u.Gap),
			attribute.Float64(semconv.UnitLead, u.Lead),
			attribute.Int(semconv.UnitUnderruns, u.Underruns),
			attribute.Float64(semconv.UnitSilent, u.Silent),
			attribute.Float64(semconv.UnitLongest, u.Longest),
			attribute.Float64(semconv.UnitCushion, u.Cushion),
			attribute.String(semconv.UnitPlayer, u.Player),
		))
		sp.End(trace.WithTimestamp(u.End))
		units++
		if u.Underruns > 0 {
			r.underruns.Add(ctx, int64(u.Underruns), link)
		}
		r.silence.Record(ctx, u.Silent, link)
		r.lead.Record(ctx, u.Lead, link)
		r.cushion.Record(ctx, u.Cushion, link)
	}
	live := [6]int64{1, 1, 0, 0, 2, 0}
	attrs := []attribute.KeyValue{
		attribute.Int(semconv.TurnIndex, r.index),
		attribute.Bool(semconv.TurnStutter, false),
		attribute.Int(semconv.TurnUnits, units),
		attribute.Float64(semconv.TurnNotSent, 0),
		attribute.String(semconv.NetworkConnectionType, semconv.LinkWifi),
		attribute.StringSlice(semconv.RouteInputs, []string{semconv.PortBuiltinMic}),
		attribute.StringSlice(semconv.RouteOutputs, []string{semconv.PortBluetoothA2DP}),
		attribute.Bool(semconv.RouteBluetooth, true),
		attribute.Float64(semconv.RouteSampleRate, 16000),
		attribute.String(semconv.RouteCategory, "play_and_record"),
		attribute.String(semconv.RouteMode, "voice_chat"),
		attribute.Float64(semconv.HealthDeviceUptime, 86400),
		attribute.Float64(semconv.HealthAppUptime, 3600),
		attribute.Int(semconv.HealthActivations, 4),
		attribute.Int64(semconv.HealthMemory, 180<<20),
	}
	for k, kind := range semconv.LiveKinds {
		attrs = append(attrs, attribute.Int64(semconv.LiveAttr(kind), live[k]))
		if len(r.history) > 0 {
			series := make([]int64, len(r.history))
			for j, h := range r.history {
				series[j] = h[k]
			}
			attrs = append(attrs, attribute.Int64Slice(semconv.LiveBeforeAttr(kind), series))
		}
	}
	if len(r.history) == 3 {
		r.history = append(r.history[:0], r.history[1:]...)
	}
	r.history = append(r.history, live)
	attrs = append(attrs,
		attribute.Int(semconv.PoolResets, 0), attribute.Int(semconv.PoolResetsBefore, 0),
		attribute.Float64(semconv.ListenGrant, 0.2), attribute.Float64(semconv.ListenSession, 0.3),
		attribute.Float64(semconv.ListenTotal, 0.6),
		attribute.Float64(semconv.RPMLoaded, 0.18), attribute.Float64(semconv.RPMFresh, 0.25),
		attribute.Float64(semconv.TurnSpeechEndPost, 0.8),
	)
	root.SetAttributes(attrs...)
	root.End()
	r.turns.Add(ctx, 1, link)
	r.notSent.Record(ctx, 0, link)
	r.s2p.Record(ctx, 0.8, link)
	r.listen.Record(ctx, 0.2, metric.WithAttributes(attribute.String(semconv.ListenStage, semconv.StageGrant)))
	r.listen.Record(ctx, 0.3, metric.WithAttributes(attribute.String(semconv.ListenStage, semconv.StageSession)))
	r.listen.Record(ctx, 0.6, metric.WithAttributes(attribute.String(semconv.ListenStage, semconv.StageTotal)))
	r.deviceUptime.Record(ctx, 86400)
	r.appUptime.Record(ctx, 3600)
	r.memory.Record(ctx, 180<<20)
}

// cpuTime is the process's user+system CPU time so far: on a shared machine
// the CPU a recording costs varies far less than its wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loopCPU runs f b.N times and reports the process CPU per operation (the
// batch span processor's goroutine and the GC included) as cpu-ns/op.
func loopCPU(b *testing.B, f func()) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkTurnReport compares a whole 20-unit turn report (21 spans and
// about 70 metric records) through the SDK with the same spans and records
// written against the raw OpenTelemetry Go SDK. Target: sdk/raw ≤ 1.2.
func BenchmarkTurnReport(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		r := newRawTurn(b)
		loopCPU(b, r.record)
	})
	b.Run("sdk", func(b *testing.B) {
		sdk := newBenchSDK(b)
		sdk.Live().Add(semconv.LivePlayers, 1)
		loopCPU(b, func() { recordTurnSDK(sdk) })
	})
	b.Run("sdk+textlog", func(b *testing.B) {
		sdk := newBenchSDK(b, WithTextLog(io.Discard))
		loopCPU(b, func() { recordTurnSDK(sdk) })
	})
}

// BenchmarkMetricRecord compares one metric record as the SDK makes it (a
// precomputed attribute set) with the raw instrument given the same attribute.
// Target: sdk/raw ≤ 1.2.
func BenchmarkMetricRecord(b *testing.B) {
	ctx := context.Background()
	b.Run("raw", func(b *testing.B) {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		h, _ := mp.Meter("raw").Float64Histogram(semconv.MetricSilence, metric.WithExplicitBucketBoundaries(bucketsSeconds...))
		b.ReportAllocs()
		for b.Loop() {
			h.Record(ctx, 0.4, metric.WithAttributes(attribute.String(semconv.NetworkConnectionType, semconv.LinkWifi)))
		}
	})
	b.Run("sdk", func(b *testing.B) {
		sdk := newBenchSDK(b)
		in := sdk.inst
		b.ReportAllocs()
		for b.Loop() {
			in.silence.Record(ctx, 0.4, in.link(semconv.LinkWifi).rec...)
		}
	})
}

// BenchmarkTake is one engine take through the SDK (start, first byte, ten
// progress marks, end).
func BenchmarkTake(b *testing.B) {
	sdk := newBenchSDK(b, WithServiceName(semconv.ServiceEngine))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, take := sdk.StartTake(ctx, "t1")
		take.FirstByte()
		for i := range 10 {
			take.Progress(float64(i + 1))
		}
		take.End(11)
	}
}
