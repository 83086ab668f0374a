package verdictpage

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/dayreport"
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
	// From and To bound the range shown; a zero From starts at the first
	// turn, a zero To ends at the last.
	From, To time.Time
	// RangeLabel says the range in words ("last 24 hours", "the log's
	// turns").
	RangeLabel string
	// Query is the served page's choice of range and installation; nil for
	// a static page, which then has no form and does not refresh.
	Query *Query
	// Installations are those the form offers.
	Installations []string
	// Turns are the turns in range (of the installation asked for), in the
	// order they happened; Links the link status changes likewise.
	Turns []dayreport.Turn
	Links []dayreport.LinkChange
	// Budget is the done reading's speech-end-to-post allowance, seconds.
	Budget float64
	// Refresh is how often the served page reloads itself (0: never).
	Refresh time.Duration
	// Listed is how many of the most recent turns and link changes are
	// listed (DefaultListed when 0).
	Listed int
	// Kept says what the page's store keeps, under the page ("" : nothing
	// said).
	Kept string
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

// view is what the template reads.
type view struct {
	Title, RangeLabel, Generated, Zone, FromText, ToText string
	CSP, Kept                                            string
	Refresh                                              int
	Form                                                 *form
	Summary                                              dayreport.Summary
	Reasons                                              []dayreport.Reason
	ByCause                                              []causeCount
	Timeline                                             timeline
	Implicated                                           bars
	Recent                                               []turnView
	RecentOf                                             int
	Links                                                []linkView
	LinksOf                                              int
}

type form struct {
	Ranges        []option
	Installations []option
}

type option struct {
	Value, Label string
	Selected     bool
}

type causeCount struct {
	Cause string
	N     int
}

func build(p Page) view {
	if p.Loc == nil {
		p.Loc = time.UTC
	}
	listed := p.Listed
	if listed <= 0 {
		listed = DefaultListed
	}
	day := dayreport.Day{Turns: p.Turns}
	sum := day.Summarize(p.Budget)
	v := view{
		Title:      p.Title,
		RangeLabel: p.RangeLabel,
		Generated:  p.Now.In(p.Loc).Format("2006-01-02 15:04:05"),
		Zone:       zoneName(p.Now.In(p.Loc)),
		CSP:        CSP,
		Kept:       p.Kept,
		Refresh:    int(p.Refresh / time.Second),
		Summary:    sum,
		Reasons:    sum.Reasons(),
	}
	if p.Query == nil {
		v.Refresh = 0
	} else {
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
		v.Form = f
	}
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
			v.ByCause = append(v.ByCause, causeCount{c, n})
		}
	}
	if sum.NoVerdict > 0 {
		v.ByCause = append(v.ByCause, causeCount{"no verdict", sum.NoVerdict})
	}
	v.Timeline = buildTimeline(p.Turns, from, to, p.Loc)
	v.Implicated = buildImplicated(p.Turns)
	v.RecentOf = len(p.Turns)
	for i := len(p.Turns) - 1; i >= 0 && len(v.Recent) < listed; i-- {
		v.Recent = append(v.Recent, turnOf(p.Turns[i], p.Loc, p.Budget))
	}
	v.LinksOf = len(p.Links)
	for i := len(p.Links) - 1; i >= 0 && len(v.Links) < listed; i-- {
		v.Links = append(v.Links, linkOf(p.Links[i], p.Loc))
	}
	return v
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
	Trace, Short, Cause, Time, Date, Link, Route, Evidence, Forced string
	Installation, Launch, Version                                  string
	Turn                                                           int64
	Causes                                                         []string
	Readings                                                       []reading
	Underran                                                       []underrunView
}

type reading struct {
	Name, Value string
	Bad         bool
}

type underrunView struct {
	Unit                               int64
	Take, Silent, Need, Cushion, Cause string
	Underruns                          int64
	Compare                            string
}

