package verdicts

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// line builds one OTLP JSON export request as the verdicts exporter writes it:
// a turn's spans plus its verdict span.
func line(t *testing.T, traceByte byte, cause string, causes ...string) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
	ss := rs.ScopeSpans().AppendEmpty()
	tid := pcommon.TraceID{traceByte, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	turn := ss.Spans().AppendEmpty()
	turn.SetName(semconv.SpanVoiceTurn)
	turn.SetTraceID(tid)
	v := ss.Spans().AppendEmpty()
	v.SetName(semconv.SpanVerdict)
	v.SetTraceID(tid)
	a := v.Attributes()
	a.PutStr(semconv.VerdictCause, cause)
	sl := a.PutEmptySlice(semconv.VerdictCauses)
	for _, c := range causes {
		sl.AppendEmpty().SetStr(c)
		ev := v.Events().AppendEmpty()
		ev.SetName(semconv.EventImplicated)
		ev.Attributes().PutStr(semconv.VerdictCause, c)
	}
	a.PutStr(semconv.VerdictEvidence, "unit 1: 2 underruns")
	a.PutStr(semconv.VerdictRulesVersion, semconv.RulesVersion)
	a.PutInt(semconv.TurnIndex, 3)
	a.PutInt(semconv.VerdictUnderruns, 2)
	a.PutDouble(semconv.VerdictSilent, 1.25)
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	vs, err := Parse(line(t, 0xab, semconv.CauseNetwork, semconv.CauseNetwork, semconv.CauseState))
	if err != nil {
		t.Fatal(err)
	}
	want := Verdict{
		TraceID: "ab0102030405060708090a0b0c0d0e0f", Cause: semconv.CauseNetwork,
		Causes: []string{semconv.CauseNetwork, semconv.CauseState}, Evidence: "unit 1: 2 underruns",
		Rules: semconv.RulesVersion, Turn: 3, Underruns: 2, Silent: 1.25,
		Implicated: []string{semconv.CauseNetwork, semconv.CauseState},
	}
	if len(vs) != 1 || !reflect.DeepEqual(vs[0], want) {
		t.Errorf("Parse =\n %+v, want\n %+v", vs, want)
	}
}

// The golden file is a real collector's verdict file from a lab run (the
// healthy and network scenarios), cut to its verdict spans.
func TestParseGolden(t *testing.T) {
	r := NewReader(filepath.Join("testdata", "verdicts.jsonl"))
	if err := r.Refresh(); err != nil {
		t.Fatal(err)
	}
	all := r.All()
	if len(all) == 0 || r.Broken() != 0 {
		t.Fatalf("%d verdicts, %d broken lines", len(all), r.Broken())
	}
	want := map[string]string{
		"82efdf7218b7b2a7361e95777a7b9166": semconv.CauseNone,
		"c7a713554ff784d8f45e767f342f1a10": semconv.CauseNone,
		"ca7990476ae5bec16ab0805d96aec250": semconv.CauseNetwork,
	}
	if len(all) != len(want) {
		t.Fatalf("%d verdicts, want %d", len(all), len(want))
	}
	for id, cause := range want {
		v := all[id]
		if v.Cause != cause || v.Rules != semconv.RulesVersion || len(v.Causes) == 0 || v.Evidence == "" ||
			!reflect.DeepEqual(v.Implicated, v.Causes) {
			t.Errorf("verdict %s: %+v, want cause %s", id, v, cause)
		}
	}
}

func TestReaderFollowsAppendsAndPartialLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verdicts.jsonl")
	r := NewReader(path)
	if err := r.Refresh(); err != nil { // no file yet: no verdicts, no error
		t.Fatal(err)
	}
	first := append(line(t, 1, semconv.CauseNone, semconv.CauseNone), '\n')
	second := line(t, 2, semconv.CauseSynthesis, semconv.CauseSynthesis)
	// The second line arrives in two writes.
	if err := os.WriteFile(path, append(append(first, []byte("not json\n")...), second[:10]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(); err != nil {
		t.Fatal(err)
	}
	if n := len(r.All()); n != 1 || r.Broken() != 1 {
		t.Fatalf("after the first write: %d verdicts, %d broken", n, r.Broken())
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(append(second[10:], '\n'))
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := r.Wait(ctx, []string{"01010203040506070809" + "0a0b0c0d0e0f", "02010203040506070809" + "0a0b0c0d0e0f"})
	if err != nil {
		t.Fatal(err)
	}
	if got["020102030405060708090a0b0c0d0e0f"].Cause != semconv.CauseSynthesis {
		t.Errorf("verdicts %+v", got)
	}
}

func TestWaitNamesWhatIsMissing(t *testing.T) {
	r := NewReader(filepath.Join(t.TempDir(), "none.jsonl"))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := r.Wait(ctx, []string{"x"}); err == nil {
		t.Fatal("no error for a verdict that never came")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"percause.verdict","traceId":"0102030405060708090a0b0c0d0e0f10","attributes":[{"key":"percause.cause","value":{"stringValue":"none"}}]}]}]}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		vs, err := Parse(b)
		if err != nil && vs != nil {
			t.Fatal("verdicts with an error")
		}
	})
}
