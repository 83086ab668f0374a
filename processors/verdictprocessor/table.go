package verdictprocessor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/percause/percause/instr/semconv"
)

// The rules, as a table. Each rule declares the causes it implicates, the
// units it reads (a unit no rule keeps is only counted, which keeps a
// pending turn small), whether it reads the take of each unit it keeps (a
// turn waits for those takes), and how it fires, writing its evidence. The
// table's order is the rules' precedence: the primary cause of a turn with
// underruns is the underrun cause its units lost the most silent seconds
// to (ties in table order, then unknown); of a turn without, the first
// cause in table order that fired. The implicated causes are listed in
// table order, unknown last. docs/domain.md gives the rules and their
// numbers; the README numbers them in this order
// (docs/decisions/0224-rules-as-a-table.md).
//
// Adding a cause: its name in instr/semconv (the cause and its place in
// semconv.Causes), one entry here, and its lines in the READMEs and the
// dashboards, which TestEveryCauseIsRuledAndShown holds to.

// rule is one row of the table.
type rule struct {
	// causes it implicates, in the order its ties go.
	causes []string
	// reads names the readings it fires on (semconv names; a live count
	// stands for every pippa.live.<kind> and its history).
	reads []string
	// underrun: its causes are ranked by the silent seconds of the units
	// that fired them (the primary cause of a turn with underruns).
	underrun bool
	// keep reports whether the rule reads the unit; nil: it reads none.
	keep func(u *unitReading, c *RulesConfig) bool
	// takes: it reads the take of each unit it keeps; the turn is not
	// complete until they have come (or its wait is over).
	takes bool
	// fire reads the turn and adds what it found.
	fire func(t *turnView, c *RulesConfig, f *findings)
	// summary is the rule in one line, as the READMEs give it.
	summary string
}

// rules is the table.
var rules = []rule{
	{
		causes: []string{semconv.CauseNetwork, semconv.CauseSynthesis}, underrun: true,
		reads: []string{semconv.UnitUnderruns, semconv.UnitSilent, semconv.UnitCushion, semconv.TakeID, semconv.TakeNeed},
		keep:  func(u *unitReading, _ *RulesConfig) bool { return u.underruns > 0 }, takes: true,
		fire:    fireUnderruns,
		summary: "an underrun on a unit is the network's when its take's need is at or under the unit's cushion, synthesis's when above; unknown when the take never came",
	},
	{
		causes:  []string{semconv.CauseBluetooth},
		reads:   []string{semconv.TurnStutter, semconv.RouteOutputs, semconv.RouteBluetooth, semconv.RouteChangeAt, semconv.RouteChangeReason, semconv.UnitUnderruns},
		fire:    fireBluetooth,
		summary: "a stutter with 0 underruns on a Bluetooth output; or a route change while she reads on a turn that stuttered or underran",
	},
	{
		causes: []string{semconv.CauseWait},
		reads:  []string{semconv.UnitLead, semconv.ListenGrant, semconv.ListenSession, semconv.ListenTotal},
		keep: func(u *unitReading, c *RulesConfig) bool {
			return u.hasLead && u.lead < -c.LateLead.Seconds()
		},
		fire:    fireWait,
		summary: "a unit queued more than late_lead after the previous one ended (her words were late), or a microphone open over mic_open_limit",
	},
	{
		causes:  []string{semconv.CausePool},
		reads:   []string{semconv.PoolResets, semconv.PoolResetsBefore},
		fire:    firePool,
		summary: "the launch's pool_reset tally moved since its previous turn, or is above 0 on a launch's first turn",
	},
	{
		causes:  []string{semconv.CauseState},
		reads:   []string{semconv.LiveAttr(semconv.LivePlayers), semconv.LiveBeforeAttr(semconv.LivePlayers)},
		fire:    fireState,
		summary: "a live count that rose on each of the last rising_turns turns of the launch",
	},
}

