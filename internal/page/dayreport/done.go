package dayreport

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/percause/percause/instr/semconv"
)

// The done reading: the day against the criterion, in numbers and in words.

// Summary is the day in numbers.
type Summary struct {
	Turns int `json:"turns"`
	// ByCause counts the turns by primary cause; NoVerdict the turns that
	// got none.
	ByCause   map[string]int `json:"by_cause"`
	NoVerdict int            `json:"no_verdict"`
	Done      Done           `json:"done"`
}

// Done is the criterion: dictated turns on Wi-Fi and on LTE, every turn's
// speech-end-to-post within the budget, pool_reset at 0, no "not sent"
// wait.
type Done struct {
	Done bool `json:"done"`
	// Links is the reading per link, one entry for each link a turn was on,
	// in semconv.Links order: the criterion wants dictated turns on Wi-Fi
	// and on LTE (semconv.LinkWifi, semconv.LinkCell).
	Links []LinkDone `json:"links"`
	// Budget is the speech-end-to-post allowance, seconds.
	Budget float64 `json:"budget"`
	// PostWithin counts the turns within the budget, PostOver those over
	// it, PostMissing those that did not report it; SlowestPost is the
	// slowest reported.
	PostWithin  int     `json:"post_within"`
	PostOver    int     `json:"post_over"`
	PostMissing int     `json:"post_missing"`
	SlowestPost float64 `json:"slowest_post"`
	// PoolResetMax is the highest tally reported (-1: none reported).
	PoolResetMax int64 `json:"pool_reset_max"`
	// NotSentTurns counts the turns that showed a "not sent" wait;
	// NotSentMax is the longest.
	NotSentTurns int     `json:"not_sent_turns"`
	NotSentMax   float64 `json:"not_sent_max"`
	// NotSentMissing counts the turns that did not report the wait.
	NotSentMissing int `json:"not_sent_missing"`
}

// LinkDone is the done reading of the turns on one link.
type LinkDone struct {
	// Link is the turn's network.connection.type (semconv.Links;
	// semconv.LinkUnknown when it said none).
	Link string `json:"link"`
	// Turns counts the link's turns; Dictated those that reported their
	// speech-end-to-post (the recording was posted), PostOver those of
	// them over the budget, SlowestPost the slowest.
	Turns       int     `json:"turns"`
	Dictated    int     `json:"dictated"`
	PostOver    int     `json:"post_over"`
	SlowestPost float64 `json:"slowest_post"`
}

// DoneLinks are the links the criterion wants dictated turns on.
var DoneLinks = []string{semconv.LinkWifi, semconv.LinkCell}

// LinkName is how the done reading names a link: the criterion's "Wi-Fi"
// and "LTE" for semconv's wifi and cell.
func LinkName(link string) string {
	switch link {
	case semconv.LinkWifi:
		return "Wi-Fi"
	case semconv.LinkCell:
		return "LTE"
	case "", semconv.LinkUnknown:
		return "link unknown"
	case semconv.LinkUnavailable:
		return "no link"
	}
	return link
}

// linkOf is a turn's link as the reading counts it.
func linkOf(t JudgedTurn) string {
	if t.Link == "" {
		return semconv.LinkUnknown
	}
	return t.Link
}

// Link is the reading of one link (a zero LinkDone naming it when no turn
// was on it).
func (d Done) Link(link string) LinkDone {
	for _, l := range d.Links {
		if l.Link == link {
			return l
		}
	}
	return LinkDone{Link: link}
}

// Summarize reads the day against the criterion with the given budget.
func (d *Day) Summarize(budget float64) Summary {
	s := Summary{Turns: len(d.Turns), ByCause: map[string]int{}, Done: Done{Budget: budget, PoolResetMax: -1}}
	byLink := map[string]*LinkDone{}
	for _, t := range d.Turns {
		l := byLink[linkOf(t)]
		if l == nil {
			l = &LinkDone{Link: linkOf(t)}
			byLink[l.Link] = l
		}
		l.count(t, budget)
		s.count(t, budget)
	}
	s.Done.Links = orderLinks(byLink)
	// Done only on readings: a part nobody reported is not done, and
	// neither is a day without dictated turns on each link it names.
	s.Done.Done = s.Turns > 0 && s.Done.linksDone() && s.Done.PostOver == 0 && s.Done.PostMissing == 0 &&
		s.Done.PoolResetMax == 0 && s.Done.NotSentTurns == 0 && s.Done.NotSentMissing == 0
	return s
}

// count adds a turn to the link's reading.
func (l *LinkDone) count(t JudgedTurn, budget float64) {
	l.Turns++
	if t.SpeechEndToPost != nil {
		l.Dictated++
		l.SlowestPost = math.Max(l.SlowestPost, *t.SpeechEndToPost)
		if *t.SpeechEndToPost > budget {
			l.PostOver++
		}
	}
}

