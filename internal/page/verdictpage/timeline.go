package verdictpage

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
)

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
	// Height is Max with its noun: "1 turn", "4 turns".
	Height string
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
func buildTimeline(turns []dayreport.JudgedTurn, loc *time.Location, lk links) timeline {
	tl := timeline{W: chartW, H: chartH, PlotBottomY: chartH - plotBottom, PlotLeft: plotLeft, PlotRight: chartW - plotRight}
	from, to := timeSpan(turns)
	if from.IsZero() {
		tl.Summary = "No turns in this range."
		return tl
	}
	step := bucketStep(from, to)
	start := floorTo(from, step, loc)
	bk := bucketTurns(turns, start, step, int(to.Sub(start)/step)+1)
	for i, c := range semconv.Causes {
		if bk.used[i] {
			tl.Causes = append(tl.Causes, c)
		}
	}
	maxTotal := bk.maxTotal()
	tl.Max = niceCeil(maxTotal)
	tl.Height = turnsOf(tl.Max)
	tl.Step = stepName(step)
	for i := range bk.counts {
		tl.addBar(&bk, i, turns, lk)
	}
	tl.XLabels = bk.axisLabels()
	tl.Summary = fmt.Sprintf("%s from %s to %s in %d bars of %s each; the busiest bar has %d.", turnsOf(len(turns)),
		from.In(loc).Format("2006-01-02 15:04:05"), to.In(loc).Format("15:04:05"), bk.n, oneStep(step), maxTotal)
	return tl
}

// timeSpan is when the first and the last timed turn began (zero: none
// was timed).
func timeSpan(turns []dayreport.JudgedTurn) (from, to time.Time) {
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
	return from, to
}

// buckets are the turns counted by bar (n of step each, from start) and
// by cause, in semconv.Causes' order.
type buckets struct {
	start  time.Time
	step   time.Duration
	n      int
	counts [][]int
	// newest is each count's newest turn, which its segment links to.
	newest  [][]*dayreport.JudgedTurn
	used    []bool // a cause some bar counts
	causeAt map[string]int
}

func bucketTurns(turns []dayreport.JudgedTurn, start time.Time, step time.Duration, n int) buckets {
	bk := buckets{start: start, step: step, n: n, counts: make([][]int, n), newest: make([][]*dayreport.JudgedTurn, n),
		used: make([]bool, len(semconv.Causes)), causeAt: map[string]int{}}
	for i := range bk.counts {
		bk.counts[i] = make([]int, len(semconv.Causes))
		bk.newest[i] = make([]*dayreport.JudgedTurn, len(semconv.Causes))
	}
	for i, c := range semconv.Causes {
		bk.causeAt[c] = i
	}
	for i := range turns {
		t := &turns[i]
		if t.Start == 0 {
			continue
		}
		b := int(t.Start.AsTime().Sub(start) / step)
		ci, ok := bk.causeAt[t.Cause]
		if b < 0 || b >= n || !ok {
			continue
		}
		bk.counts[b][ci]++
		bk.newest[b][ci] = t // turns are in the order they happened
		bk.used[ci] = true
	}
	return bk
}

// maxTotal is the most turns a bar counts.
func (bk *buckets) maxTotal() int {
	maxTotal := 0
	for _, row := range bk.counts {
		tot := 0
		for _, c := range row {
			tot += c
		}
		maxTotal = max(maxTotal, tot)
	}
	return maxTotal
}

// addBar adds bar i, a segment a cause, and its row of the table (a bar
// without turns has neither).
func (tl *timeline) addBar(bk *buckets, i int, turns []dayreport.JudgedTurn, lk links) {
	plotW := float64(tl.PlotRight - tl.PlotLeft)
	plotH := float64(tl.PlotBottomY - plotTop)
	slot := plotW / float64(bk.n)
	gap := math.Min(2, slot*0.2)
	row := bk.counts[i]
	bt := bk.start.Add(time.Duration(i) * bk.step)
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
		sg.Href, sg.Title = segLink(c, semconv.Causes[ci], bk.newest[i][ci], turns, lk)
		b.Segs = append(b.Segs, sg)
		parts = append(parts, fmt.Sprintf("%s %d", semconv.Causes[ci], c))
		total += c
	}
	if total == 0 {
		return
	}
	b.Title = fmt.Sprintf("%s, %s: %s", bt.Format("2006-01-02 15:04:05"), stepName(bk.step), strings.Join(parts, ", "))
	tl.Bars = append(tl.Bars, b)
	r := timelineRow{From: bt.Format("2006-01-02 15:04:05"), Total: total}
	for _, c := range tl.Causes {
		r.Counts = append(r.Counts, row[bk.causeAt[c]])
	}
	tl.Rows = append(tl.Rows, r)
}

// segLink is where a segment of c turns of cause links, last its newest:
// that turn when it is alone or the page has no list, else the list of
// the cause at the page that holds it, at its card.
func segLink(c int, cause string, last *dayreport.JudgedTurn, turns []dayreport.JudgedTurn, lk links) (href, title string) {
	switch {
	case c == 1:
		return lk.turn(last.Trace), fmt.Sprintf("turn %d, %s", last.Turn, cause)
	case lk.q == nil:
		return lk.turn(last.Trace), fmt.Sprintf("%d %s turns; the newest", c, cause)
	}
	var page int
	if lk.q.Cause == cause {
		page = lk.page[last.Trace]
	} else {
		page = causePage(turns, cause, last.Trace, lk)
	}
	return lk.with(func(q *Query) { q.Cause, q.Page = cause, page }) + "#t-" + last.Trace, fmt.Sprintf("%d %s turns, listed", c, cause)
}

// axisLabels are the times under the first, the middle and the last bar.
func (bk *buckets) axisLabels() []axisLabel {
	n, step := bk.n, bk.step
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
	marks := []int{0, n / 2, n - 1}
	switch n {
	case 1:
		marks = []int{0}
	case 2:
		marks = []int{0, 1}
	}
	var out []axisLabel
	for _, i := range marks {
		out = append(out, axisLabel{Text: label(bk.start.Add(time.Duration(i) * step))})
	}
	return out
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
func causePage(turns []dayreport.JudgedTurn, cause, trace string, lk links) int {
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
