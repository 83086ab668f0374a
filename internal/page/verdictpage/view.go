package verdictpage

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
)

// The page's view: what the template renders, built from a Page.

// view is what the template reads.
type view struct {
	Title, RangeLabel, Generated, Zone, FromText, ToText string
	CSP, Kept                                            string
	Refresh                                              int
	Form                                                 *form
	Alerts                                               *alertsView
	Focus                                                *focusView
	Summary                                              dayreport.Summary
	Reasons                                              []dayreport.Reason
	ByCause                                              []causeCount
	Timeline                                             timeline
	Implicated                                           bars
	List                                                 listView
	Links                                                []linkView
	LinksOf                                              int
}

type form struct {
	Ranges        []option
	Installations []option
	Causes        []option
}

type option struct {
	Value, Label string
	Selected     bool
}

type causeCount struct {
	Cause, Href string
	N           int
}

// listView is the list of turns: a page of them, newest first.
type listView struct {
	Turns []turnView
	// Head says what is listed ("turns 51–100 of 164 network turns").
	Head string
	// Cause is the filter ("" none), Clear the link without it.
	Cause, Clear string
	// Newer and Older link to the pages beside this one ("" none).
	Newer, Older string
	// Empty says why nothing is listed.
	Empty string
}

// focusView is a turn's permalink.
type focusView struct {
	Trace string
	Found bool
	Turn  turnView
	// Day links to the page of the turn's installation.
	Day string
}

// links makes the page's links: on the served page, queries that ask the
// exporter again; on a static page, anchors within the one document.
type links struct {
	q *Query
	// page is the page of the list each listed turn is on (static: none);
	// listed how many turns a page holds.
	page   map[string]int
	listed int
}

// turn is the link to one turn: its permalink, or its card's anchor.
func (l links) turn(trace string) string {
	if l.q == nil {
		return "#t-" + trace
	}
	return TurnHref(trace)
}

// with is the served page's link to the query changed by f.
func (l links) with(f func(q *Query)) string {
	q := *l.q
	q.Turn, q.Format, q.Page = "", "", 1
	f(&q)
	return q.Href()
}

func build(p Page) view {
	if p.Loc == nil {
		p.Loc = time.UTC
	}
	listed := p.Listed
	if listed <= 0 {
		listed = DefaultListed
	}
	v := view{
		Title:      p.Title,
		RangeLabel: p.RangeLabel,
		Generated:  p.Now.In(p.Loc).Format("2006-01-02 15:04:05"),
		Zone:       zoneName(p.Now.In(p.Loc)),
		CSP:        CSP,
		Kept:       p.Kept,
		Refresh:    int(p.Refresh / time.Second),
		Alerts:     alertsOf(p),
	}
	lk := links{q: p.Query, listed: listed}
	if p.Query == nil {
		v.Refresh = 0
	} else {
		v.Form = formOf(p)
	}
	if p.Query != nil && p.Query.Turn != "" {
		v.Focus = focusOf(p, lk)
		v.Refresh = 0
		return v
	}
	day := dayreport.Day{Turns: p.Turns}
	sum := day.Summarize(p.Budget)
	v.Summary, v.Reasons = sum, sum.Reasons()
	v.FromText, v.ToText = rangeText(p)
	v.ByCause = byCauseOf(p, sum, lk)
	v.List, lk.page = listOf(p, lk, listed)
	v.Timeline = buildTimeline(p.Turns, p.Loc, lk)
	v.Implicated = buildImplicated(p.Turns)
	v.LinksOf = len(p.Links)
	v.Links = linksOf(p, lk, listed)
	return v
}

// rangeText is the range shown: the one asked for, else its turns' first
// and last.
func rangeText(p Page) (from, to string) {
	f, t := p.From, p.To
	if len(p.Turns) > 0 {
		if f.IsZero() {
			f = p.Turns[0].Start.AsTime()
		}
		if t.IsZero() {
			t = p.Turns[len(p.Turns)-1].Start.AsTime()
		}
	}
	if !f.IsZero() {
		from = f.In(p.Loc).Format("2006-01-02 15:04")
	}
	if !t.IsZero() {
		to = t.In(p.Loc).Format("2006-01-02 15:04")
	}
	return from, to
}

// byCauseOf counts the turns by primary cause, each linking to its list
// when the page is served.
func byCauseOf(p Page, sum dayreport.Summary, lk links) []causeCount {
	var out []causeCount
	for _, c := range semconv.Causes {
		if n := sum.ByCause[c]; n > 0 {
			cc := causeCount{Cause: c, N: n}
			if p.Query != nil {
				cc.Href = lk.with(func(q *Query) { q.Cause = c })
			}
			out = append(out, cc)
		}
	}
	if sum.NoVerdict > 0 {
		out = append(out, causeCount{Cause: "no verdict", N: sum.NoVerdict})
	}
	return out
}