// count adds a turn to the day's counts and its done reading.
func (s *Summary) count(t JudgedTurn, budget float64) {
	if t.Cause == "" {
		s.NoVerdict++
	} else {
		s.ByCause[t.Cause]++
	}
	switch {
	case t.SpeechEndToPost == nil:
		s.Done.PostMissing++
	case *t.SpeechEndToPost <= budget:
		s.Done.PostWithin++
	default:
		s.Done.PostOver++
	}
	if t.SpeechEndToPost != nil {
		s.Done.SlowestPost = math.Max(s.Done.SlowestPost, *t.SpeechEndToPost)
	}
	if t.PoolResets != nil && *t.PoolResets > s.Done.PoolResetMax {
		s.Done.PoolResetMax = *t.PoolResets
	}
	if t.NotSent == nil {
		s.Done.NotSentMissing++
	}
	if t.NotSent != nil && *t.NotSent > 0 {
		s.Done.NotSentTurns++
		s.Done.NotSentMax = math.Max(s.Done.NotSentMax, *t.NotSent)
	}
}

// orderLinks is the links' readings in semconv's order, then those of a
// link outside its list (the SDK counts none, a log line may say one), by
// name.
func orderLinks(byLink map[string]*LinkDone) []LinkDone {
	var out []LinkDone
	for _, link := range semconv.Links {
		if l := byLink[link]; l != nil {
			out = append(out, *l)
			delete(byLink, link)
		}
	}
	others := make([]string, 0, len(byLink))
	for link := range byLink {
		others = append(others, link)
	}
	sort.Strings(others)
	for _, link := range others {
		out = append(out, *byLink[link])
	}
	return out
}

// linksDone reports whether every link of DoneLinks had dictated turns.
func (d Done) linksDone() bool {
	for _, link := range DoneLinks {
		if d.Link(link).Dictated == 0 {
			return false
		}
	}
	return true
}

// Reason is one part of the done reading: whether it holds, the part, and
// the readings behind it.
type Reason struct {
	OK     bool   `json:"ok"`
	Part   string `json:"part"`
	Detail string `json:"detail"`
}

// Reasons are the done reading's four parts, in the order the criterion
// names them (docs/domain.md, "Done"): what the summary prints and the
// page shows. The first says which links the day's turns were on.
func (s Summary) Reasons() []Reason {
	d := s.Done
	post := fmt.Sprintf("%d of %d turns", d.PostWithin, s.Turns)
	if d.PostWithin+d.PostOver > 0 {
		post += fmt.Sprintf(", slowest %.2f s", d.SlowestPost)
	}
	if d.PostMissing > 0 {
		post += fmt.Sprintf(", %d did not report it", d.PostMissing)
	}
	var perLink []string
	for _, l := range d.Links {
		if l.Dictated > 0 {
			perLink = append(perLink, fmt.Sprintf("%s %d of %d, slowest %.2f s", LinkName(l.Link), l.Dictated-l.PostOver, l.Dictated, l.SlowestPost))
		}
	}
	if len(perLink) > 1 {
		post += " (" + strings.Join(perLink, "; ") + ")"
	}
	pool := "no turn reported it"
	if d.PoolResetMax >= 0 {
		pool = fmt.Sprintf("highest tally %d", d.PoolResetMax)
	}
	ns := "none shown"
	if d.NotSentTurns > 0 {
		ns = fmt.Sprintf("%s, longest %.2f s", turnsOf(d.NotSentTurns), d.NotSentMax)
	}
	if d.NotSentMissing > 0 {
		ns += fmt.Sprintf(", %d did not report it", d.NotSentMissing)
	}
	return []Reason{
		{OK: d.linksDone(), Part: "dictated turns on Wi-Fi and LTE", Detail: linksDetail(d)},
		{OK: d.PostOver == 0 && d.PostMissing == 0 && s.Turns > 0, Part: fmt.Sprintf("speech-end-to-post within %.2f s", d.Budget), Detail: post},
		{OK: d.PoolResetMax == 0, Part: "pool_reset at 0", Detail: pool},
		{OK: d.NotSentTurns == 0 && d.NotSentMissing == 0 && s.Turns > 0, Part: `no "not sent" wait`, Detail: ns},
	}
}

// linksDetail says which links the day's turns were on: the dictated
// turns on each link of DoneLinks (or that there were none), then the
// other links seen.
func linksDetail(d Done) string {
	var parts []string
	for _, link := range DoneLinks {
		l := d.Link(link)
		switch {
		case l.Turns == 0:
			parts = append(parts, fmt.Sprintf("%s none", LinkName(link)))
		case l.Dictated == l.Turns:
			parts = append(parts, fmt.Sprintf("%s %d dictated", LinkName(link), l.Dictated))
		default:
			parts = append(parts, fmt.Sprintf("%s %d dictated of %s", LinkName(link), l.Dictated, turnsOf(l.Turns)))
		}
	}
	var other []string
	for _, l := range d.Links {
		if !slices.Contains(DoneLinks, l.Link) {
			other = append(other, fmt.Sprintf("%s %d", LinkName(l.Link), l.Turns))
		}
	}
	out := strings.Join(parts, ", ")
	if len(other) > 0 {
		out += "; also " + strings.Join(other, ", ")
	}
	return out
}
