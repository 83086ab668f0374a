package verdict

import (
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
)

// maxUnderrunEvents bounds the underrun events a verdict carries.
const maxUnderrunEvents = 32

// MaxEvidence bounds the evidence sentence; it is a label-free attribute but
// still travels with every verdict.
const MaxEvidence = 1024

// Verdict is one turn's decision.
type Verdict struct {
	// Cause is the primary cause; Causes every implicated one, the primary
	// first.
	Cause    string
	Causes   []string
	Evidence string
	// Forced is why the turn was decided before everything it names had
	// arrived (ForcedWait, …), "" when it was not.
	Forced    string
	Link      string
	Index     int64
	Underruns int64
	Silent    float64
	// Underran is what the underrun rule read of each unit that underran,
	// for the verdict's percause.underrun events.
	Underran []Underrun
	// PoolBefore is the launch's tally at the end of its previous turn, as
	// the pool rule read it: the turn's own, or what the holder kept.
	PoolBefore Opt[int64]
	// HistoryDisagrees: the turn carried its own history and it differs
	// from what the holder kept of the launch (the turn's own was read).
	HistoryDisagrees bool
}

// Underrun is one unit that underran, with its take's need when the
// take came.
type Underrun struct {
	Unit      int64
	TakeID    string
	Underruns int64
	Silent    float64
	Cushion   float64
	Need      Opt[float64]
	Cause     string
}

// Reasons a turn is decided before everything it names has arrived.
const (
	ForcedWait         = "wait"
	ForcedMaxAge       = "max_age"
	ForcedPendingLimit = "pending_limit"
	ForcedShutdown     = "shutdown"
)

// Forced says a turn is decided before everything it names has arrived:
// the reason (ForcedWait, …) and how the holder words it ("forced after
// waiting 5s"); the decision adds what was missing.
type Forced struct {
	Reason string
	Why    string
	// Ended: nothing more will come (the input ended); the evidence says
	// what it ended before ("the input ended before take t2 came").
	Ended bool
}

// secs formats seconds the way the evidence prints them.
func secs(v float64) string { return string(appendSecs(nil, v)) }

// appendSecs is secs appended to b: the rules that write a sentence for
// every unit build it in one buffer, one allocation a sentence.
func appendSecs(b []byte, v float64) []byte {
	return append(strconv.AppendFloat(b, v, 'f', 2, 64), " s"...)
}

// secsApart formats a reading and the threshold it is compared with, with
// as many decimals as it takes (2 to 6) for two different values to read
// differently: a need of 1.504 s against a 1.50 s cushion reads
// "1.504 s > 1.500 s", not "1.50 s > 1.50 s".
func secsApart(a, b float64) (string, string) {
	var ba, bb [32]byte
	sa, sb := apart(&ba, &bb, a, b)
	return string(sa) + " s", string(sb) + " s"
}

// apart writes a and b into ba and bb (six decimals of any reading under
// 10^24 s, signed) with the decimals secsApart prints them with, and
// returns them without their unit. The last formatting tried is the one
// kept: each reading is formatted once per precision tried, not again to
// be written.
func apart(ba, bb *[32]byte, a, b float64) (sa, sb []byte) {
	for prec := 2; ; prec++ {
		sa, sb = strconv.AppendFloat(ba[:0], a, 'f', prec, 64), strconv.AppendFloat(bb[:0], b, 'f', prec, 64)
		if string(sa) != string(sb) || a == b || prec == 6 {
			return sa, sb
		}
	}
}

// Decide applies the rules of docs/domain.md, the table of table.go, to one
// trace: its own readings, and for the rules that read across turns, what
// the holder kept of the launch's earlier turns (nil: nothing). forced is
// the zero Forced unless the turn is decided early.
func Decide(p *Trace, e *Earlier, c *Rules, forced Forced) Verdict {
	t := newTurnView(p, e, c)
	var f findings
	for i := range rules {
		rules[i].fire(t, c, &f)
	}
	v := Verdict{Forced: forced.Reason, Link: semconv.LinkUnknown, Index: p.Turn.Index,
		Underruns: t.underruns, Silent: t.silent, Underran: f.underran,
		PoolBefore: t.across.poolBefore, HistoryDisagrees: t.across.disagrees}
	if p.Turn.Link != "" {
		v.Link = p.Turn.Link
	}
	v.Cause = primary(t, &f)
	v.Causes = implicated(v.Cause, &f)
	v.Evidence = evidence(p, t, &f, v, c, forced)
	return v
}

