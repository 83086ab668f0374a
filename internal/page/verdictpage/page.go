package verdictpage

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
)

//go:embed page.css
var css string

//go:embed page.html.tmpl
var pageTemplate string

// CSP is the page's Content-Security-Policy: nothing may be fetched, no
// script runs, and the one style sheet is the page's own (by its hash).
// The page carries it in a meta element; the server sends it as a header
// too, with frame-ancestors, which a meta element cannot carry.
var CSP = "default-src 'none'; style-src 'sha256-" + styleHash() + "'; img-src data:; form-action 'self'; base-uri 'none'"

func styleHash() string {
	h := sha256.Sum256([]byte(css))
	return base64.StdEncoding.EncodeToString(h[:])
}

// Defaults of a rendering.
const (
	// DefaultListed is how many of the most recent turns the page lists.
	DefaultListed = 50
	// maxBuckets bounds the bars of the chart of turns over time.
	maxBuckets = 48
)

// Page is what one rendering shows.
type Page struct {
	// Title heads the page.
	Title string
	// Now is when it is rendered; Loc the zone its times are written in.
	Now time.Time
	Loc *time.Location
	// From and To bound the range asked for; the chart's bars span the
	// turns in it.
	From, To time.Time
	// RangeLabel says the range in words ("last 24 hours", "the log's
	// turns").
	RangeLabel string
	// Query is the served page's choice of range, installation, cause,
	// page of turns or one turn; nil for a static page, which then has no
	// form, links within itself and does not refresh.
	Query *Query
	// Installations are those the form offers.
	Installations []string
	// Turns are the turns in range (of the installation asked for), in the
	// order they happened; Links the link status changes likewise. For a
	// turn's permalink (Query.Turn), the turn and its link changes.
	Turns []dayreport.Turn
	Links []dayreport.LinkChange
	// Budget is the done reading's speech-end-to-post allowance, seconds.
	Budget float64
	// Refresh is how often the served page reloads itself (0: never).
	Refresh time.Duration
	// Listed is how many turns a page of the list holds, and how many of
	// the most recent link changes are listed (DefaultListed when 0).
	Listed int
	// Kept says what the page's store keeps, under the page ("" : nothing
	// said).
	Kept string
	// Alerts are Alertmanager's firing alerts, shown above "Done?"; nil
	// when no Alertmanager is known to the page.
	Alerts *Alerts
}

// Alerts is what Alertmanager said when the page asked it.
type Alerts struct {
	// Source is the Alertmanager asked (its URL).
	Source string
	// Err says why it did not answer ("" when it did).
	Err string
	// Firing are its firing alerts, longest firing first.
	Firing []Alert
	// Silences are its active silences, the soonest to end first.
	Silences []Silence
}

// Silence is one active silence of Alertmanager.
type Silence struct {
	ID string
	// Matchers say what it silences, as Alertmanager writes them
	// (app_installation_id="…").
	Matchers string
	Ends     time.Time
	Comment  string
	// Liftable: the page may lift it (percause up made it, from a
	// notification's mute).
	Liftable bool
}

// Alert is one firing alert.
type Alert struct {
	Name    string
	Summary string
	Since   time.Time
	// Installation is the installation it names ("" none), Trace the
	// turn's trace ID it names ("" none): the box links to that turn, or
	// else to that installation's turns. Cause is the verdict cause the
	// alert is about ("" none): with an installation and no trace, the
	// page's owner sets Trace to that installation's latest kept turn
	// that implicated it.
	Installation string
	Trace        string
	Cause        string
}

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"css": func() template.CSS { return template.CSS(css) },
}).Parse(pageTemplate))

// Render writes the page. On an error w may hold part of it: both callers
// render into a buffer they send or write only whole.
func Render(w io.Writer, p Page) error {
	if err := tmpl.Execute(w, build(p)); err != nil {
		return fmt.Errorf("verdictpage: %w", err)
	}
	return nil
}

// Find is the turn with this trace ID among turns (ok false if none).
func Find(turns []dayreport.Turn, trace string) (dayreport.Turn, bool) {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Trace == trace {
			return turns[i], true
		}
	}
	return dayreport.Turn{}, false
}

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

