package verdictpage

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
	"github.com/percause/percause/internal/testsupport/carried"
	"github.com/percause/percause/verdict"
)

// TestEveryCarriedReadingArrives (the page's part): a verdict span with
// every reading the verdict carries shows each on the turn's page (the
// day report's turn reads them, the page prints them). The line fields,
// the verdict's readers and the stored codec have their own part, under
// the same name.
func TestEveryCarriedReadingArrives(t *testing.T) {
	span := ptrace.NewSpan()
	span.SetName(semconv.SpanVoiceTurn)
	span.SetSpanID(pcommon.SpanID{1})
	carried.Put(span.Attributes())
	tr := &verdict.Trace{ID: pcommon.TraceID{1}, Turn: verdict.ReadTurn(pcommon.NewResource(), span)}
	c := verdict.DefaultRules()
	r := verdict.RecordOf(tr, verdict.Decide(tr, nil, &c, verdict.Forced{}), "", 1)
	td := ptrace.NewTraces()
	verdict.Append(td, tr.Turn.Resource, &r, 0)
	rs := td.ResourceSpans().At(0)

	tv := turnOf(dayreport.TurnFromVerdict(rs.Resource(), rs.ScopeSpans().At(0).Spans().At(0)), nil, time.UTC, 3, links{})
	var shown strings.Builder
	shown.WriteString(tv.Route)
	for _, rd := range tv.Readings {
		fmt.Fprintf(&shown, "\n%s: %s", rd.Name, rd.Value)
	}
	for i, name := range carried.Names() {
		if want := shownAs(carried.Value(i, name)); !strings.Contains(shown.String(), want) {
			t.Errorf("the turn's page does not show %s (%q): it shows\n%s", name, want, shown.String())
		}
	}
}

// shownAs is how the page prints a value: seconds with two decimals, a
// count as it is, a route by its outputs, and Bluetooth by name.
func shownAs(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return fmt.Sprintf("%.2f", v.Double())
	case pcommon.ValueTypeInt:
		return fmt.Sprint(v.Int())
	case pcommon.ValueTypeBool:
		return "(Bluetooth)"
	case pcommon.ValueTypeSlice:
		return v.Slice().At(0).Str()
	}
	return v.AsString()
}
