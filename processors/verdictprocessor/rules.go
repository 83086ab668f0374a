package verdictprocessor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/percause/percause/instr/semconv"
)

// maxBroke bounds the underrun events a verdict carries.
const maxBroke = 32

// maxEvidence bounds the evidence sentence; it is a label-free attribute but
// still travels with every verdict.
const maxEvidence = 1024

// causeOrder is the order implicated causes are listed in after the primary.
var causeOrder = []string{
	semconv.CauseNetwork, semconv.CauseSynthesis, semconv.CauseBluetooth,
	semconv.CauseWait, semconv.CausePool, semconv.CauseState, semconv.CauseUnknown,
}

// underrunOrder breaks ties between underrun causes with equal silence: a
// measured cause before an unknown one.
var underrunOrder = []string{semconv.CauseNetwork, semconv.CauseSynthesis, semconv.CauseUnknown}

// nonUnderrunOrder is "the first that fired of bluetooth, wait, pool, state".
var nonUnderrunOrder = []string{semconv.CauseBluetooth, semconv.CauseWait, semconv.CausePool, semconv.CauseState}

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
	// broke is what rule 1 read of each unit that underran, for the
	// verdict's percause.underrun events.
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

// findings collects what each rule found, by cause.
type findings struct {
	evidence map[string][]string
	silent   map[string]float64
}

func (f *findings) add(cause, sentence string) {
	if f.evidence == nil {
		f.evidence = map[string][]string{}
		f.silent = map[string]float64{}
	}
	f.evidence[cause] = append(f.evidence[cause], sentence)
}

func (f *findings) fired(cause string) bool { return len(f.evidence[cause]) > 0 }

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