func turnOf(t dayreport.Turn, loc *time.Location, budget float64) turnView {
	at := t.Start.AsTime().In(loc)
	tv := turnView{
		Trace: t.Trace, Short: short(t.Trace, 8), Cause: t.Cause, Turn: t.Turn,
		Time: at.Format("15:04:05"), Date: at.Format("2006-01-02"),
		Link: t.Link, Evidence: t.Evidence, Forced: t.Forced,
		Installation: t.Installation, Launch: short(t.Launch, 8), Version: t.Version,
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
		tv.Readings = append(tv.Readings, reading{Name: "underruns", Value: fmt.Sprintf("%d, %.2f s silent", t.Underruns, t.Silent), Bad: true})
	}
	if t.SpeechEndToPost != nil {
		tv.Readings = append(tv.Readings, reading{Name: "speech end to post", Value: fmt.Sprintf("%.2f s", *t.SpeechEndToPost), Bad: *t.SpeechEndToPost > budget})
	}
	if t.NotSent != nil {
		tv.Readings = append(tv.Readings, reading{Name: "not sent", Value: fmt.Sprintf("%.2f s", *t.NotSent), Bad: *t.NotSent > 0})
	}
	if t.PoolResets != nil {
		val := fmt.Sprint(*t.PoolResets)
		if t.PoolResetsBefore != nil {
			val = fmt.Sprintf("%d (before: %d)", *t.PoolResets, *t.PoolResetsBefore)
		}
		tv.Readings = append(tv.Readings, reading{Name: "pool_reset", Value: val, Bad: *t.PoolResets > 0})
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
	return tv
}

type linkView struct {
	Time, Date, Status, Previous, Message, Check, Installation, Readings string
}

func linkOf(l dayreport.LinkChange, loc *time.Location) linkView {
	at := l.Time.AsTime().In(loc)
	lv := linkView{Time: at.Format("15:04:05"), Date: at.Format("2006-01-02"), Status: l.Status, Previous: l.Previous,
		Message: l.Message, Check: l.Check, Installation: l.Installation}
	var rs []string
	if l.FailingFor != nil {
		rs = append(rs, fmt.Sprintf("failing for %.1f s", *l.FailingFor))
	}
	if l.QuietFor != nil {
		rs = append(rs, fmt.Sprintf("quiet for %.1f s", *l.QuietFor))
	}
	lv.Readings = strings.Join(rs, ", ")
	return lv
}

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
}

type axisLabel struct {
	Text string
}

type timelineRow struct {
	From   string
	Counts []int
	Total  int
}

var steps = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
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
	default:
		return fmt.Sprintf("%d minutes", s/time.Minute)
	}
}

func buildTimeline(turns []dayreport.Turn, from, to time.Time, loc *time.Location) timeline {
	tl := timeline{W: chartW, H: chartH, PlotBottomY: chartH - plotBottom, PlotLeft: plotLeft, PlotRight: chartW - plotRight}
	if len(turns) == 0 || from.IsZero() || to.IsZero() {
		tl.Summary = "No turns in this range."
		return tl
	}
	if to.Before(from) {
		from, to = to, from
	}
	step := bucketStep(from, to)
	start := floorTo(from, step, loc)
	n := int(to.Sub(start)/step) + 1
	counts := make([][]int, n)
	for i := range counts {
		counts[i] = make([]int, len(semconv.Causes))
	}
	causeAt := map[string]int{}
	for i, c := range semconv.Causes {
		causeAt[c] = i
	}
	used := make([]bool, len(semconv.Causes))
	for _, t := range turns {
		if t.Start == 0 {
			continue
		}
		b := int(t.Start.AsTime().Sub(start) / step)
		ci, ok := causeAt[t.Cause]
		if b < 0 || b >= n || !ok {
			continue
		}
		counts[b][ci]++
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
		if step >= 24*time.Hour {
			return t.Format("Jan 2")
		}
		if n*int(step/time.Minute) > 24*60 {
			return t.Format("Jan 2 15:04")
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
			b.Segs = append(b.Segs, seg{X: round1(x), Y: round1(y), W: round1(slot - gap), H: round1(h), Cause: semconv.Causes[ci]})
			parts = append(parts, fmt.Sprintf("%s %d", semconv.Causes[ci], c))
			total += c
		}
		if total > 0 {
			b.Title = fmt.Sprintf("%s, %s: %s", bt.Format("2006-01-02 15:04"), stepName(step), strings.Join(parts, ", "))
			tl.Bars = append(tl.Bars, b)
			r := timelineRow{From: bt.Format("2006-01-02 15:04"), Total: total}
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
	tl.Summary = fmt.Sprintf("%d turns in %d bars of one %s each; the busiest bar has %d.", len(turns), n, stepName(step), maxTotal)
	return tl
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
