package verdictprocessor

import (
	"context"
	"sort"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

// The test builders write turns the way the phone and the engine export them:
// the phone's spans under its resource, the engine's takes under the engine's.

// baseTime is when the test turns happened.
var baseTime = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// sp describes one span of a test trace.
type sp struct {
	name   string
	id     byte // last byte of the span ID
	parent byte
	attrs  map[string]any
	events []ev
	engine bool
	trace  byte          // the trace; 0: the trace being built
	ago    time.Duration // how long before baseTime it happened
	launch string        // phone launch (service.instance.id); "" → "launch-1"
	// noUnits: a voice.turn without pippa.turn.units (as a client in
	// another language may send); the rule cases give every other turn the
	// count of its units, as the Go SDK does.
	noUnits bool
}

type ev struct {
	name  string
	attrs map[string]any
}

func merge(base map[string]any, more ...map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for _, m := range more {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// turn is a voice.turn span (span ID 1) with a Wi-Fi link by default.
func turn(attrs map[string]any, events ...ev) sp {
	return sp{name: semconv.SpanVoiceTurn, id: 1, attrs: merge(map[string]any{
		semconv.TurnIndex:             int64(2),
		semconv.NetworkConnectionType: semconv.LinkWifi,
	}, attrs), events: events}
}

// unit is a voice.unit span, child of the turn, reading take "t<index>"
// with a 1.50 s cushion and no underrun unless attrs say otherwise.
func unit(index int64, attrs map[string]any) sp {
	return sp{name: semconv.SpanVoiceUnit, id: byte(10 + index), parent: 1, attrs: merge(map[string]any{
		semconv.UnitIndex:     index,
		semconv.TakeID:        "t" + itoa(index),
		semconv.UnitUnderruns: int64(0),
		semconv.UnitCushion:   1.5,
		semconv.UnitLead:      0.2,
	}, attrs)}
}

// underrun is a unit that underran n times for silent seconds.
func underrun(index, n int64, silent float64, attrs map[string]any) sp {
	return unit(index, merge(map[string]any{
		semconv.UnitUnderruns: n,
		semconv.UnitSilent:    silent,
		semconv.UnitLongest:   silent,
	}, attrs))
}

// take is an engine tts.take span (span IDs from 0x80 up, apart from units').
func take(id string, need float64, attrs map[string]any) sp {
	var n byte
	for _, c := range id {
		n += byte(c)
	}
	return sp{name: semconv.SpanTTSTake, id: 0x80 | n, engine: true, attrs: merge(map[string]any{
		semconv.TakeID:        id,
		semconv.TakeFirstByte: 0.3,
		semconv.TakeTotal:     4.0,
		semconv.TakeAudio:     6.0,
		semconv.TakeRate:      1.5,
		semconv.TakeNeed:      need,
		semconv.TakeBeside:    int64(1),
	}, attrs)}
}

func itoa(n int64) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func traceID(n byte) pcommon.TraceID {
	return pcommon.TraceID{0xAA, 0xBB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n}
}

func spanID(trace, n byte) pcommon.SpanID {
	return pcommon.SpanID{0xCC, trace, 0, 0, 0, 0, 0, n}
}

// build makes one export batch holding the spans of trace n (and of other
// traces named by sp.trace).
func build(n byte, spans ...sp) ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := map[string]ptrace.ScopeSpans{}
	scopeFor := func(s sp) ptrace.ScopeSpans {
		key := "phone/" + s.launch
		if s.engine {
			key = "engine"
		}
		if ss, ok := scopes[key]; ok {
			return ss
		}
		rs := td.ResourceSpans().AppendEmpty()
		a := rs.Resource().Attributes()
		if s.engine {
			a.PutStr(semconv.ServiceName, semconv.ServiceEngine)
			a.PutStr(semconv.ServiceInstanceID, "engine-launch-1")
		} else {
			launch := s.launch
			if launch == "" {
				launch = "launch-1"
			}
			a.PutStr(semconv.ServiceName, semconv.ServicePhone)
			a.PutStr(semconv.ServiceInstanceID, launch)
			a.PutStr(semconv.AppInstallationID, "install-1")
		}
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("github.com/percause/percause/instr")
		scopes[key] = ss
		return ss
	}
	for _, s := range spans {
		t := n
		if s.trace != 0 {
			t = s.trace
		}
		span := scopeFor(s).Spans().AppendEmpty()
		span.SetTraceID(traceID(t))
		span.SetSpanID(spanID(t, s.id))
		if s.parent != 0 {
			span.SetParentSpanID(spanID(t, s.parent))
		}
		span.SetName(s.name)
		start := baseTime.Add(-s.ago).Add(time.Duration(s.id) * time.Millisecond)
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
		putSorted(span.Attributes(), s.attrs)
		for _, e := range s.events {
			pe := span.Events().AppendEmpty()
			pe.SetName(e.name)
			pe.SetTimestamp(pcommon.NewTimestampFromTime(start))
			putSorted(pe.Attributes(), e.attrs)
		}
	}
	return td
}

// putSorted puts the attributes in key order, so golden inputs written with
// -update do not change with map iteration order.
func putSorted(m pcommon.Map, attrs map[string]any) {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := m.PutEmpty(k).FromRaw(attrs[k]); err != nil {
			panic(err)
		}
	}
}

// harness runs a verdict processor on a test clock with its telemetry read
// by a manual reader.
type harness struct {
	t      testing.TB
	p      *verdictProcessor
	sink   *consumertest.TracesSink
	reader *sdkmetric.ManualReader
	// final is the processor's metrics as it stopped, read after that.
	final *metricdata.ResourceMetrics
	now   time.Time
	out   []ptrace.Traces // verdicts in the order they were emitted
}

func newHarness(t testing.TB, cfg *Config) *harness {
	t.Helper()
	h := &harness{t: t, sink: new(consumertest.TracesSink), reader: sdkmetric.NewManualReader(), now: baseTime.Add(time.Minute)}
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	p, err := newVerdictProcessor(set, cfg, h.sink, withClock(func() time.Time { return h.now }))
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	return h
}

// deliver hands one batch to the processor; the verdicts it completes come
// back appended to the batch.
func (h *harness) deliver(td ptrace.Traces) {
	h.t.Helper()
	in := td.SpanCount()
	before := h.sink.SpanCount()
	if err := h.p.ConsumeTraces(context.Background(), td); err != nil {
		h.t.Fatal(err)
	}
	if out := h.sink.SpanCount() - before; h.p.mode.sendsBatch() && out < in {
		h.t.Fatalf("processor dropped spans: %d in, %d out", in, out)
	}
	h.drainSink()
}

// advance moves the clock and sweeps, as the background ticker would.
func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.p.sweep(context.Background())
	h.drainSink()
}

