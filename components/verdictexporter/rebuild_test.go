package verdictexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/percause/percause/instr/semconv"
)

// turnN is turnAt for any turn number: its own trace, span and take,
// decided a second after it.
func turnN(i int, at time.Time) ptrace.Traces {
	td := turnAt(byte(i), at)
	s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	s.SetTraceID(pcommon.TraceID{0xAA, 13: byte(i >> 16), 14: byte(i >> 8), 15: byte(i)})
	s.SetSpanID(pcommon.SpanID{0xBB, 5: byte(i >> 16), 6: byte(i >> 8), 7: byte(i)})
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Second)))
	s.Attributes().PutInt(semconv.TurnIndex, int64(i))
	s.Events().At(1).Attributes().PutStr(semconv.TakeID, fmt.Sprintf("take-%d", i))
	return td
}

// jsonLine is td as the exporter writes it.
func jsonLine(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, ok := appendJSON(nil, td)
	if !ok {
		t.Fatal("the exporter's encoding refused a test batch")
	}
	return append(b, '\n')
}

// keptTraces lists the trace IDs of the turns and the span IDs of the link
// changes the store holds, in its order.
func keptTraces(p *pageStore, now time.Time) (turns, links []string) {
	ts, ls, _, _, _ := p.snapshot(time.Time{}, now)
	for _, t := range ts {
		turns = append(turns, t.Trace)
	}
	for _, l := range ls {
		links = append(links, l.Span)
	}
	return turns, links
}

// TestPageRebuiltAcrossARotation: the page's turns are read back from the
// verdict file and, past its start, from PATH.1, newest first.
func TestPageRebuiltAcrossARotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "verdicts.jsonl")
	cfg := pageConfig(path)
	cfg.Rotation = RotationConfig{MaxMegabytes: 1, MaxBackups: 2}
	cfg.Keep.Turns = 60
	cfg.Recent = 10 // the span IDs alone would not need PATH.1
	base := testNow.Add(-24 * time.Hour)
	c := &clock{testNow}
	e := startWith(t, cfg, newHost(t), c)
	ctx := context.Background()
	n, after := 0, -1
	for after < 30 {
		if err := e.ConsumeTraces(ctx, turnN(n, base.Add(time.Duration(n)*time.Second))); err != nil {
			t.Fatal(err)
		}
		n++
		if _, err := os.Stat(path + ".1"); err == nil {
			after++
		}
	}
	wantTurns, _ := keptTraces(e.watch(), c.t)
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	e2 := startWith(t, cfg, newHost(t), c)
	gotTurns, _ := keptTraces(e2.page, c.t)
	if len(gotTurns) != 60 || !slices.Equal(gotTurns, wantTurns) {
		t.Fatalf("after the restart the page holds %d turns, want the %d it held before", len(gotTurns), len(wantTurns))
	}
	if e2.rebuilt.Files != 2 {
		t.Errorf("the start read %d files, want PATH and PATH.1", e2.rebuilt.Files)
	}
	// The oldest turn kept is in PATH.1; the newest in PATH.
	inFile := func(p, trace string) bool {
		b, _ := os.ReadFile(p)
		return strings.Contains(string(b), trace)
	}
	if !inFile(path+".1", gotTurns[0]) || !inFile(path, gotTurns[len(gotTurns)-1]) {
		t.Error("the turns kept do not span the rotation")
	}
}

