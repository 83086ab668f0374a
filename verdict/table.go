package verdict

import (
	"cmp"
	"fmt"
	"slices"
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
//
// Adding a reading of the voice.turn: its name and its registry entry in
// instr/semconv (instr/semconv/names.go, instr/semconv/registry.go;
// docs/semconv.md is generated), its setter in the SDK (instr/turn.go,
// and the text line it writes through exporters/textlines.Turn), its
// field in exporters/textlines (exporters/textlines/fields.go, and in
// exporters/textlines/record.go its TurnValues field, its Fields bit and,
// for a reading the span carries as it is, its TurnScalars row, which the
// lines connector puts on the span) and the row of the line's table in
// instr/semconv/markdown.go; its place here (readings.go: a TurnReadings
// field, and for a reading in seconds its TurnSeconds row, from which it
// is read, put on the joined form and stored by the processor's codec
// with no change there; another kind is read in read.go, joined in
// joined.go and needs a new codec version in
// processors/verdictprocessor/internal/persist/trace_codec.go), and,
// when a reader of verdicts alone needs it (the registry puts it on
// percause.verdict too), the verdict span (span.go: Record, RecordOf,
// writeAttributes, FromSpan), and the day report's turn and its Readings
// (internal/page/dayreport), which the page (internal/page/verdictpage)
// shows as they are. A rule that reads it names it in its reads above.
// The registry is the list: TestEveryCarriedReadingArrives, in each of
// those packages, puts every reading semconv.CarriedOnVerdict names
// through its place and fails on the one left out.

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
	keep func(u *Unit, c *Rules) bool
	// takes: it reads the take of each unit it keeps; the turn is not
	// complete until they have come (or its wait is over).
	takes bool
	// fire reads the turn and adds what it found.
	fire func(t *turnView, c *Rules, f *findings)
	// summary is the rule in one line, as the READMEs give it.
	summary string
}