func (h *harness) shutdown() {
	// The processor's counts are observed when read, and no longer once it
	// stopped: what the stop counted is read as it stops.
	h.p.tel.beforeShutdown = func() {
		h.final = new(metricdata.ResourceMetrics)
		if err := h.reader.Collect(context.Background(), h.final); err != nil {
			h.t.Error(err)
		}
	}
	if err := h.p.Shutdown(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.drainSink()
}

func (h *harness) drainSink() {
	for _, td := range h.sink.AllTraces() {
		h.collect(td)
	}
	h.sink.Reset()
}

// collect keeps the verdict spans of a batch.
func (h *harness) collect(td ptrace.Traces) {
	v := ptrace.NewTraces()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			if rs.ScopeSpans().At(j).Scope().Name() == metadata.ScopeName {
				rs.CopyTo(v.ResourceSpans().AppendEmpty())
				break
			}
		}
	}
	if v.ResourceSpans().Len() > 0 {
		h.out = append(h.out, v)
	}
}

// verdicts returns every verdict span emitted so far, in order.
func (h *harness) verdicts() []ptrace.Span {
	var out []ptrace.Span
	for _, td := range h.out {
		out = append(out, verdictSpans(td)...)
	}
	return out
}

// metrics reads the processor's own metrics: as they stand, or as they
// stood when it stopped.
func (h *harness) metrics() metricdata.ResourceMetrics {
	h.t.Helper()
	if h.final != nil {
		return *h.final
	}
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	return rm
}

// counter returns the processor's own counter value by attribute value.
func (h *harness) counter(name string) map[string]int64 {
	h.t.Helper()
	rm := h.metrics()
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				h.t.Fatalf("%s is a %T", name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				key := ""
				for _, kv := range dp.Attributes.ToSlice() {
					key = kv.Value.String()
				}
				out[key] += dp.Value
			}
		}
	}
	return out
}

// histogram returns the processor's own histogram's count and sum.
func (h *harness) histogram(name string) (uint64, float64) {
	h.t.Helper()
	rm := h.metrics()
	var count uint64
	var sum float64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			hist, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				h.t.Fatalf("%s is a %T", name, m.Data)
			}
			for _, dp := range hist.DataPoints {
				count += dp.Count
				sum += dp.Sum
			}
		}
	}
	return count, sum
}