// TestRebuildSkipsABrokenLine: a line of the verdict file that does not
// read is skipped and counted; the lines around it are read back, for the
// page and against writing a verdict twice.
func TestRebuildSkipsABrokenLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verdicts.jsonl")
	var file []byte
	for i := range 3 {
		file = append(file, jsonLine(t, turnN(i, testNow.Add(-time.Duration(3-i)*time.Minute)))...)
		if i == 1 {
			file = append(file, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"percause.verdict"`+"\n"...)
		}
	}
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &clock{testNow}
	e, tel := startWithTelemetry(t, pageConfig(path), newHost(t), c)
	if turns, _ := keptTraces(e.page, c.t); len(turns) != 3 {
		t.Errorf("the page holds %d turns, want the 3 around the broken line", len(turns))
	}
	if e.rebuilt.Broken != 1 {
		t.Errorf("%d broken lines counted, want 1", e.rebuilt.Broken)
	}
	m, err := tel.GetMetric("otelcol_exporter_verdicts_file_broken_lines")
	if err != nil {
		t.Fatalf("the broken line is not in the telemetry: %v", err)
	}
	if sum, ok := m.Data.(metricdata.Sum[int64]); !ok || len(sum.DataPoints) != 1 || sum.DataPoints[0].Value != 1 {
		t.Errorf("otelcol_exporter_verdicts_file_broken_lines = %+v, want 1", m.Data)
	}
	if err := e.ConsumeTraces(context.Background(), turnN(0, testNow.Add(-3*time.Minute))); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), `"spanId":"bb00000000000000"`); n != 1 {
		t.Errorf("the file holds turn 0's verdict %d times after it came again, want once", n)
	}
}

// TestRebuildReadsOnlyAsFarAsNeeded: from a file of 2,000 turns, one a
// minute, the start reads back what the page's store holds, the same the
// store held when the lines came, and no further: once keep.turns and
// keep.link_changes are in, or once keep.age is passed. While only link
// changes are still wanted, the lines without one are passed over.
func TestRebuildReadsOnlyAsFarAsNeeded(t *testing.T) {
	const n = 2000
	base := testNow.Add(-n * time.Minute)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	lagLines := int(writeLag / time.Minute)
	for _, tc := range []struct {
		name  string
		keep  KeepConfig
		links []int // the turns a link change is written after (-1: before the first)
		// the most lines decoded and bytes read, and the fewest passed over
		maxParsed  int
		maxBytes   float64 // of the file
		minSkipped int
	}{
		{name: "keep.turns and keep.link_changes met", keep: KeepConfig{Age: DefaultKeepAge, Turns: 100, LinkChanges: 3},
			links: []int{1950, 1990, 1995, 1999}, maxParsed: 100 + 3 + lagLines + 2, maxBytes: 0.1},
		{name: "link changes rare: the rest passed over", keep: KeepConfig{Age: DefaultKeepAge, Turns: 100, LinkChanges: 3},
			links: []int{-1, 1999}, maxParsed: 100 + 2 + lagLines + 2 + n/40, maxBytes: 1.01, minSkipped: n - 200},
		{name: "keep.age met first", keep: KeepConfig{Age: 10 * time.Hour, Turns: 5000, LinkChanges: 3},
			links: []int{1999}, maxParsed: 600 + 1 + lagLines + 2, maxBytes: 0.4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "verdicts.jsonl")
			now := at(n)
			ref := newPageStore(tc.keep)
			var file []byte
			l := 0
			addLink := func() {
				td := linkAt(byte(l+1), at(0).Add(time.Duration(tc.links[l])*time.Minute+30*time.Second), semconv.LinkStatusConnectionLost)
				file = append(file, jsonLine(t, td)...)
				rs := td.ResourceSpans().At(0)
				it, _ := itemOf(rs, rs.ScopeSpans().At(0).Spans().At(0))
				ref.add([]item{it}, now)
				l++
			}
			for l < len(tc.links) && tc.links[l] < 0 {
				addLink()
			}
			for i := range n {
				td := turnN(i, at(i))
				if i == n-1 { // the last line: a turn delivered late, from the page's last 100
					td = turnN(n, at(1950).Add(30*time.Second))
				}
				file = append(file, jsonLine(t, td)...)
				rs := td.ResourceSpans().At(0)
				it, _ := itemOf(rs, rs.ScopeSpans().At(0).Spans().At(0))
				ref.add([]item{it}, now)
				for l < len(tc.links) && tc.links[l] <= i {
					addLink()
				}
			}
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := pageConfig(path)
			cfg.Keep, cfg.Recent = tc.keep, 50
			e := startWith(t, cfg, newHost(t), &clock{now})
			st := e.rebuilt
			t.Logf("%d bytes in the file; %+v", len(file), st)
			wantTurns, wantLinks := keptTraces(ref, now)
			gotTurns, gotLinks := keptTraces(e.page, now)
			if !slices.Equal(gotTurns, wantTurns) || !slices.Equal(gotLinks, wantLinks) {
				t.Errorf("read back %d turns and %d link changes, want the %d and %d kept as they came", len(gotTurns), len(gotLinks), len(wantTurns), len(wantLinks))
			}
			if st.Parsed > tc.maxParsed {
				t.Errorf("%d lines decoded, want at most %d", st.Parsed, tc.maxParsed)
			}
			if float64(st.Bytes) > tc.maxBytes*float64(len(file)) {
				t.Errorf("%d bytes read of %d, want at most %.0f%%", st.Bytes, len(file), 100*tc.maxBytes)
			}
			if st.Skipped < tc.minSkipped {
				t.Errorf("%d lines passed over, want at least %d", st.Skipped, tc.minSkipped)
			}
		})
	}
}

// TestRebuildReadsPastAVerdictWrittenLate: a verdict the processor sent
// again minutes after its decision sits in the file after turns decided
// later; reading back does not stop at it while a turn before it may be
// newer than the oldest kept.
func TestRebuildReadsPastAVerdictWrittenLate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verdicts.jsonl")
	at := func(min, sec int) time.Time {
		return testNow.Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second)
	}
	// Oldest first, as written; each decided a second after it started.
	// Turn 3 was refused and sent again: written after turn 2, four and a
	// half minutes after its decision.
	turns := []struct {
		n     int
		start time.Time
	}{{1, at(2, 0)}, {2, at(9, 30)}, {3, at(5, 0)}, {4, at(9, 0)}, {5, at(10, 0)}}
	var file []byte
	for _, tr := range turns {
		file = append(file, jsonLine(t, turnN(tr.n, tr.start))...)
	}
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := pageConfig(path)
	cfg.Keep.Turns, cfg.Recent = 2, 1
	now := at(11, 0)
	e := startWith(t, cfg, newHost(t), &clock{now})
	got, _ := keptTraces(e.page, now)
	want := []string{pcommon.TraceID{0xAA, 15: 2}.String(), pcommon.TraceID{0xAA, 15: 5}.String()}
	if !slices.Equal(got, want) {
		t.Errorf("read back turns %v, want 2 and 5 (the two newest)", got)
	}
}
