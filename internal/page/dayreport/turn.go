package dayreport

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/plural"
)

// One turn as `percause turn` prints it.

// ForcedReason says in words why a turn was decided before everything it
// names had arrived (the verdict's percause.forced), worded apart from the
// causes: "wait" is the processor's wait for takes, not the wait cause.
func ForcedReason(forced string) string {
	switch forced {
	case "":
		return ""
	case "wait":
		return "its takes had not all come when the processor's wait ran out"
	case "max_age":
		return "it was held as long as the processor's max_age allows"
	case "pending_limit":
		return "the processor held as many turns as max_pending allows"
	case "shutdown":
		return "the collector shut down while it waited"
	}
	return "for a reason this build does not know: " + forced
}

// LinkReadings are the readings a lost-link status change was chosen on,
// in words: "progress check failing for 6.2 s, quiet for 15.5 s".
func LinkReadings(l LinkChange) string {
	var rs []string
	switch {
	case l.FailingFor != nil && l.Check != "":
		rs = append(rs, fmt.Sprintf("%s failing for %.1f s", l.Check, *l.FailingFor))
	case l.FailingFor != nil:
		rs = append(rs, fmt.Sprintf("failing for %.1f s", *l.FailingFor))
	case l.Check != "":
		rs = append(rs, l.Check)
	}
	if l.QuietFor != nil {
		rs = append(rs, fmt.Sprintf("quiet for %.1f s", *l.QuietFor))
	}
	return strings.Join(rs, ", ")
}

// LinksOf are the link status changes of one trace (a turn's), in the
// order they came.
func LinksOf(links []LinkChange, trace string) []LinkChange {
	var out []LinkChange
	for _, l := range links {
		if l.Trace == trace {
			out = append(out, l)
		}
	}
	return out
}

// WriteTurn writes one turn as `percause turn` prints it: its verdict,
// evidence and readings, what rule 1 read of each unit that underran, and
// the phone's link status changes during the turn; times in loc.
func WriteTurn(w io.Writer, t JudgedTurn, links []LinkChange, budget float64, loc *time.Location) error {
	if loc == nil {
		loc = time.UTC
	}
	bw := &errWriter{w: w}
	when := "time not reported"
	if t.Start != 0 {
		when = t.Start.AsTime().In(loc).Format("2006-01-02 15:04:05 MST")
	}
	bw.printf("turn %d · %s · trace %s\n", t.Turn, when, t.Trace)
	writeVerdictRows(bw, t)
	writeReadingRows(bw, t, budget)
	if who := fromOf(t); who != "" {
		bw.row("from", "%s", who)
	}
	writeUnderran(bw, t)
	writeLinks(bw, links, loc)
	return bw.err
}

// row writes one name and its value, the names in a column.
func (e *errWriter) row(name, format string, args ...any) {
	e.printf("  %-20s %s\n", name, fmt.Sprintf(format, args...))
}

// writeVerdictRows writes what the verdict says: its causes, evidence,
// why it was decided early, the link and the route.
func writeVerdictRows(bw *errWriter, t JudgedTurn) {
	cause := t.Cause
	if cause == "" {
		cause = "(no verdict)"
	}
	bw.row("verdict", "%s", cause)
	if len(t.Causes) > 0 {
		bw.row("implicated", "%s", strings.Join(t.Causes, ", "))
	}
	bw.row("evidence", "%s", orNone(t.Evidence))
	if t.Forced != "" {
		bw.row("decided early", "%s (%s)", ForcedReason(t.Forced), t.Forced)
	}
	bw.row("link", "%s", linkOf(t))
	if len(t.Outputs) > 0 {
		route := strings.Join(t.Outputs, ", ")
		if t.Bluetooth != nil && *t.Bluetooth {
			route += " (Bluetooth)"
		}
		bw.row("route", "%s", route)
	}
}

// writeReadingRows writes the turn's readings (Readings), each with its
// note.
func writeReadingRows(bw *errWriter, t JudgedTurn, budget float64) {
	for _, r := range t.Readings(budget) {
		if r.Note != "" {
			bw.row(r.Name, "%s (%s)", r.Value, r.Note)
		} else {
			bw.row(r.Name, "%s", r.Value)
		}
	}
}

// fromOf names where the turn came from: its installation, launch, the
// app's version and the rules' ("" when none is known).
func fromOf(t JudgedTurn) string {
	var who []string
	if t.Installation != "" {
		who = append(who, "installation "+t.Installation)
	}
	if t.Launch != "" {
		who = append(who, "launch "+t.Launch)
	}
	if t.Version != "" {
		who = append(who, "version "+t.Version)
	}
	if t.Rules != "" {
		who = append(who, "rules "+t.Rules)
	}
	return strings.Join(who, ", ")
}

// writeUnderran writes each unit that underran, its take's need against
// its cushion.
func writeUnderran(bw *errWriter, t JudgedTurn) {
	if len(t.Underran) == 0 {
		return
	}
	bw.printf("units that underran, each take's need against the unit's cushion:\n")
	for _, u := range t.Underran {
		need := "the take never came"
		if u.Need != nil {
			cmp := "≤"
			if u.Cause == semconv.CauseSynthesis {
				cmp = ">"
			}
			need = fmt.Sprintf("need %.2f s %s cushion %.2f s", *u.Need, cmp, u.Cushion)
		}
		bw.printf("  unit %d, take %s: %s, %.2f s silent; %s: read as %s\n", u.Unit, u.Take, plural.N(u.Underruns, "underrun"), u.Silent, need, u.Cause)
	}
}

// writeLinks writes the link status changes during the turn.
func writeLinks(bw *errWriter, links []LinkChange, loc *time.Location) {
	if len(links) == 0 {
		return
	}
	bw.printf("link status during the turn:\n")
	for _, l := range links {
		prev := ""
		if l.Previous != "" {
			prev = l.Previous + " → "
		}
		bw.printf("  %s %s%s", l.Time.AsTime().In(loc).Format("15:04:05"), prev, l.Status)
		if l.Message != "" {
			bw.printf(": %q", l.Message)
		}
		if r := LinkReadings(l); r != "" {
			bw.printf(" (%s)", r)
		}
		bw.printf("\n")
	}
}