// keepUnit reports whether a rule reads the unit, or the unit carries bad
// input (which the verdict reports).
func keepUnit(u *unitReading, c *RulesConfig) bool {
	if len(u.problems) > 0 {
		return true
	}
	for i := range rules {
		if rules[i].keep != nil && rules[i].keep(u, c) {
			return true
		}
	}
	return false
}

// needsTake reports whether a rule reads the take of a unit it keeps.
func needsTake(u *unitReading, c *RulesConfig) bool {
	if u.takeID == "" || u.underrunBad {
		return false
	}
	for i := range rules {
		if rules[i].takes && rules[i].keep != nil && rules[i].keep(u, c) {
			return true
		}
	}
	return false
}

// turnView is what the rules read of one turn: its readings, the units
// kept in index order, the totals every rule may read, and the bad input
// found while reading them.
type turnView struct {
	turn      *turnReading
	units     []unitReading
	underruns int64   // over every unit
	silent    float64 // over the units whose underrun can be read
	take      func(id string) (takeReading, bool)
	problems  []string
}

func newTurnView(p *pendingTrace) *turnView {
	t := p.turn
	v := &turnView{turn: t, take: p.take}
	v.problems = append([]string(nil), t.problems...)
	if p.extraTurns > 0 {
		v.problems = append(v.problems, fmt.Sprintf("%d voice.turn spans in one trace", p.extraTurns+1))
	}
	v.units = append([]unitReading(nil), p.units...)
	sort.SliceStable(v.units, func(i, j int) bool { return v.units[i].index < v.units[j].index })
	for i := range v.units {
		u := &v.units[i]
		v.problems = appendUpTo(v.problems, u.problems, 2*maxProblems)
		v.underruns += u.underruns
		if u.underruns == 0 || u.underrunBad {
			continue
		}
		v.silent += u.silent
		if tk, ok := p.take(u.takeID); ok && tk.problem != "" {
			v.problems = append(v.problems, tk.problem)
		}
	}
	return v
}

// findings collects what the rules found, by cause.
type findings struct {
	evidence map[string][]string
	silent   map[string]float64
	broke    []underrunReading
}

func (f *findings) add(cause, sentence string) {
	if f.evidence == nil {
		f.evidence = map[string][]string{}
		f.silent = map[string]float64{}
	}
	f.evidence[cause] = append(f.evidence[cause], sentence)
}

func (f *findings) fired(cause string) bool { return len(f.evidence[cause]) > 0 }

