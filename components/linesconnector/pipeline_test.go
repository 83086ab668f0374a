package linesconnector_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/percause/percause/components/linesconnector"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/linestest"
	"github.com/percause/percause/lab/verdicts"
	"github.com/percause/percause/processors/verdictprocessor"
)

// file is one log file fed to the pipeline.
type file struct {
	name string
	data []byte
}

// malformedLine is a malformed line as the connector logged it.
type malformedLine struct {
	File   string `json:"file"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// run is what a pipeline run gives: the verdicts, the spans the connector
// made, its logs of malformed lines and its own counts.
type run struct {
	verdicts  map[string]verdicts.Verdict
	traces    []ptrace.Traces // what the connector emitted
	malformed []malformedLine
	counts    map[string]int64 // otelcol_connector_lines_* sums, by metric[/attribute]
}

// pipeline is the lines connector → the verdict processor → a sink, in
// process, as the collector wires them.
type pipeline struct {
	t    testing.TB
	conn interface {
		ConsumeLogs(context.Context, plog.Logs) error
	}
	stop []func()
	out  *consumertest.TracesSink
	made *consumertest.TracesSink
	logs *observer.ObservedLogs
	tel  *componenttest.Telemetry
	ctx  context.Context
}

func newPipeline(t testing.TB, mut func(*linesconnector.Config)) *pipeline {
	t.Helper()
	ctx := context.Background()
	p := &pipeline{t: t, ctx: ctx, out: new(consumertest.TracesSink), made: new(consumertest.TracesSink), tel: componenttest.NewTelemetry()}
	pf := verdictprocessor.NewFactory()
	// A day's lines are a finite input, as percause lines reads them.
	pcfg := pf.CreateDefaultConfig().(*verdictprocessor.Config)
	pcfg.EndOfInput = true
	proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pcfg, p.out)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	cf := linesconnector.NewFactory()
	cfg := cf.CreateDefaultConfig().(*linesconnector.Config)
	if mut != nil {
		mut(cfg)
	}
	core, logs := observer.New(zap.WarnLevel)
	p.logs = logs
	set := connectortest.NewNopSettings(cf.Type())
	set.TelemetrySettings = p.tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	fan := &fanout{next: []interface {
		ConsumeTraces(context.Context, ptrace.Traces) error
	}{p.made, proc}}
	conn, err := cf.CreateLogsToTraces(ctx, set, cfg, fan)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	p.conn = conn
	p.stop = []func(){
		func() {
			if err := conn.Shutdown(ctx); err != nil {
				t.Errorf("connector shutdown: %v", err)
			}
		},
		func() {
			if err := proc.Shutdown(ctx); err != nil {
				t.Errorf("processor shutdown: %v", err)
			}
		},
	}
	return p
}

// feed sends a file's lines, one log record per line in one batch, with the
// attributes the filelog receiver sets.
func (p *pipeline) feed(f file) {
	p.t.Helper()
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	lines := bytes.SplitAfter(f.data, []byte("\n"))
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		lr := lrs.AppendEmpty()
		lr.Body().SetStr(string(bytes.TrimRight(l, "\n")))
		lr.Attributes().PutStr(linesconnector.AttrFileName, f.name)
		lr.Attributes().PutInt(linesconnector.AttrRecordNumber, int64(i+1))
	}
	if err := p.conn.ConsumeLogs(p.ctx, ld); err != nil {
		p.t.Fatalf("ConsumeLogs: %v", err)
	}
}

// finish shuts the pipeline down (the connector first, as the collector
// does) and reads what it did.
func (p *pipeline) finish() run {
	p.t.Helper()
	for _, f := range p.stop {
		f()
	}
	vs, err := linestest.Verdicts(p.out.AllTraces()...)
	if err != nil {
		p.t.Fatal(err)
	}
	r := run{verdicts: vs, traces: p.made.AllTraces(), counts: map[string]int64{}}
	for _, e := range p.logs.FilterMessage("lines connector: malformed line").All() {
		m := e.ContextMap()
		line, _ := m["line"].(int64)
		r.malformed = append(r.malformed, malformedLine{File: m["file"].(string), Line: line, Reason: m["reason"].(string)})
	}
	for _, name := range []string{"lines", "malformed", "unknown_fields", "turns", "takes", "dropped", "pending"} {
		m, err := p.tel.GetMetric("otelcol_connector_lines_" + name)
		if err != nil {
			continue // never recorded
		}
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, dp := range d.DataPoints {
				key := name
				for _, kv := range dp.Attributes.ToSlice() {
					key += "/" + kv.Value.AsString()
				}
				r.counts[key] += dp.Value
			}
		}
	}
	_ = p.tel.Shutdown(p.ctx)
	return r
}

// decideLines runs files through a fresh pipeline in the order given.
func decideLines(t testing.TB, files ...file) run {
	t.Helper()
	p := newPipeline(t, nil)
	for _, f := range files {
		p.feed(f)
	}
	return p.finish()
}

// decideSpans runs the SDK's own spans through the verdict processor alone.
func decideSpans(t testing.TB, traces []ptrace.Traces) map[string]verdicts.Verdict {
	t.Helper()
	ctx := context.Background()
	sink := new(consumertest.TracesSink)
	pf := verdictprocessor.NewFactory()
	// The recorded spans are a finite input too, decided when they end.
	pcfg := pf.CreateDefaultConfig().(*verdictprocessor.Config)
	pcfg.EndOfInput = true
	proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pcfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	for _, td := range traces {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		if err := proc.ConsumeTraces(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := proc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	vs, err := linestest.Verdicts(sink.AllTraces()...)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// fanout hands each batch to every consumer, each its own copy.
type fanout struct {
	next []interface {
		ConsumeTraces(context.Context, ptrace.Traces) error
	}
}

func (f *fanout) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	for _, n := range f.next {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		if err := n.ConsumeTraces(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (f *fanout) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// spansOf lists the spans of traces with their resource.
func spansOf(traces []ptrace.Traces) (out []struct {
	res  pcommon.Resource
	span ptrace.Span
}) {
	for _, td := range traces {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					out = append(out, struct {
						res  pcommon.Resource
						span ptrace.Span
					}{rss.At(i).Resource(), ss.At(k)})
				}
			}
		}
	}
	return out
}

// TestNegativeScalarsAreBadInput: docs/lines.md says a negative duration or
// count is read as given and decides the turn unknown, named after "bad
// input:". Every scalar of a turn line does: the index, the declared
// units, the totals of underruns and silence, and post, each named in the
// evidence.
func TestNegativeScalarsAreBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		line  string
		names []string
	}{
		"underruns and silent":    {"[voice-turn] turn=1 link=wifi units=1 gaps=0.10 underruns=-1 silent=-2.0", []string{"underruns=-1", "silent=-2.00"}},
		"post":                    {"[voice-turn] turn=1 link=wifi units=1 gaps=0.10 underruns=0 post=-1.0", []string{"pippa.turn.speech_end_to_post"}},
		"the index":               {"[voice-turn] turn=-3 link=wifi units=1 gaps=0.10 underruns=0", []string{"pippa.turn.index"}},
		"the units":               {"[voice-turn] turn=1 link=wifi units=-3", []string{"pippa.turn.units"}},
		"all of them on one turn": {"[voice-turn] turn=-3 link=wifi units=-3 underruns=-1 silent=-2.0 post=-1.0", []string{"pippa.turn.index", "pippa.turn.units", "underruns=-1", "silent=-2.00", "pippa.turn.speech_end_to_post"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := decideLines(t, file{"phone.log", []byte(tc.line + "\n")})
			if len(r.verdicts) != 1 {
				t.Fatalf("%d verdicts, want 1", len(r.verdicts))
			}
			for _, v := range r.verdicts {
				if v.Cause != semconv.CauseUnknown || !strings.Contains(v.Evidence, "bad input: ") {
					t.Errorf("%s %q, want unknown with bad input", v.Cause, v.Evidence)
				}
				for _, n := range tc.names {
					if !strings.Contains(v.Evidence, n) {
						t.Errorf("the evidence %q does not name %s", v.Evidence, n)
					}
				}
			}
		})
	}
}