type alertsView struct {
	Source, Err string
	Firing      []alertView
	Silences    []silenceView
}

type silenceView struct {
	ID, Matchers, Ends, Left, Comment string
	// Lift: the served page offers to lift it (a form posting lift=ID).
	Lift bool
}

type alertView struct {
	Name, Summary, Since, For, Href, Target string
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
	from, to := p.From, p.To
	if len(p.Turns) > 0 {
		if from.IsZero() {
			from = p.Turns[0].Start.AsTime()
		}
		if to.IsZero() {
			to = p.Turns[len(p.Turns)-1].Start.AsTime()
		}
	}
	if !from.IsZero() {
		v.FromText = from.In(p.Loc).Format("2006-01-02 15:04")
	}
	if !to.IsZero() {
		v.ToText = to.In(p.Loc).Format("2006-01-02 15:04")
	}
	for _, c := range semconv.Causes {
		if n := sum.ByCause[c]; n > 0 {
			cc := causeCount{Cause: c, N: n}
			if p.Query != nil {
				cc.Href = lk.with(func(q *Query) { q.Cause = c })
			}
			v.ByCause = append(v.ByCause, cc)
		}
	}
	if sum.NoVerdict > 0 {
		v.ByCause = append(v.ByCause, causeCount{Cause: "no verdict", N: sum.NoVerdict})
	}
	v.List, lk.page = listOf(p, lk, listed)
	v.Timeline = buildTimeline(p.Turns, p.Loc, lk)
	v.Implicated = buildImplicated(p.Turns)
	byTrace := map[string]*dayreport.Turn{}
	for i := range p.Turns {
		byTrace[p.Turns[i].Trace] = &p.Turns[i]
	}
	v.LinksOf = len(p.Links)
	for i := len(p.Links) - 1; i >= 0 && len(v.Links) < listed; i-- {
		lv := linkOf(p.Links[i], p.Loc, true)
		if t := byTrace[p.Links[i].Trace]; t != nil {
			lv.Turn, lv.TurnHref = fmt.Sprintf("turn %d", t.Turn), lk.turn(t.Trace)
		}
		v.Links = append(v.Links, lv)
	}
	return v
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
	newest := make([]*dayreport.Turn, 0, len(p.Turns))
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

// Trace is the trace ID of the turn asked for.
func (q Query) Trace() string { return q.Turn }

// maxAlerts bounds the alerts the box lists.
const maxAlerts = 20

func alertsOf(p Page) *alertsView {
	if p.Alerts == nil {
		return nil
	}
	av := &alertsView{Source: p.Alerts.Source, Err: p.Alerts.Err}
	for i, a := range p.Alerts.Firing {
		if i == maxAlerts {
			break
		}
		v := alertView{Name: a.Name, Summary: a.Summary}
		if !a.Since.IsZero() {
			v.Since = a.Since.In(p.Loc).Format("2006-01-02 15:04:05")
			v.For = since(p.Now.Sub(a.Since))
		}
		switch {
		case a.Trace != "" && TraceID(a.Trace):
			v.Href, v.Target = TurnHref(a.Trace), "its turn"
		case a.Installation != "":
			v.Href, v.Target = Query{Range: "all", Installation: a.Installation}.Href(), "the installation's turns"
		}
		if p.Query == nil && v.Href != "" {
			v.Href = ""
		}
		av.Firing = append(av.Firing, v)
	}
	for i, sl := range p.Alerts.Silences {
		if i == maxAlerts {
			break
		}
		av.Silences = append(av.Silences, silenceView{ID: sl.ID, Matchers: sl.Matchers, Comment: sl.Comment,
			Ends: sl.Ends.In(p.Loc).Format("2006-01-02 15:04:05"), Left: since(sl.Ends.Sub(p.Now)),
			Lift: sl.Liftable && p.Query != nil})
	}
	return av
}

// since says a duration the way the alerts box does: "4 min", "2 h 5 min".
func since(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%d days", d/(24*time.Hour))
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

// turnView is one listed turn.
type turnView struct {
	Trace, Short, Cause, Time, Date, Link, Route, Evidence string
	Href                                                   string
	Forced, ForcedReason                                   string
	Installation, ShortInstallation, Launch, Version       string
	Turn                                                   int64
	Causes                                                 []string
	Readings                                               []reading
	Underran                                               []underrunView
	LinkStatus                                             []linkView
}

// reading is one of the turn's readings. Read marks one a rule read
// (shown in red): the underruns rule 1 read, the pool tally rule 5 saw
// move. Note says what the done reading makes of it ("over the 3.00 s
// budget"), which is no rule's.
type reading struct {
	Name, Value, Note string
	Read              bool
}

type underrunView struct {
	Unit                               int64
	Take, Silent, Need, Cushion, Cause string
	Underruns                          int64
	Compare                            string
}

func turnOf(t dayreport.Turn, changes []dayreport.LinkChange, loc *time.Location, budget float64, lk links) turnView {
	at := t.Start.AsTime().In(loc)
	tv := turnView{
		Trace: t.Trace, Short: short(t.Trace, 8), Cause: t.Cause, Turn: t.Turn, Href: lk.turn(t.Trace),
		Time: at.Format("15:04:05"), Date: at.Format("2006-01-02"),
		Link: t.Link, Evidence: t.Evidence, Forced: t.Forced, ForcedReason: dayreport.ForcedReason(t.Forced),
		Installation: t.Installation, ShortInstallation: short(t.Installation, 8), Launch: short(t.Launch, 8), Version: t.Version,
		Causes: t.Causes,
	}
	if t.Start == 0 {
		tv.Time, tv.Date = "time not reported", ""
	}
	if tv.Cause == "" {
		tv.Cause = "no verdict"
	}
	if tv.Link == "" {
		tv.Link = semconv.LinkUnknown
	}
	route := strings.Join(t.Outputs, ", ")
	if route == "" {
		route = "not reported"
	}
	if t.Bluetooth != nil && *t.Bluetooth {
		route += " (Bluetooth)"
	}
	tv.Route = route
	if t.Underruns > 0 || t.Silent > 0 {
		tv.Readings = append(tv.Readings, reading{Name: "underruns", Value: fmt.Sprintf("%d, %.2f s silent", t.Underruns, t.Silent),
			Read: len(t.Underran) > 0})
	}
	if t.SpeechEndToPost != nil {
		r := reading{Name: "speech end to post", Value: fmt.Sprintf("%.2f s", *t.SpeechEndToPost)}
		if *t.SpeechEndToPost > budget {
			r.Note = fmt.Sprintf("over the %.2f s budget", budget)
		}
		tv.Readings = append(tv.Readings, r)
	}
	if t.NotSent != nil {
		r := reading{Name: "not sent", Value: fmt.Sprintf("%.2f s", *t.NotSent)}
		if *t.NotSent > 0 {
			r.Note = `a "not sent" wait`
		}
		tv.Readings = append(tv.Readings, r)
	}
	if t.PoolResets != nil {
		val := fmt.Sprint(*t.PoolResets)
		if t.PoolResetsBefore != nil {
			val = fmt.Sprintf("%d (before: %d)", *t.PoolResets, *t.PoolResetsBefore)
		}
		tv.Readings = append(tv.Readings, reading{Name: "pool_reset", Value: val, Read: slices.Contains(t.Causes, semconv.CausePool)})
	}
	for i := range tv.Readings {
		tv.Readings[i].Value, tv.Readings[i].Note = keepUnits(tv.Readings[i].Value), keepUnits(tv.Readings[i].Note)
	}
	for _, u := range t.Underran {
		uv := underrunView{Unit: u.Unit, Take: u.Take, Underruns: u.Underruns, Silent: fmt.Sprintf("%.2f s", u.Silent),
			Cushion: fmt.Sprintf("%.2f s", u.Cushion), Cause: u.Cause, Need: "take never came"}
		if u.Need != nil {
			// The sign says what rule 1 read (the unit's cause); the need
			// is not compared again here.
			uv.Need, uv.Compare = fmt.Sprintf("%.2f s", *u.Need), "≤"
			if u.Cause == semconv.CauseSynthesis {
				uv.Compare = ">"
			}
		}
		tv.Underran = append(tv.Underran, uv)
	}
	for _, l := range changes {
		tv.LinkStatus = append(tv.LinkStatus, linkOf(l, loc, false))
	}
	return tv
}

type linkView struct {
	Time, Date, Status, Previous, Message, Installation, Readings string
	// Turn names the turn the change came during ("" none listed),
	// TurnHref links to it.
	Turn, TurnHref string
}

func linkOf(l dayreport.LinkChange, loc *time.Location, withDate bool) linkView {
	at := l.Time.AsTime().In(loc)
	lv := linkView{Time: at.Format("15:04:05"), Status: l.Status, Previous: l.Previous,
		Message: l.Message, Installation: l.Installation, Readings: keepUnits(dayreport.LinkReadings(l))}
	if withDate {
		lv.Date = at.Format("2006-01-02")
	}
	return lv
}

// numberUnit is a number and the unit after it ("6.2 s").
var numberUnit = regexp.MustCompile(`(\d) (s|ms)\b`)

// keepUnits joins each number to its unit with a no-break space, so a
// narrow line does not end in "6.2" and start the next with "s".
func keepUnits(s string) string { return numberUnit.ReplaceAllString(s, "$1\u00a0$2") }

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// The chart of turns over time.

// Chart geometry (SVG user units; the chart scales to the page's width).
const (
	chartW, chartH       = 640, 180
	plotLeft, plotRight  = 1, 1
	plotTop, plotBottom  = 2, 1
	rowHeight, barLabelW = 26, 92
	implicatedW          = 640
	implicatedCountSpace = 44
)

type timeline struct {
	W, H, PlotBottomY, PlotLeft, PlotRight int
	Step                                   string
	Max                                    int
	Bars                                   []bar
	XLabels                                []axisLabel
	Rows                                   []timelineRow
	Causes                                 []string
	Summary                                string
}

type bar struct {
	Title string
	Segs  []seg
}

type seg struct {
	X, Y, W, H float64
	Cause      string
	// Href links to the segment's turn, or to the list of its cause at
	// the page holding its newest turn, at that turn's card.
	Href, Title string
}

type axisLabel struct {
	Text string
}

type timelineRow struct {
	From   string
	Counts []int
	Total  int
}

var steps = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
	3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

// bucketStep is the smallest step that covers [from, to] in at most
// maxBuckets bars.
func bucketStep(from, to time.Time) time.Duration {
	span := to.Sub(from)
	for _, s := range steps {
		if span/s < maxBuckets {
			return s
		}
	}
	return time.Duration(math.Ceil(float64(span)/float64(maxBuckets)/float64(24*time.Hour))) * 24 * time.Hour
}

// floorTo is t rounded down to a multiple of step in loc's clock.
func floorTo(t time.Time, step time.Duration, loc *time.Location) time.Time {
	t = t.In(loc)
	_, off := t.Zone()
	shifted := t.Add(time.Duration(off) * time.Second).Truncate(step)
	return shifted.Add(-time.Duration(off) * time.Second).In(loc)
}

func stepName(s time.Duration) string {
	switch {
	case s%(24*time.Hour) == 0:
		if s == 24*time.Hour {
			return "day"
		}
		return fmt.Sprintf("%d days", s/(24*time.Hour))
	case s%time.Hour == 0:
		if s == time.Hour {
			return "hour"
		}
		return fmt.Sprintf("%d hours", s/time.Hour)
	case s == time.Minute:
		return "minute"
	case s < time.Minute:
		return fmt.Sprintf("%d seconds", s/time.Second)
	default:
		return fmt.Sprintf("%d minutes", s/time.Minute)
	}
}

// buildTimeline is the chart of turns by primary cause over time. Its
// bars span the turns' own times, first to last, whatever the range asked
// for: a range of a day whose turns came in ten minutes is drawn as those
// ten minutes.
func buildTimeline(turns []dayreport.Turn, loc *time.Location, lk links) timeline {
	tl := timeline{W: chartW, H: chartH, PlotBottomY: chartH - plotBottom, PlotLeft: plotLeft, PlotRight: chartW - plotRight}
	var from, to time.Time
	for _, t := range turns {
		if t.Start == 0 {
			continue
		}
		at := t.Start.AsTime()
		if from.IsZero() || at.Before(from) {
			from = at
		}
		if at.After(to) {
			to = at
		}
	}
	if from.IsZero() {
		tl.Summary = "No turns in this range."
		return tl
	}
	step := bucketStep(from, to)
	start := floorTo(from, step, loc)
	n := int(to.Sub(start)/step) + 1
	counts := make([][]int, n)
	newest := make([][]*dayreport.Turn, n)
	for i := range counts {
		counts[i] = make([]int, len(semconv.Causes))
		newest[i] = make([]*dayreport.Turn, len(semconv.Causes))
	}
	causeAt := map[string]int{}
	for i, c := range semconv.Causes {
		causeAt[c] = i
	}
	used := make([]bool, len(semconv.Causes))
	for i := range turns {
		t := &turns[i]
		if t.Start == 0 {
			continue
		}
		b := int(t.Start.AsTime().Sub(start) / step)
		ci, ok := causeAt[t.Cause]
		if b < 0 || b >= n || !ok {
			continue
		}
		counts[b][ci]++
		newest[b][ci] = t // turns are in the order they happened
		used[ci] = true
	}
	for i, c := range semconv.Causes {
		if used[i] {
			tl.Causes = append(tl.Causes, c)
		}
	}
	maxTotal := 0
	for _, row := range counts {
		tot := 0
		for _, c := range row {
			tot += c
		}
		maxTotal = max(maxTotal, tot)
	}
	tl.Max = niceCeil(maxTotal)
	tl.Step = stepName(step)
	plotW := float64(tl.PlotRight - tl.PlotLeft)
	plotH := float64(tl.PlotBottomY - plotTop)
	slot := plotW / float64(n)
	gap := math.Min(2, slot*0.2)
	label := func(t time.Time) string {
		switch {
		case step >= 24*time.Hour:
			return t.Format("Jan 2")
		case n*int(step/time.Second) > 24*3600:
			return t.Format("Jan 2 15:04")
		case step < time.Minute:
			return t.Format("15:04:05")
		}
		return t.Format("15:04")
	}
	for i, row := range counts {
		bt := start.Add(time.Duration(i) * step)
		x := float64(tl.PlotLeft) + float64(i)*slot + gap/2
		y := float64(tl.PlotBottomY)
		b := bar{}
		var parts []string
		total := 0
		for ci, c := range row {
			if c == 0 {
				continue
			}
			h := plotH * float64(c) / float64(tl.Max)
			y -= h
			sg := seg{X: round1(x), Y: round1(y), W: round1(slot - gap), H: round1(h), Cause: semconv.Causes[ci]}
			last := newest[i][ci]
			switch {
			case c == 1:
				sg.Href, sg.Title = lk.turn(last.Trace), fmt.Sprintf("turn %d, %s", last.Turn, semconv.Causes[ci])
			case lk.q == nil:
				sg.Href, sg.Title = lk.turn(last.Trace), fmt.Sprintf("%d %s turns; the newest", c, semconv.Causes[ci])
			default:
				cause, page := semconv.Causes[ci], 1
				if lk.q.Cause == cause {
					page = lk.page[last.Trace]
				} else {
					page = causePage(turns, cause, last.Trace, lk)
				}
				sg.Href = lk.with(func(q *Query) { q.Cause, q.Page = cause, page }) + "#t-" + last.Trace
				sg.Title = fmt.Sprintf("%d %s turns, listed", c, cause)
			}
			b.Segs = append(b.Segs, sg)
			parts = append(parts, fmt.Sprintf("%s %d", semconv.Causes[ci], c))
			total += c
		}
		if total > 0 {
			b.Title = fmt.Sprintf("%s, %s: %s", bt.Format("2006-01-02 15:04:05"), stepName(step), strings.Join(parts, ", "))
			tl.Bars = append(tl.Bars, b)
			r := timelineRow{From: bt.Format("2006-01-02 15:04:05"), Total: total}
			for _, c := range tl.Causes {
				r.Counts = append(r.Counts, row[causeAt[c]])
			}
			tl.Rows = append(tl.Rows, r)
		}
	}
	marks := []int{0, n / 2, n - 1}
	switch n {
	case 1:
		marks = []int{0}
	case 2:
		marks = []int{0, 1}
	}
	for _, i := range marks {
		tl.XLabels = append(tl.XLabels, axisLabel{Text: label(start.Add(time.Duration(i) * step))})
	}
	tl.Summary = fmt.Sprintf("%s from %s to %s in %d bars of %s each; the busiest bar has %d.", turnsOf(len(turns)),
		from.In(loc).Format("2006-01-02 15:04:05"), to.In(loc).Format("15:04:05"), n, oneStep(step), maxTotal)
	return tl
}

// oneStep is "one hour", "10 seconds".
func oneStep(s time.Duration) string {
	name := stepName(s)
	if strings.ContainsAny(name, "0123456789") {
		return name
	}
	return "one " + name
}

// causePage is the page of the list filtered by cause that holds the turn
// with this trace ID.
func causePage(turns []dayreport.Turn, cause, trace string, lk links) int {
	listed := lk.listed
	i := 0
	for j := len(turns) - 1; j >= 0; j-- {
		if turns[j].Cause != cause {
			continue
		}
		if turns[j].Trace == trace {
			return i/listed + 1
		}
		i++
	}
	return 1
}

func niceCeil(n int) int {
	if n <= 1 {
		return 1
	}
	p := 1
	for p*10 < n {
		p *= 10
	}
	for _, m := range []int{1, 2, 3, 4, 5, 6, 8} {
		if m*p >= n {
			return m * p
		}
	}
	return 10 * p
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// The chart of causes implicated.

type bars struct {
	Rows    []barRow
	Total   int
	Summary string
}

type barRow struct {
	Cause string
	N     int
	// BarW is the bar's length, percent of the longest.
	BarW float64
}

func buildImplicated(turns []dayreport.Turn) bars {
	counts := map[string]int{}
	for _, t := range turns {
		for i, c := range t.Causes {
			if !slices.Contains(t.Causes[:i], c) {
				counts[c]++
			}
		}
	}
	b := bars{Total: len(turns)}
	maxN := 0
	for _, n := range counts {
		maxN = max(maxN, n)
	}
	var parts []string
	for _, c := range semconv.Causes {
		n := counts[c]
		if n == 0 {
			continue
		}
		b.Rows = append(b.Rows, barRow{Cause: c, N: n, BarW: round1(math.Max(100*float64(n)/float64(maxN), 0.5))})
		parts = append(parts, fmt.Sprintf("%s %d", c, n))
	}
	if len(parts) == 0 {
		b.Summary = "No turns in this range."
	} else {
		b.Summary = fmt.Sprintf("Of %d turns, implicated: %s.", len(turns), strings.Join(parts, ", "))
	}
	return b
}

// Within keeps the turns and link changes of [from, to] (a zero bound is
// open) of one installation ("": every one). Both keep their order; with
// nothing to leave out they are returned as they are, not copied.
func Within(turns []dayreport.Turn, links []dayreport.LinkChange, from, to time.Time, installation string) ([]dayreport.Turn, []dayreport.LinkChange) {
	if from.IsZero() && to.IsZero() && installation == "" {
		return turns, links
	}
	in := func(ts pcommon.Timestamp, inst string) bool {
		t := ts.AsTime()
		return (installation == "" || inst == installation) &&
			(from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to))
	}
	return keep(turns, func(t *dayreport.Turn) bool { return in(t.Start, t.Installation) }),
		keep(links, func(l *dayreport.LinkChange) bool { return in(l.Time, l.Installation) })
}

// keep copies the items of s that in takes into a slice of their number
// (nil for none): the served page's turns are many and large.
func keep[T any](s []T, in func(*T) bool) []T {
	n := 0
	for i := range s {
		if in(&s[i]) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]T, 0, n)
	for i := range s {
		if in(&s[i]) {
			out = append(out, s[i])
		}
	}
	return out
}
