package verdictprocessor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/percause/percause/instr/semconv"
)

// maxBroke bounds the underrun events a verdict carries.
const maxBroke = 32

// maxEvidence bounds the evidence sentence; it is a label-free attribute but
// still travels with every verdict.
const maxEvidence = 1024

// verdict is one turn's decision.
type verdict struct {
	cause     string
	causes    []string
	evidence  string
	forced    string // forcedWait, forcedMaxAge, forcedPendingLimit, forcedShutdown or ""
	link      string
	underruns int64
	silent    float64
	index     int64
	// broke is what the underrun rule read of each unit that underran, for
	// the verdict's percause.underrun events.
	broke []underrunReading
}

// underrunReading is one unit that underran, with its take's need when the
// take came.
type underrunReading struct {
	unit      int64
	takeID    string
	underruns int64
	silent    float64
	cushion   float64
	need      float64
	hasNeed   bool
	cause     string
}

// Reasons a turn is decided before everything it names has arrived.
const (
	forcedWait         = "wait"
	forcedMaxAge       = "max_age"
	forcedPendingLimit = "pending_limit"
	forcedShutdown     = "shutdown"
)

// secs formats seconds the way the evidence prints them.
func secs(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " s" }

// secsApart formats a reading and the threshold it is compared with, with
// as many decimals as it takes (2 to 6) for two different values to read
// differently: a need of 1.504 s against a 1.50 s cushion reads
// "1.504 s > 1.500 s", not "1.50 s > 1.50 s".
func secsApart(a, b float64) (string, string) {
	for prec := 2; ; prec++ {
		sa, sb := strconv.FormatFloat(a, 'f', prec, 64), strconv.FormatFloat(b, 'f', prec, 64)
		if sa != sb || a == b || prec == 6 {
			return sa + " s", sb + " s"
		}
	}
}

// decide applies the rules of docs/domain.md, the table of table.go, to one
// pending trace. It reads only that trace: the cross-turn rules read the
// history the turn carries.
func decide(p *pendingTrace, cfg *Config, forced string) verdict {
	t := newTurnView(p)
	var f findings
	for i := range rules {
		rules[i].fire(t, &cfg.Rules, &f)
	}
	v := verdict{forced: forced, link: semconv.LinkUnknown, index: p.turn.index,
		underruns: t.underruns, silent: t.silent, broke: f.broke}
	if p.turn.link != "" {
		v.link = p.turn.link
	}
	v.cause = primary(t, &f)
	v.causes = implicated(v.cause, &f)
	v.evidence = evidence(p, t, &f, v, cfg)
	return v
}

// evidence writes the verdict's sentence: why it was forced, the bad input,
// what each implicated cause's rule found, or why none fired.
func evidence(p *pendingTrace, t *turnView, f *findings, v verdict, cfg *Config) string {
	var parts []string
	if v.forced != "" {
		parts = append(parts, forcedSentence(p, v.forced, cfg))
	}
	if len(t.problems) > 0 {
		parts = append(parts, "bad input: "+strings.Join(t.problems, "; "))
	}
	for _, c := range v.causes {
		parts = append(parts, f.evidence[c]...)
	}
	if v.cause == semconv.CauseNone {
		s := fmt.Sprintf("no rule fired: %s, 0 underruns", plural(int64(len(p.unitSpans)), "unit"))
		var absent []string
		if !t.turn.hasPoolResets {
			absent = append(absent, semconv.PoolResets)
		}
		if len(t.turn.live) == 0 {
			absent = append(absent, "live counts")
		}
		if len(absent) > 0 {
			s += "; not reported: " + strings.Join(absent, ", ")
		}
		parts = append(parts, s)
	}
	return truncate(strings.Join(parts, "; "), maxEvidence)
}

// forcedSentence says why a turn was decided early and what was missing.
func forcedSentence(p *pendingTrace, forced string, cfg *Config) string {
	var s string
	switch forced {
	case forcedWait:
		s = fmt.Sprintf("forced after waiting %s", cfg.Wait)
	case forcedMaxAge:
		s = fmt.Sprintf("forced at max_age (its trace held %s)", cfg.MaxAge)
	case forcedPendingLimit:
		s = fmt.Sprintf("forced by the pending limit (%d traces)", cfg.MaxPending)
	case forcedShutdown:
		s = "forced at shutdown"
	default:
		s = "forced (" + forced + ")"
	}
	if p.turn.units >= 0 && int64(len(p.unitSpans)) < p.turn.units {
		s += fmt.Sprintf(": %d of %d units arrived", len(p.unitSpans), p.turn.units)
	}
	if missing := p.missingTakes(&cfg.Rules); len(missing) > 0 {
		sep := ": "
		if strings.Contains(s, ": ") {
			sep = ", "
		}
		s += sep + "missing take " + strings.Join(missing, ", ")
	}
	return s
}

// micOpen returns the microphone-open total (the reported total, or the sum
// of the stages when the total is absent) and its slowest stage.
func micOpen(t *turnReading) (total float64, stage string, slowest float64, ok bool) {
	if t.hasGrant && t.listenGrant >= slowest {
		stage, slowest = semconv.StageGrant, t.listenGrant
	}
	if t.hasSession && t.listenSession > slowest {
		stage, slowest = semconv.StageSession, t.listenSession
	}
	switch {
	case t.hasTotal:
		return t.listenTotal, stage, slowest, true
	case t.hasGrant || t.hasSession:
		return t.listenGrant + t.listenSession, stage, slowest, true
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
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
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
