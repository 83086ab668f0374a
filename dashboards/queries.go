package dashboards

import (
	"fmt"
	"strings"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// Dashboard variables. Their names appear in every query; Expand in the
// tests substitutes them to read the queries against a real Prometheus.
const (
	varInstallation = "installation"
	varLink         = "link"
	varLaunch       = "launch"

	// rateInterval is Grafana's range for rate() and increase(): at least
	// four scrape intervals, so a panel never reads a single sample.
	rateInterval = "$__rate_interval"
	// stepWindow is Grafana's step: bars that count events per step use it,
	// so every event lands in exactly one bar.
	stepWindow = "$__interval"
	// wholeRange is the dashboard's selected time range, for panels that
	// answer "over the day".
	wholeRange = "$__range"
)

// DefaultPostBudget is the criterion's allowance, in seconds, for a turn's
// speech-end-to-post: the end-of-speech window plus the upload. The Done
// panel colours the slowest post red above it. It is
// semconv.DefaultPostBudget in seconds, the number `percause lines` and the
// verdict page read the day against.
const DefaultPostBudget = float64(semconv.DefaultPostBudget) / float64(time.Second)

// matcher is one label matcher of a selector.
type matcher string

func eq(l, v string) matcher    { return matcher(fmt.Sprintf("%s=%q", l, v)) }
func re(l, v string) matcher    { return matcher(fmt.Sprintf("%s=~%q", l, v)) }
func varRe(l, v string) matcher { return re(l, "$"+v) }

// The phone's series are chosen by installation and launch; turn-level
// series also by link. The engine's series carry neither (the engine has
// no installation), so its panels select by service alone.
var (
	phoneScope = []matcher{varRe(lInstallation, varInstallation), varRe(lLaunch, varLaunch)}
	linkScope  = append(append([]matcher{}, phoneScope...), varRe(lLink, varLink))
	// verdictScope selects the verdict counters, which carry the phone's
	// resource (installation, launch) and the turn's link.
	verdictScope = linkScope
)

// sel writes a selector: name{m1,m2,...}.
func sel(name string, ms ...[]matcher) string {
	var parts []string
	for _, group := range ms {
		for _, m := range group {
			parts = append(parts, string(m))
		}
	}
	if len(parts) == 0 {
		return name
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func with(base []matcher, extra ...matcher) []matcher {
	return append(append([]matcher{}, base...), extra...)
}

func by(labels ...string) string {
	if len(labels) == 0 {
		return ""
	}
	return " by (" + strings.Join(labels, ", ") + ")"
}

// maxOf is the largest value of series in each group of labels: for gauges
// and tallies, where one launch's reading must not add to another's.
func maxOf(series string, labels ...string) string {
	return "max" + by(labels...) + " (" + series + ")"
}

// legend is a Grafana legend naming a series by one of its labels.
func legend(label string) string { return "{{" + label + "}}" }

// growth is how much each series of a cumulative counter (or histogram
// bucket, sum, count) grew over window, counting a series born within the
// window from 0. increase() cannot: it starts from a series' first sample,
// and the series here are born at their first event (a launch's first
// underrun, the count connector's first verdict of a cause on a link), so
// increase() would drop exactly the events that matter most. A drop (the
// collector restarted and re-accumulates) counts as no growth rather than a
// negative one. docs/decisions/0301-counting-events-from-series-born-nonzero.md.
func growth(series, window string) string {
	return fmt.Sprintf("clamp_min(%s - (%s offset %s or %s * 0), 0)", series, series, window, series)
}

// sumGrowth: events per window, summed by labels.
func sumGrowth(series, window string, labels ...string) string {
	return fmt.Sprintf("sum%s (%s)", by(labels...), growth(series, window))
}

// quantile of a histogram's observations over window, by labels.
func quantile(q float64, m instrument, scope []matcher, window string, labels ...string) string {
	return fmt.Sprintf("histogram_quantile(%g, %s)", q, sumGrowth(sel(m.bucket(), scope), window, append([]string{"le"}, labels...)...))
}

// mean of a histogram's observations over window, by labels: exact,
// whatever the bucket boundaries.
func mean(m instrument, scope []matcher, window string, labels ...string) string {
	return fmt.Sprintf("%s / %s", sumGrowth(sel(m.sum(), scope), window, labels...), sumGrowth(sel(m.count(), scope), window, labels...))
}

// implicated: turns implicating cause per window (the verdict processor's
// reading, counted by the count connector).
func implicated(cause, window string) string {
	return sumGrowth(sel(promImplicated, with(verdictScope, eq(lCause, cause))), window)
}

// movedWithin is true (a sample per group) when a cumulative counter rose
// within window. increase() alone misses a series' first sample, so a
// series born above zero (a launch whose tally already moved, a status
// counter first written at 1) is caught by the second arm: present now
// with a value above 0, absent window ago. A launch restarting its tally at
// 0 is a new series at 0: neither arm fires.
func movedWithin(series, window string, labels ...string) string {
	return fmt.Sprintf("(sum%s (increase(%s[%s])) > 0) or (sum%s (%s unless %s offset %s) > 0)",
		by(labels...), series, window, by(labels...), series, series, window)
}