// decide applies the rules of docs/domain.md to one pending trace. It reads
// only that trace: the cross-turn rules read the history the turn carries.
func decide(p *pendingTrace, cfg *Config, forced string) verdict {
	rules := cfg.Rules
	t := p.turn
	v := verdict{forced: forced, link: semconv.LinkUnknown, index: t.index}
	if t.link != "" {
		v.link = t.link
	}
	var f findings
	problems := append([]string(nil), t.problems...)
	if p.extraTurns > 0 {
		problems = append(problems, fmt.Sprintf("%d voice.turn spans in one trace", p.extraTurns+1))
	}

	units := append([]unitReading(nil), p.units...)
	sort.SliceStable(units, func(i, j int) bool { return units[i].index < units[j].index })

	// Rule 1: network / synthesis, per unit that underran.
	for i := range units {
		u := &units[i]
		problems = appendAll(problems, u.problems)
		v.underruns += u.underruns
		if u.underruns == 0 || u.underrunBad {
			continue
		}
		v.silent += u.silent
		head := fmt.Sprintf("unit %d: %s, %s silent", u.index, plural(u.underruns, "underrun"), secs(u.silent))
		tk, ok := p.take(u.takeID)
		br := underrunReading{unit: u.index, takeID: u.takeID, underruns: u.underruns, silent: u.silent, cushion: u.cushion}
		switch {
		case !ok:
			f.add(semconv.CauseUnknown, head+"; take "+u.takeID+" never arrived")
			f.silent[semconv.CauseUnknown] += u.silent
			br.cause = semconv.CauseUnknown
		case tk.problem != "":
			problems = append(problems, tk.problem)
			br.cause = semconv.CauseUnknown
		case tk.need > u.cushion:
			need, cushion := secsApart(tk.need, u.cushion)
			f.add(semconv.CauseSynthesis, fmt.Sprintf("%s; take %s need %s > cushion %s", head, tk.id, need, cushion))
			f.silent[semconv.CauseSynthesis] += u.silent
			br.cause, br.need, br.hasNeed = semconv.CauseSynthesis, tk.need, true
		default:
			need, cushion := secsApart(tk.need, u.cushion)
			f.add(semconv.CauseNetwork, fmt.Sprintf("%s; take %s need %s ≤ cushion %s", head, tk.id, need, cushion))
			f.silent[semconv.CauseNetwork] += u.silent
			br.cause, br.need, br.hasNeed = semconv.CauseNetwork, tk.need, true
		}
		if len(v.broke) < maxBroke {
			v.broke = append(v.broke, br)
		}
	}

	// Rule 2: Bluetooth.
	if t.stutter && v.underruns == 0 && t.bluetooth {
		f.add(semconv.CauseBluetooth, "stutter with 0 underruns on "+t.btOutput)
	}
	if t.stutter || v.underruns > 0 {
		what := "underran"
		if t.stutter {
			what = "stuttered"
		}
		for _, rc := range t.routeChanges {
			if rc.at < 0 {
				continue // before she began reading
			}
			reason := rc.reason
			if reason == "" {
				reason = "no reason given"
			}
			f.add(semconv.CauseBluetooth, fmt.Sprintf("route change at %s (%s) on a turn that %s", secs(rc.at), reason, what))
		}
	}

	// Rule 5: the wait.
	late := -rules.LateLead.Seconds()
	for _, u := range units {
		if u.hasLead && u.lead < late {
			lead, limit := secsApart(u.lead, late)
			f.add(semconv.CauseWait, fmt.Sprintf("unit %d queued late: lead %s < %s", u.index, lead, limit))
		}
	}
	if total, stage, slowest, ok := micOpen(t); ok && total > rules.MicOpenLimit.Seconds() {
		open, limit := secsApart(total, rules.MicOpenLimit.Seconds())
		s := fmt.Sprintf("microphone open %s > %s", open, limit)
		// The stages reported are the grant and the audio session; what the
		// total holds beyond them (the listening socket) has no reading of
		// its own, so when it is the largest part the evidence says so
		// rather than name a stage that was not the slow one.
		rest := total - t.listenGrant - t.listenSession
		switch {
		case t.hasTotal && (t.hasGrant || t.hasSession) && rest > slowest:
			s += fmt.Sprintf(", most of it outside the grant and the session (%s)", secs(rest))
		case stage != "" && slowest > 0:
			s += fmt.Sprintf(", slowest stage %s %s", stage, secs(slowest))
		}
		f.add(semconv.CauseWait, s)
	}

	// Rule 4: pool healing. Its reading is whether the tally moved.
	if t.hasPoolResets {
		switch {
		case t.hasPoolBefore && t.poolResets > t.poolBefore:
			f.add(semconv.CausePool, fmt.Sprintf("pool_reset moved %d→%d since the previous turn", t.poolBefore, t.poolResets))
		case !t.hasPoolBefore && t.poolResets > 0:
			f.add(semconv.CausePool, fmt.Sprintf("pool_reset %d on the first turn of a launch", t.poolResets))
		}
	}

	// Rule 3: accumulated state.
	for _, ls := range t.live {
		if rising(ls.series, rules.RisingTurns) {
			tail := ls.series[len(ls.series)-rules.RisingTurns-1:]
			parts := make([]string, len(tail))
			for i, n := range tail {
				parts[i] = strconv.FormatInt(n, 10)
			}
			f.add(semconv.CauseState, fmt.Sprintf("%s %s rose on each of the last %d turns", ls.kind, strings.Join(parts, "→"), rules.RisingTurns))
		}
	}

	// Primary cause.
	switch {
	case len(problems) > 0:
		v.cause = semconv.CauseUnknown
	case v.underruns > 0:
		best := -1.0
		for _, c := range underrunOrder {
			if f.fired(c) && f.silent[c] > best {
				v.cause, best = c, f.silent[c]
			}
		}
	default:
		for _, c := range nonUnderrunOrder {
			if f.fired(c) {
				v.cause = c
				break
			}
		}
	}
	if v.cause == "" {
		v.cause = semconv.CauseNone
	}

	// Implicated causes: the primary first, then the others that fired.
	v.causes = []string{v.cause}
	for _, c := range causeOrder {
		if c != v.cause && f.fired(c) {
			v.causes = append(v.causes, c)
		}
	}

	// Evidence.
	var parts []string
	if forced != "" {
		parts = append(parts, forcedSentence(p, forced, cfg))
	}
	if len(problems) > 0 {
		parts = append(parts, "bad input: "+strings.Join(problems, "; "))
	}
	for _, c := range v.causes {
		parts = append(parts, f.evidence[c]...)
	}
	if v.cause == semconv.CauseNone {
		s := fmt.Sprintf("no rule fired: %s, 0 underruns", plural(int64(len(p.unitSpans)), "unit"))
		var absent []string
		if !t.hasPoolResets {
			absent = append(absent, semconv.PoolResets)
		}
		if len(t.live) == 0 {
			absent = append(absent, "live counts")
		}
		if len(absent) > 0 {
			s += "; not reported: " + strings.Join(absent, ", ")
		}
		parts = append(parts, s)
	}
	v.evidence = truncate(strings.Join(parts, "; "), maxEvidence)
	return v
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
	if missing := p.missingTakes(); len(missing) > 0 {
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

func appendAll(dst, src []string) []string {
	for _, s := range src {
		if len(dst) >= 2*maxProblems {
			return dst
		}
		dst = append(dst, s)
	}
	return dst
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
