package livecheck

import (
	"strings"
	"testing"
)

// TestSummaryCounts: the summary says "1 turn", "2 turns", and a trace's
// verdict is its own.
func TestSummaryCounts(t *testing.T) {
	for _, c := range []struct {
		s    Summary
		want string
	}{
		{Summary{Turns: 1, Clean: 1}, "summary: 1 turn reported, 1 clean, 0 with faults\n"},
		{Summary{Turns: 2, Clean: 1, Faulty: 1, TakesOnly: 1, Late: 1},
			"summary: 2 turns reported, 1 clean, 1 with faults; 1 trace with only tts.take spans (no turn); 1 trace with spans after its verdict\n"},
		{Summary{TakesOnly: 2, Late: 3},
			"summary: 0 turns reported, 0 clean, 0 with faults; 2 traces with only tts.take spans (no turn); 3 traces with spans after their verdict\n"},
	} {
		var b strings.Builder
		if err := WriteSummary(&b, c.s); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("WriteSummary(%+v) = %q, want %q", c.s, b.String(), c.want)
		}
	}
}
