package verdict

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// TestLiveCountsReadInKindOrder: a turn's live counts read in LiveKinds
// order, then kinds of no known name by name, whatever order the span
// carries them in, each with its history before its count now.
func TestLiveCountsReadInKindOrder(t *testing.T) {
	span := ptrace.NewSpan()
	span.SetName(semconv.SpanVoiceTurn)
	a := span.Attributes()
	a.PutInt(semconv.LiveAttr("zebras"), 1)
	a.PutInt(semconv.LiveAttr(semconv.LiveTakes), 3)
	a.PutInt(semconv.LiveAttr("antelopes"), 2)
	a.PutInt(semconv.LiveAttr(semconv.LivePlayers), 4)
	a.PutEmptySlice(semconv.LiveBeforeAttr(semconv.LivePlayers)).FromRaw([]any{int64(1), int64(2)})
	got := ReadTurn(pcommon.NewResource(), span).Live
	want := []LiveSeries{
		{Kind: semconv.LivePlayers, Series: []int64{1, 2, 4}},
		{Kind: semconv.LiveTakes, Series: []int64{3}},
		{Kind: "antelopes", Series: []int64{2}},
		{Kind: "zebras", Series: []int64{1}},
	}
	if !slices.EqualFunc(got, want, func(a, b LiveSeries) bool { return a.Kind == b.Kind && slices.Equal(a.Series, b.Series) }) {
		t.Errorf("live counts %v, want %v", got, want)
	}
}
