package verdictpage

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

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
	Turns []dayreport.JudgedTurn
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
func Find(turns []dayreport.JudgedTurn, trace string) (dayreport.JudgedTurn, bool) {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Trace == trace {
			return turns[i], true
		}
	}
	return dayreport.JudgedTurn{}, false
}

// Within keeps the turns and link changes of [from, to] (a zero bound is
// open) of one installation ("": every one). Both keep their order; with
// nothing to leave out they are returned as they are, not copied.
func Within(turns []dayreport.JudgedTurn, links []dayreport.LinkChange, from, to time.Time, installation string) ([]dayreport.JudgedTurn, []dayreport.LinkChange) {
	if from.IsZero() && to.IsZero() && installation == "" {
		return turns, links
	}
	in := func(ts pcommon.Timestamp, inst string) bool {
		t := ts.AsTime()
		return (installation == "" || inst == installation) &&
			(from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to))
	}
	return keep(turns, func(t *dayreport.JudgedTurn) bool { return in(t.Start, t.Installation) }),
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