// linksOf is the newest link status changes, at most listed, each naming
// the turn it came in when that turn is on the page.
func linksOf(p Page, lk links, listed int) []linkView {
	byTrace := map[string]*dayreport.JudgedTurn{}
	for i := range p.Turns {
		byTrace[p.Turns[i].Trace] = &p.Turns[i]
	}
	var out []linkView
	for i := len(p.Links) - 1; i >= 0 && len(out) < listed; i-- {
		lv := linkOf(p.Links[i], p.Loc, true)
		if t := byTrace[p.Links[i].Trace]; t != nil {
			lv.Turn, lv.TurnHref = fmt.Sprintf("turn %d", t.Turn), lk.turn(t.Trace)
		}
		out = append(out, lv)
	}
	return out
}

func formOf(p Page) *form {
	f := &form{}
	for _, r := range Ranges {
		f.Ranges = append(f.Ranges, option{Value: r.Key, Label: r.Label, Selected: r.Key == p.Query.Range})
	}
	f.Installations = append(f.Installations, option{Value: "", Label: "every installation", Selected: p.Query.Installation == ""})
	insts := slices.Clone(p.Installations)
	if p.Query.Installation != "" && !slices.Contains(insts, p.Query.Installation) {
		insts = append(insts, p.Query.Installation)
	}
	slices.Sort(insts)
	for _, in := range insts {
		f.Installations = append(f.Installations, option{Value: in, Label: in, Selected: in == p.Query.Installation})
	}
	f.Causes = append(f.Causes, option{Value: "", Label: "every cause", Selected: p.Query.Cause == ""})
	for _, c := range semconv.Causes {
		f.Causes = append(f.Causes, option{Value: c, Label: c, Selected: c == p.Query.Cause})
	}
	return f
}

// listOf is the page of the list the query asks for, newest first, and
// the page each turn of the (filtered) list is on, for the chart's links.
func listOf(p Page, lk links, listed int) (listView, map[string]int) {
	cause, page := "", 1
	if p.Query != nil {
		cause, page = p.Query.Cause, max(p.Query.Page, 1)
	}
	newest := make([]*dayreport.JudgedTurn, 0, len(p.Turns))
	for i := len(p.Turns) - 1; i >= 0; i-- {
		if cause == "" || p.Turns[i].Cause == cause {
			newest = append(newest, &p.Turns[i])
		}
	}
	pageOf := map[string]int{}
	for i, t := range newest {
		pageOf[t.Trace] = i/listed + 1
	}
	lv := listView{Cause: cause}
	of := turnsOf(len(newest))
	if cause != "" {
		of = fmt.Sprintf("%d %s turn", len(newest), cause)
		if len(newest) != 1 {
			of += "s"
		}
		lv.Clear = lk.with(func(q *Query) { q.Cause = "" })
	}
	if p.Query == nil {
		page, listed = 1, max(listed, len(newest))
	}
	lo := (page - 1) * listed
	hi := min(lo+listed, len(newest))
	switch {
	case len(newest) == 0 && cause != "":
		lv.Empty, lv.Head = fmt.Sprintf("No %s turn in this range.", cause), "0 "+cause+" turns."
	case len(newest) == 0:
		lv.Empty, lv.Head = "No turns in this range.", "0 turns."
	case lo >= len(newest):
		last := (len(newest)-1)/listed + 1
		lv.Empty = fmt.Sprintf("Page %d is past the last, page %d.", page, last)
		lv.Head = of + "."
		lv.Newer = lk.with(func(q *Query) { q.Cause, q.Page = cause, last })
	case lo == 0 && hi == len(newest):
		lv.Head = fmt.Sprintf("All %s, newest first.", of)
		if len(newest) == 1 {
			lv.Head = of + "."
		}
	default:
		lv.Head = fmt.Sprintf("Turns %d–%d of %s, newest first.", lo+1, hi, of)
	}
	if lo < len(newest) {
		for _, t := range newest[lo:hi] {
			lv.Turns = append(lv.Turns, turnOf(*t, dayreport.LinksOf(p.Links, t.Trace), p.Loc, p.Budget, lk))
		}
		if page > 1 {
			lv.Newer = lk.with(func(q *Query) { q.Cause, q.Page = cause, page-1 })
		}
		if hi < len(newest) {
			lv.Older = lk.with(func(q *Query) { q.Cause, q.Page = cause, page+1 })
		}
	}
	return lv, pageOf
}

func turnsOf(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

func focusOf(p Page, lk links) *focusView {
	fv := &focusView{Trace: p.Query.Trace()}
	t, ok := Find(p.Turns, fv.Trace)
	if !ok {
		fv.Day = lk.with(func(q *Query) {})
		return fv
	}
	fv.Found = true
	fv.Turn = turnOf(t, dayreport.LinksOf(p.Links, t.Trace), p.Loc, p.Budget, lk)
	fv.Day = lk.with(func(q *Query) { q.Installation, q.Range = t.Installation, "all" })
	return fv
}

func zoneName(t time.Time) string {
	name, off := t.Zone()
	if name == "" || strings.HasPrefix(name, "+") || strings.HasPrefix(name, "-") {
		return fmt.Sprintf("UTC%+03d:%02d", off/3600, abs(off%3600)/60)
	}
	return name
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