// fireUnderruns reads each unit that underran against its take.
func fireUnderruns(t *turnView, _ *RulesConfig, f *findings) {
	for i := range t.units {
		u := &t.units[i]
		if u.underruns == 0 || u.underrunBad {
			continue
		}
		head := fmt.Sprintf("unit %d: %s, %s silent", u.index, plural(u.underruns, "underrun"), secs(u.silent))
		br := underrunReading{unit: u.index, takeID: u.takeID, underruns: u.underruns, silent: u.silent, cushion: u.cushion, cause: semconv.CauseUnknown}
		tk, ok := t.take(u.takeID)
		switch {
		case !ok:
			f.add(semconv.CauseUnknown, head+"; take "+u.takeID+" never arrived")
			f.silent[semconv.CauseUnknown] += u.silent
		case tk.problem != "":
			// Bad input, reported as such (newTurnView).
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
		if len(f.broke) < maxBroke {
			f.broke = append(f.broke, br)
		}
	}
}

// fireBluetooth: the radio between the phone and the earbuds.
func fireBluetooth(t *turnView, _ *RulesConfig, f *findings) {
	tr := t.turn
	if tr.stutter && t.underruns == 0 && tr.bluetooth {
		f.add(semconv.CauseBluetooth, "stutter with 0 underruns on "+tr.btOutput)
	}
	if !tr.stutter && t.underruns == 0 {
		return
	}
	what := "underran"
	if tr.stutter {
		what = "stuttered"
	}
	for _, rc := range tr.routeChanges {
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

// fireWait: her words were late, or the microphone was slow to open.
func fireWait(t *turnView, c *RulesConfig, f *findings) {
	late := -c.LateLead.Seconds()
	for _, u := range t.units {
		if u.hasLead && u.lead < late {
			lead, limit := secsApart(u.lead, late)
			f.add(semconv.CauseWait, fmt.Sprintf("unit %d queued late: lead %s < %s", u.index, lead, limit))
		}
	}
	tr := t.turn
	total, stage, slowest, ok := micOpen(tr)
	if !ok || total <= c.MicOpenLimit.Seconds() {
		return
	}
	open, limit := secsApart(total, c.MicOpenLimit.Seconds())
	s := fmt.Sprintf("microphone open %s > %s", open, limit)
	// The stages reported are the grant and the audio session; what the
	// total holds beyond them (the listening socket) has no reading of its
	// own, so when it is the largest part the evidence says so rather than
	// name a stage that was not the slow one.
	rest := total - tr.listenGrant - tr.listenSession
	switch {
	case tr.hasTotal && (tr.hasGrant || tr.hasSession) && rest > slowest:
		s += fmt.Sprintf(", most of it outside the grant and the session (%s)", secs(rest))
	case stage != "" && slowest > 0:
		s += fmt.Sprintf(", slowest stage %s %s", stage, secs(slowest))
	}
	f.add(semconv.CauseWait, s)
}

// firePool: its reading is whether the tally moved, not its value.
func firePool(t *turnView, _ *RulesConfig, f *findings) {
	tr := t.turn
	switch {
	case !tr.hasPoolResets:
	case tr.hasPoolBefore && tr.poolResets > tr.poolBefore:
		f.add(semconv.CausePool, fmt.Sprintf("pool_reset moved %d→%d since the previous turn", tr.poolBefore, tr.poolResets))
	case !tr.hasPoolBefore && tr.poolResets > 0:
		f.add(semconv.CausePool, fmt.Sprintf("pool_reset %d on the first turn of a launch", tr.poolResets))
	}
}

// fireState: the process holding something it should have let go.
func fireState(t *turnView, c *RulesConfig, f *findings) {
	for _, ls := range t.turn.live {
		if !rising(ls.series, c.RisingTurns) {
			continue
		}
		tail := ls.series[len(ls.series)-c.RisingTurns-1:]
		parts := make([]string, len(tail))
		for i, n := range tail {
			parts[i] = strconv.FormatInt(n, 10)
		}
		f.add(semconv.CauseState, fmt.Sprintf("%s %s rose on each of the last %d turns", ls.kind, strings.Join(parts, "→"), c.RisingTurns))
	}
}

// primary picks the turn's primary cause from what fired.
func primary(t *turnView, f *findings) string {
	switch {
	case len(t.problems) > 0:
		return semconv.CauseUnknown
	case t.underruns > 0:
		best, cause := -1.0, ""
		for _, c := range underrunCauses() {
			if f.fired(c) && f.silent[c] > best {
				cause, best = c, f.silent[c]
			}
		}
		if cause != "" {
			return cause
		}
	default:
		for i := range rules {
			if rules[i].underrun {
				continue
			}
			for _, c := range rules[i].causes {
				if f.fired(c) {
					return c
				}
			}
		}
	}
	return semconv.CauseNone
}

// underrunCauses are the causes ranked by silence: the underrun rules'
// causes in table order, then unknown (a take that never came).
func underrunCauses() []string {
	var out []string
	for i := range rules {
		if rules[i].underrun {
			out = append(out, rules[i].causes...)
		}
	}
	return append(out, semconv.CauseUnknown)
}

// implicated lists the causes that fired, the primary first, then in table
// order, unknown last.
func implicated(primary string, f *findings) []string {
	out := []string{primary}
	add := func(c string) {
		if c != primary && f.fired(c) {
			out = append(out, c)
		}
	}
	for i := range rules {
		for _, c := range rules[i].causes {
			add(c)
		}
	}
	add(semconv.CauseUnknown)
	return out
}
