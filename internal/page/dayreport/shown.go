package dayreport

import (
	"fmt"
	"slices"

	"github.com/percause/percause/instr/semconv"
)

// Shown is one reading of a turn as the day report and the verdict page
// show it: one row of Readings serves both, so a reading the verdict
// carries is shown by adding it there.
type Shown struct {
	Name, Value string
	// Note says what the value means against its bound ("over the 3.00 s
	// budget", "within …"); Notable: the note is worth a reader's eye
	// (the page shows only those).
	Note    string
	Notable bool
	// Read: a rule that fired on the turn read it (the page marks it).
	Read bool
}

// Readings is the turn's readings in the order they are shown, the post
// against budget; a reading the turn did not report is left out.
func (t JudgedTurn) Readings(budget float64) []Shown {
	var out []Shown
	if t.Underruns > 0 || t.Silent > 0 {
		out = append(out, Shown{Name: "underruns", Value: fmt.Sprintf("%d, %.2f s silent", t.Underruns, t.Silent),
			Read: len(t.Underran) > 0})
	}
	if t.SpeechEndToPost != nil {
		s := Shown{Name: "speech end to post", Value: fmt.Sprintf("%.2f s", *t.SpeechEndToPost),
			Note: fmt.Sprintf("within the %.2f s budget", budget)}
		if *t.SpeechEndToPost > budget {
			s.Note, s.Notable = fmt.Sprintf("over the %.2f s budget", budget), true
		}
		out = append(out, s)
	}
	if t.NotSent != nil {
		s := Shown{Name: "not sent", Value: fmt.Sprintf("%.2f s", *t.NotSent)}
		if *t.NotSent > 0 {
			s.Note, s.Notable = `a "not sent" wait`, true
		}
		out = append(out, s)
	}
	if t.PoolResets != nil {
		s := Shown{Name: "pool_reset", Value: fmt.Sprint(*t.PoolResets), Read: slices.Contains(t.Causes, semconv.CausePool)}
		if t.PoolResetsBefore != nil {
			s.Value = fmt.Sprintf("%d (before: %d)", *t.PoolResets, *t.PoolResetsBefore)
		}
		out = append(out, s)
	}
	return out
}