// rules is the table.
var rules = []rule{
	{
		causes: []string{semconv.CauseNetwork, semconv.CauseSynthesis}, underrun: true,
		reads: []string{semconv.UnitUnderruns, semconv.UnitSilent, semconv.UnitCushion, semconv.TakeID, semconv.TakeNeed},
		keep:  func(u *Unit, _ *Rules) bool { return u.Underruns > 0 }, takes: true,
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
		keep: func(u *Unit, c *Rules) bool {
			return u.HasLead && u.Lead < -c.LateLead.Seconds()
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
func keepUnit(u *Unit, c *Rules) bool {
	if len(u.Problems) > 0 {
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
func needsTake(u *Unit, c *Rules) bool {
	if u.TakeID == "" || u.UnderrunBad {
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
	turn      *TurnReadings
	units     []Unit
	underruns int64   // over every unit
	underran  int     // the units whose underrun can be read
	silent    float64 // over the units whose underrun can be read
	take      func(id string) (Take, bool)
	problems  []string
	// across is what the pool and state rules read across the launch's
	// turns: the turn's own history, or what the holder kept.
	across crossTurn
}

func newTurnView(p *Trace, e *Earlier, c *Rules) *turnView {
	t := p.Turn
	v := &turnView{turn: t, take: p.Take, across: readCrossTurn(t, e, c.RisingTurns)}
	v.problems = append([]string(nil), t.Problems...)
	if p.ExtraTurns > 0 {
		v.problems = append(v.problems, fmt.Sprintf("%d voice.turn spans in one trace", p.ExtraTurns+1))
	}
	// The rules only read the units: a trace's units, in index order as
	// they nearly always arrive, are read in place, and copied to be
	// sorted only when they came out of order.
	v.units = p.Units
	if !slices.IsSortedFunc(v.units, byUnitIndex) {
		v.units = slices.Clone(p.Units)
		slices.SortStableFunc(v.units, byUnitIndex)
	}
	for i := range v.units {
		u := &v.units[i]
		v.problems = appendUpTo(v.problems, u.Problems, 2*MaxProblems)
		v.underruns += u.Underruns
		if u.Underruns == 0 || u.UnderrunBad {
			continue
		}
		v.underran++
		v.silent += u.Silent
		if tk, ok := p.Take(u.TakeID); ok && tk.Problem != "" {
			v.problems = append(v.problems, tk.Problem)
		}
	}
	return v
}

func byUnitIndex(a, b Unit) int { return cmp.Compare(a.Index, b.Index) }

// findings collects what the rules found, by cause: a list, since a turn
// implicates a few of the six causes, and maps made for every decision
// were a good part of what deciding allocated (docs/performance.md,
// "Figures once in the code's comments").
type findings struct {
	by       []finding
	underran []Underrun
	// room is by's first room: a turn implicates one or two causes.
	room [2]finding
}

// finding is what the rules found against one cause.
type finding struct {
	cause    string
	evidence []string
	silent   float64 // the seconds of silence of the underruns put down to it
}

// of is cause's finding, added when there is none.
func (f *findings) of(cause string) *finding {
	if g := f.find(cause); g != nil {
		return g
	}
	if f.by == nil {
		f.by = f.room[:0]
	}
	f.by = append(f.by, finding{cause: cause})
	return &f.by[len(f.by)-1]
}

func (f *findings) find(cause string) *finding {
	for i := range f.by {
		if f.by[i].cause == cause {
			return &f.by[i]
		}
	}
	return nil
}

func (f *findings) add(cause, sentence string) {
	g := f.of(cause)
	if g.evidence == nil {
		// Room for a few: the underrun rules find one sentence a unit
		// that underran, and a list grown from one took three steps to
		// hold four.
		g.evidence = make([]string, 0, firstSentences)
	}
	g.evidence = append(g.evidence, sentence)
}

// firstSentences is the room a cause's first sentence makes.
const firstSentences = 4

// addSilent puts seconds of silence down to cause.
func (f *findings) addSilent(cause string, seconds float64) { f.of(cause).silent += seconds }

func (f *findings) fired(cause string) bool { return f.find(cause).fired() }

// fired reports whether a rule found evidence against the cause (false
// for no finding).
func (g *finding) fired() bool { return g != nil && len(g.evidence) > 0 }

// evidenceOf is what the rules found against cause, in the order found.
func (f *findings) evidenceOf(cause string) []string {
	if g := f.find(cause); g != nil {
		return g.evidence
	}
	return nil
}

// fireUnderruns reads each unit that underran against its take. It runs
// for every unit of every turn, so the sentences are written into one
// buffer and made one string, which each finding's sentence is a part of:
// one allocation for a turn's sentences, where each was one.
func fireUnderruns(t *turnView, _ *Rules, f *findings) {
	if t.underran == 0 {
		return // no unit's underrun can be read: nothing below would run
	}
	buf := make([]byte, 0, 512) // on the stack: a sentence is about 70 bytes
	if f.underran == nil {
		f.underran = make([]Underrun, 0, min(t.underran, maxUnderrunEvents))
	}
	var room [8]sentenceAt // on the stack: a turn underruns in a few units
	found := room[:0]
	say := func(cause string, from int) { found = append(found, sentenceAt{cause, from, len(buf)}) }
	for i := range t.units {
		u := &t.units[i]
		if u.Underruns == 0 || u.UnderrunBad {
			continue
		}
		from := len(buf)
		buf = appendUnderrunHead(buf, u)
		br := Underrun{Unit: u.Index, TakeID: u.TakeID, Underruns: u.Underruns, Silent: u.Silent, Cushion: u.Cushion, Cause: semconv.CauseUnknown}
		tk, ok := t.take(u.TakeID)
		switch {
		case !ok:
			buf = append(append(append(buf, "; take "...), u.TakeID...), " never arrived"...)
			say(semconv.CauseUnknown, from)
			f.addSilent(semconv.CauseUnknown, u.Silent)
		case tk.Problem != "":
			// Bad input, reported as such (newTurnView).
			buf = buf[:from]
		case tk.Need > u.Cushion:
			buf = appendNeedAgainstCushion(buf, tk.ID, tk.Need, " > ", u.Cushion)
			say(semconv.CauseSynthesis, from)
			f.addSilent(semconv.CauseSynthesis, u.Silent)
			br.Cause, br.Need = semconv.CauseSynthesis, Some(tk.Need)
		default:
			buf = appendNeedAgainstCushion(buf, tk.ID, tk.Need, " ≤ ", u.Cushion)
			say(semconv.CauseNetwork, from)
			f.addSilent(semconv.CauseNetwork, u.Silent)
			br.Cause, br.Need = semconv.CauseNetwork, Some(tk.Need)
		}
		if len(f.underran) < maxUnderrunEvents {
			f.underran = append(f.underran, br)
		}
	}
	if len(found) == 0 {
		return
	}
	all := string(buf)
	for _, s := range found {
		f.add(s.cause, all[s.from:s.to])
	}
}

// sentenceAt is where one of fireUnderruns' sentences lies in its buffer.
type sentenceAt struct {
	cause    string
	from, to int
}

// appendUnderrunHead writes what a unit underran: "unit 3: 2 underruns,
// 0.40 s silent".
func appendUnderrunHead(b []byte, u *Unit) []byte {
	b = strconv.AppendInt(append(b, "unit "...), u.Index, 10)
	b = appendPlural(append(b, ": "...), u.Underruns, "underrun")
	return append(appendSecs(append(b, ", "...), u.Silent), " silent"...)
}

// appendNeedAgainstCushion writes the take's need against the unit's
// cushion, as secsApart prints them: "; take t2 need 1.504 s > cushion
// 1.500 s".
func appendNeedAgainstCushion(b []byte, take string, need float64, cmp string, cushion float64) []byte {
	var bn, bc [32]byte // on the stack
	sn, sc := apart(&bn, &bc, need, cushion)
	b = append(append(append(b, "; take "...), take...), " need "...)
	b = append(append(append(append(b, sn...), " s"...), cmp...), "cushion "...)
	return append(append(b, sc...), " s"...)
}

// fireBluetooth: the radio between the phone and the earbuds.
func fireBluetooth(t *turnView, _ *Rules, f *findings) {
	tr := t.turn
	if tr.Stutter && t.underruns == 0 && tr.Bluetooth {
		f.add(semconv.CauseBluetooth, "stutter with 0 underruns on "+tr.BTOutput)
	}
	if !tr.Stutter && t.underruns == 0 {
		return
	}
	what := "underran"
	if tr.Stutter {
		what = "stuttered"
	}
	for _, rc := range tr.RouteChanges {
		if rc.At < 0 {
			continue // before she began reading
		}
		reason := rc.Reason
		if reason == "" {
			reason = "no reason given"
		}
		f.add(semconv.CauseBluetooth, fmt.Sprintf("route change at %s (%s) on a turn that %s", secs(rc.At), reason, what))
	}
}

// fireWait: her words were late, or the microphone was slow to open.
func fireWait(t *turnView, c *Rules, f *findings) {
	late := -c.LateLead.Seconds()
	for _, u := range t.units {
		if u.HasLead && u.Lead < late {
			lead, limit := secsApart(u.Lead, late)
			f.add(semconv.CauseWait, fmt.Sprintf("unit %d queued late: lead %s < %s", u.Index, lead, limit))
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
	rest := total - tr.ListenGrant - tr.ListenSession
	switch {
	case tr.HasTotal && (tr.HasGrant || tr.HasSession) && rest > slowest:
		s += fmt.Sprintf(", most of it outside the grant and the session (%s)", secs(rest))
	case stage != "" && slowest > 0:
		s += fmt.Sprintf(", slowest stage %s %s", stage, secs(slowest))
	}
	f.add(semconv.CauseWait, s)
}

// firePool: its reading is whether the tally moved, not its value.
func firePool(t *turnView, _ *Rules, f *findings) {
	tr, x := t.turn, &t.across
	switch {
	case !tr.HasPoolResets:
	case x.poolBefore.OK && tr.PoolResets > x.poolBefore.V:
		f.add(semconv.CausePool, fmt.Sprintf("pool_reset moved %d→%d since the previous turn", x.poolBefore.V, tr.PoolResets))
	case x.firstTurn && tr.PoolResets > 0:
		f.add(semconv.CausePool, fmt.Sprintf("pool_reset %d on the first turn of a launch", tr.PoolResets))
	}
}

// fireState: the process holding something it should have let go.
func fireState(t *turnView, c *Rules, f *findings) {
	for _, ls := range t.across.live {
		if !rising(ls.Series, c.RisingTurns) {
			continue
		}
		tail := ls.Series[len(ls.Series)-c.RisingTurns-1:]
		parts := make([]string, len(tail))
		for i, n := range tail {
			parts[i] = strconv.FormatInt(n, 10)
		}
		f.add(semconv.CauseState, fmt.Sprintf("%s %s rose on each of the last %d turns", ls.Kind, strings.Join(parts, "→"), c.RisingTurns))
	}
}

// primary picks the turn's primary cause from what fired.
func primary(t *turnView, f *findings) string {
	switch {
	case len(t.problems) > 0:
		return semconv.CauseUnknown
	case t.underruns > 0:
		best, cause := -1.0, ""
		for _, c := range silenceRanking {
			if g := f.find(c); g.fired() && g.silent > best {
				cause, best = c, g.silent
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

// silenceRanking is underrunCauses, listed once: primary reads it for
// every turn that underran.
var silenceRanking = underrunCauses()

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
	// Sized once for every cause that fired: the list grew from one.
	out := make([]string, 1, 1+len(f.by))
	out[0] = primary
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