// evidence writes the verdict's sentence: why it was forced, the bad input,
// what each implicated cause's rule found, or why none fired.
func evidence(p *Trace, t *turnView, f *findings, v Verdict, c *Rules, forced Forced) string {
	var parts []string
	if forced.Reason != "" {
		parts = append(parts, forcedSentence(p, t, forced, c))
	} else if t.across.unseen > 0 && len(t.problems) == 0 {
		parts = append(parts, unseenSentence(t.across.unseen))
	}
	parts = appendAssumed(parts, p.Turn)
	if t.across.began != "" {
		parts = append(parts, truncate(t.across.began, maxAssumedBytes))
	}
	if len(t.problems) > 0 {
		parts = append(parts, "bad input: "+strings.Join(t.problems, "; "))
	}
	for _, c := range v.Causes {
		parts = append(parts, f.evidenceOf(c)...)
	}
	if v.Cause == semconv.CauseNone {
		s := fmt.Sprintf("no rule fired: %s, 0 underruns", plural(int64(len(p.UnitSpans)), "unit"))
		var absent []string
		if !t.turn.HasPoolResets {
			absent = append(absent, semconv.PoolResets)
		}
		if len(t.turn.Live) == 0 {
			absent = append(absent, "live counts")
		}
		if len(absent) > 0 {
			s += "; not reported: " + strings.Join(absent, ", ")
		}
		parts = append(parts, s)
	}
	return truncate(strings.Join(parts, "; "), MaxEvidence)
}

// maxAssumedBytes bounds one sentence of what was assumed.
const maxAssumedBytes = 256

// appendAssumed repeats what the lines connector assumed of the turn where
// its lines left it open (semconv.LinesAssumed, on the turn's resource):
// the sentences it gives, each bounded, at most MaxProblems of them.
func appendAssumed(parts []string, turn *TurnReadings) []string {
	if turn == nil {
		return parts
	}
	v, ok := turn.Resource.Attributes().Get(semconv.LinesAssumed)
	if !ok || v.Type() != pcommon.ValueTypeSlice {
		return parts
	}
	s := v.Slice()
	for i := 0; i < s.Len() && i < MaxProblems; i++ {
		if e := s.At(i); e.Type() == pcommon.ValueTypeStr && e.Str() != "" {
			parts = append(parts, truncate(e.Str(), maxAssumedBytes))
		}
	}
	return parts
}

// forcedSentence says why a turn was decided early and what was missing.
func forcedSentence(p *Trace, t *turnView, forced Forced, c *Rules) string {
	s := forced.Why
	if s == "" {
		s = "forced (" + forced.Reason + ")"
	}
	var missing []string
	if p.Sized() && !p.UnitsArrived() {
		if forced.Ended {
			missing = append(missing, fmt.Sprintf("with %d of %d units", len(p.UnitSpans), p.Turn.Units))
		} else {
			missing = append(missing, fmt.Sprintf("%d of %d units arrived", len(p.UnitSpans), p.Turn.Units))
		}
	}
	if takes := p.MissingTakes(c); len(takes) > 0 {
		if forced.Ended {
			missing = append(missing, "before take "+strings.Join(takes, ", ")+" came")
		} else {
			missing = append(missing, "missing take "+strings.Join(takes, ", "))
		}
	}
	if t.across.unseen > 0 && len(t.problems) == 0 {
		missing = append(missing, unseenSentence(t.across.unseen))
	}
	switch {
	case len(missing) == 0:
	case forced.Ended:
		s += " " + strings.Join(missing, ", ")
	default:
		s += ": " + strings.Join(missing, ", ")
	}
	return s
}

// micOpen returns the microphone-open total (the reported total, or the sum
// of the stages when the total is absent) and its slowest stage.
func micOpen(t *TurnReadings) (total float64, stage string, slowest float64, ok bool) {
	if t.HasGrant && t.ListenGrant >= slowest {
		stage, slowest = semconv.StageGrant, t.ListenGrant
	}
	if t.HasSession && t.ListenSession > slowest {
		stage, slowest = semconv.StageSession, t.ListenSession
	}
	switch {
	case t.HasTotal:
		return t.ListenTotal, stage, slowest, true
	case t.HasGrant || t.HasSession:
		return t.ListenGrant + t.ListenSession, stage, slowest, true
	}
	return 0, "", 0, false
}

// rising reports whether the series rose on each of its last n steps.
func rising(series []int64, n int) bool {
	if len(series) < n+1 {
		return false
	}
	tail := series[len(series)-n-1:]
	for i := 1; i < len(tail); i++ {
		if tail[i] <= tail[i-1] {
			return false
		}
	}
	return true
}

// plural writes "1 unit", "2 units".
func plural(n int64, noun string) string { return string(appendPlural(nil, n, noun)) }

// appendPlural is plural appended to b.
func appendPlural(b []byte, n int64, noun string) []byte {
	b = append(strconv.AppendInt(b, n, 10), ' ')
	b = append(b, noun...)
	if n != 1 {
		b = append(b, 's')
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
