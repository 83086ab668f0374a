// Package dayreport is a day of turns with their verdicts, read from the
// traces the collector wrote (OTLP JSON lines, one export request a line),
// and its renderings: the per-turn table, the day's summary (turns by cause
// and the "done" reading) and one JSON object per turn. `percause lines`
// prints them; the verdict page (internal/page/verdictpage) renders the same
// Day, from the verdict spans alone: a Turn is what its verdict says
// (TurnFromVerdict), a LinkChange what a pippa.link.status span says.
package dayreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// Turn is one turn: its readings from voice.turn and its verdict.
type Turn struct {
	Trace    string   `json:"trace"`
	Turn     int64    `json:"turn"`
	Link     string   `json:"link"`
	Cause    string   `json:"cause"` // "" when no verdict was found
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	Forced   string   `json:"forced,omitempty"`
	// The done reading's readings; nil when the turn did not report them.
	SpeechEndToPost *float64 `json:"speech_end_to_post,omitempty"`
	NotSent         *float64 `json:"not_sent,omitempty"`
	PoolResets      *int64   `json:"pool_resets,omitempty"`
	// Start orders the turns of a day (the voice.turn span's end).
	Start pcommon.Timestamp `json:"-"`

	// What the page shows besides (none of it in the JSON form, whose
	// fields are fixed): the phone's resource, the verdict's other
	// readings, and what rule 1 read of each unit that underran.
	Installation     string            `json:"-"`
	Launch           string            `json:"-"`
	Version          string            `json:"-"`
	Rules            string            `json:"-"`
	Outputs          []string          `json:"-"`
	Bluetooth        *bool             `json:"-"`
	PoolResetsBefore *int64            `json:"-"`
	Underruns        int64             `json:"-"`
	Silent           float64           `json:"-"`
	Underran         []Underrun        `json:"-"`
	Decided          pcommon.Timestamp `json:"-"`
}

// Underrun is one unit that underran, as the verdict's percause.underrun
// event gives it: the unit, its take, the take's need against the unit's
// cushion, and the cause rule 1 read.
type Underrun struct {
	Unit      int64
	Take      string
	Underruns int64
	Silent    float64
	Cushion   float64
	// Need is nil when the take never came.
	Need  *float64
	Cause string
}

// LinkChange is one change of the phone's lost-link status, as its
// pippa.link.status span gives it.
type LinkChange struct {
	Time         pcommon.Timestamp
	Trace        string
	Span         string
	Installation string
	Launch       string
	Status       string
	Previous     string
	Message      string
	Check        string
	// FailingFor and QuietFor are nil when not reported.
	FailingFor *float64
	QuietFor   *float64
}

// Day is the turns read, in the order they happened.
type Day struct {
	Turns []Turn
	// Links are the lost-link status changes read, in the order they
	// happened.
	Links []LinkChange
	// Broken counts lines of the traces file that could not be read.
	Broken int
}

// Read reads the traces file: every voice.turn span and every
// percause.verdict span, joined by trace.
func Read(r io.Reader) (*Day, error) {
	byTrace := map[string]*Turn{}
	get := func(id string) *Turn {
		t, ok := byTrace[id]
		if !ok {
			t = &Turn{Trace: id}
			byTrace[id] = t
		}
		return t
	}
	day := &Day{}
	un := &ptrace.JSONUnmarshaler{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		td, err := un.UnmarshalTraces(line)
		if err != nil {
			day.Broken++
			continue
		}
		for res, s := range verdict.Spans(td) {
			switch s.Name() {
			case semconv.SpanVoiceTurn:
				t := get(s.TraceID().String())
				readTurn(t, s)
				readResource(t, res)
			case semconv.SpanVerdict:
				t := get(s.TraceID().String())
				r := verdict.FromSpan(res, s)
				t.readRecord(&r)
			case semconv.SpanLinkStatus:
				day.Links = append(day.Links, LinkFromSpan(res, s))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dayreport: %w", err)
	}
	for _, t := range byTrace {
		day.Turns = append(day.Turns, *t)
	}
	SortTurns(day.Turns)
	SortLinks(day.Links)
	return day, nil
}

// SortTurns orders turns as they happened: by time, then turn index, then
// trace.
func SortTurns(turns []Turn) {
	sort.Slice(turns, func(i, j int) bool {
		a, b := turns[i], turns[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Turn != b.Turn {
			return a.Turn < b.Turn
		}
		return a.Trace < b.Trace
	})
}

// SortLinks orders link status changes as they happened.
func SortLinks(links []LinkChange) {
	sort.SliceStable(links, func(i, j int) bool {
		if links[i].Time != links[j].Time {
			return links[i].Time < links[j].Time
		}
		return links[i].Span < links[j].Span
	})
}

// TurnFromVerdict reads one turn from its percause.verdict span alone and
// the resource it came under (the phone's): what the verdict says
// (verdict.FromSpan), nothing derived again. A verdict without the turn's
// time is placed at its decision.
func TurnFromVerdict(res pcommon.Resource, s ptrace.Span) Turn {
	r := verdict.FromSpan(res, s)
	return TurnFromRecord(&r)
}

// TurnFromRecord is the turn a verdict record says.
func TurnFromRecord(r *verdict.Record) Turn {
	t := Turn{Trace: r.TraceID.String()}
	t.readRecord(r)
	if t.Start == 0 {
		t.Start = r.Decided
	}
	return t
}

// LinkFromSpan reads one lost-link status change from its
// pippa.link.status span and the phone's resource.
func LinkFromSpan(res pcommon.Resource, s ptrace.Span) LinkChange {
	a := s.Attributes()
	l := LinkChange{
		Time:         s.StartTimestamp(),
		Trace:        s.TraceID().String(),
		Span:         s.SpanID().String(),
		Installation: verdict.AttrString(res.Attributes(), semconv.AppInstallationID),
		Launch:       verdict.AttrString(res.Attributes(), semconv.ServiceInstanceID),
		Status:       verdict.AttrString(a, semconv.LinkStatus),
		Previous:     verdict.AttrString(a, semconv.LinkPrevious),
		Message:      verdict.AttrString(a, semconv.LinkStatusMessage),
		Check:        verdict.AttrString(a, semconv.LinkCheck),
	}
	if v, ok := verdict.AttrNumber(a, semconv.LinkFailingFor); ok {
		l.FailingFor = &v
	}
	if v, ok := verdict.AttrNumber(a, semconv.LinkQuietFor); ok {
		l.QuietFor = &v
	}
	return l
}

func readResource(t *Turn, res pcommon.Resource) {
	a := res.Attributes()
	if v := verdict.AttrString(a, semconv.AppInstallationID); v != "" {
		t.Installation = v
	}
	if v := verdict.AttrString(a, semconv.ServiceInstanceID); v != "" {
		t.Launch = v
	}
	if v := verdict.AttrString(a, semconv.ServiceVersion); v != "" {
		t.Version = v
	}
}

func readTurn(t *Turn, s ptrace.Span) {
	a := s.Attributes()
	t.Start = s.EndTimestamp()
	if v, ok := a.Get(semconv.TurnIndex); ok && t.Turn == 0 {
		t.Turn = v.Int()
	}
	if v, ok := a.Get(semconv.NetworkConnectionType); ok && t.Link == "" {
		t.Link = v.AsString()
	}
	readDone(t, a)
}

// readRecord takes what a verdict says: its own readings over what t
// holds, the done reading's only where t lacks them (a voice.turn span,
// when the file has it, says the same).
func (t *Turn) readRecord(r *verdict.Record) {
	t.Cause, t.Evidence, t.Forced, t.Rules = r.Cause, r.Evidence, r.Forced, r.Rules
	t.Decided = r.Decided
	if r.Causes != nil {
		t.Causes = r.Causes
	}
	if r.Index != 0 {
		t.Turn = r.Index
	}
	if r.Link != "" {
		t.Link = r.Link
	}
	t.Underruns, t.Silent = r.Underruns, r.Silent
	if r.Outputs != nil {
		t.Outputs = r.Outputs
	}
	if r.Bluetooth.OK {
		t.Bluetooth = r.Bluetooth.Ptr()
	}
	if r.PoolBefore.OK {
		t.PoolResetsBefore = r.PoolBefore.Ptr()
	}
	t.Underran = nil
	for _, u := range r.Underran {
		t.Underran = append(t.Underran, Underrun{Unit: u.Unit, Take: u.TakeID, Underruns: u.Underruns,
			Silent: u.Silent, Cushion: u.Cushion, Need: u.Need.Ptr(), Cause: u.Cause})
	}
	// The verdict carries the turn's time and the done reading's readings
	// too, so a file of verdicts alone reads as a day.
	if r.TurnTime != 0 && t.Start == 0 {
		t.Start = r.TurnTime
	}
	if t.SpeechEndToPost == nil {
		t.SpeechEndToPost = r.SpeechEndToPost.Ptr()
	}
	if t.NotSent == nil {
		t.NotSent = r.NotSent.Ptr()
	}
	if t.PoolResets == nil {
		t.PoolResets = r.PoolResets.Ptr()
	}
	if r.Installation != "" {
		t.Installation = r.Installation
	}
	if r.Launch != "" {
		t.Launch = r.Launch
	}
	if r.Version != "" {
		t.Version = r.Version
	}
}

// readDone reads the done reading's readings from the voice.turn span's
// attributes, over what t holds.
func readDone(t *Turn, a pcommon.Map) {
	if v, ok := verdict.AttrNumber(a, semconv.TurnSpeechEndPost); ok {
		t.SpeechEndToPost = &v
	}
	if v, ok := verdict.AttrNumber(a, semconv.TurnNotSent); ok {
		t.NotSent = &v
	}
	if n, ok := verdict.AttrInt(a, semconv.PoolResets); ok {
		t.PoolResets = &n
	}
}

// turnsOf writes "1 turn", "2 turns".
func turnsOf(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

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
func linkOf(t Turn) string {
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
		l.Turns++
		if t.SpeechEndToPost != nil {
			l.Dictated++
			l.SlowestPost = math.Max(l.SlowestPost, *t.SpeechEndToPost)
			if *t.SpeechEndToPost > budget {
				l.PostOver++
			}
		}
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
	for _, link := range semconv.Links {
		if l := byLink[link]; l != nil {
			s.Done.Links = append(s.Done.Links, *l)
			delete(byLink, link)
		}
	}
	// A link outside semconv's list (the SDK counts none, a log line may
	// say one) is read too, after them, by name.
	others := make([]string, 0, len(byLink))
	for link := range byLink {
		others = append(others, link)
	}
	sort.Strings(others)
	for _, link := range others {
		s.Done.Links = append(s.Done.Links, *byLink[link])
	}
	// Done only on readings: a part nobody reported is not done, and
	// neither is a day without dictated turns on each link it names.
	s.Done.Done = s.Turns > 0 && s.Done.linksDone() && s.Done.PostOver == 0 && s.Done.PostMissing == 0 &&
		s.Done.PoolResetMax == 0 && s.Done.NotSentTurns == 0 && s.Done.NotSentMissing == 0
	return s
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

// WriteTable writes one row per turn, in time order: its time (UTC), its
// launch (the first 8 characters of its service.instance.id), index,
// trace, link, verdict and evidence; a line where a launch begins (the
// turn's launch is not the row's above) names the launch and when it
// began, so a relaunch's turn 1 does not sit under the last launch's turns
// with nothing between them.
func WriteTable(w io.Writer, turns []Turn) error {
	bw := &errWriter{w: w}
	bw.printf("%-8s  %-8s  %-5s %-8s  %-11s %-10s %s\n", "time", "launch", "turn", "trace", "link", "verdict", "evidence")
	prev := ""
	for i, t := range turns {
		verdict, link := t.Cause, t.Link
		if verdict == "" {
			verdict = "(none)"
		}
		if link == "" {
			link = semconv.LinkUnknown
		}
		launch := shortID(t.Launch)
		if i == 0 || t.Launch != prev {
			began := ""
			if t.Start != 0 {
				began = " from " + t.Start.AsTime().UTC().Format("2006-01-02 15:04:05") + " UTC"
			}
			bw.printf("── launch %s%s\n", launch, began)
			prev = t.Launch
		}
		at := "-"
		if t.Start != 0 {
			at = t.Start.AsTime().UTC().Format("15:04:05")
		}
		ev := t.Evidence
		if len(t.Causes) > 1 {
			ev = "[" + strings.Join(t.Causes, ", ") + "] " + ev
		}
		bw.printf("%-8s  %-8s  %-5d %-8s  %-11s %-10s %s\n", at, launch, t.Turn, shortID(t.Trace), link, verdict, ev)
	}
	return bw.err
}

// shortID is the first 8 characters of an ID, "-" for none.
func shortID(id string) string {
	switch {
	case id == "":
		return "-"
	case len(id) > 8:
		return id[:8]
	}
	return id
}

// WriteSummary writes the day's summary: turns by cause and the done reading.
func WriteSummary(w io.Writer, s Summary) error {
	bw := &errWriter{w: w}
	var parts []string
	for _, c := range semconv.Causes {
		if n := s.ByCause[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	if s.NoVerdict > 0 {
		parts = append(parts, fmt.Sprintf("no verdict %d", s.NoVerdict))
	}
	bw.printf("%d turns by cause: %s\n", s.Turns, orNone(strings.Join(parts, ", ")))
	state := "not done"
	if s.Done.Done {
		state = "done"
	}
	bw.printf("%s:\n", state)
	for _, r := range s.Reasons() {
		bw.printf("  %s %s: %s\n", mark(r.OK), r.Part, r.Detail)
	}
	return bw.err
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

// WriteJSON writes one object per turn, then one with the summary
// ({"summary": …}).
func WriteJSON(w io.Writer, turns []Turn, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, t := range turns {
		if t.Causes == nil {
			t.Causes = []string{}
		}
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	if s != nil {
		return enc.Encode(struct {
			Summary Summary `json:"summary"`
		}{*s})
	}
	return nil
}

func mark(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO "
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// ForcedReason says in words why a turn was decided before everything it
// names had arrived (the verdict's percause.forced), worded apart from the
// causes: "wait" is the processor's wait for takes, not the wait cause.
func ForcedReason(forced string) string {
	switch forced {
	case "":
		return ""
	case "wait":
		return "its takes had not all come when the processor's wait ran out"
	case "max_age":
		return "it was held as long as the processor's max_age allows"
	case "pending_limit":
		return "the processor held as many turns as max_pending allows"
	case "shutdown":
		return "the collector shut down while it waited"
	}
	return "for a reason this build does not know: " + forced
}

// LinkReadings are the readings a lost-link status change was chosen on,
// in words: "progress check failing for 6.2 s, quiet for 15.5 s".
func LinkReadings(l LinkChange) string {
	var rs []string
	switch {
	case l.FailingFor != nil && l.Check != "":
		rs = append(rs, fmt.Sprintf("%s failing for %.1f s", l.Check, *l.FailingFor))
	case l.FailingFor != nil:
		rs = append(rs, fmt.Sprintf("failing for %.1f s", *l.FailingFor))
	case l.Check != "":
		rs = append(rs, l.Check)
	}
	if l.QuietFor != nil {
		rs = append(rs, fmt.Sprintf("quiet for %.1f s", *l.QuietFor))
	}
	return strings.Join(rs, ", ")
}

// LinksOf are the link status changes of one trace (a turn's), in the
// order they came.
func LinksOf(links []LinkChange, trace string) []LinkChange {
	var out []LinkChange
	for _, l := range links {
		if l.Trace == trace {
			out = append(out, l)
		}
	}
	return out
}

// WriteTurn writes one turn as `percause turn` prints it: its verdict,
// evidence and readings, what rule 1 read of each unit that underran, and
// the phone's link status changes during the turn; times in loc.
func WriteTurn(w io.Writer, t Turn, links []LinkChange, budget float64, loc *time.Location) error {
	if loc == nil {
		loc = time.UTC
	}
	bw := &errWriter{w: w}
	when := "time not reported"
	if t.Start != 0 {
		when = t.Start.AsTime().In(loc).Format("2006-01-02 15:04:05 MST")
	}
	bw.printf("turn %d · %s · trace %s\n", t.Turn, when, t.Trace)
	cause := t.Cause
	if cause == "" {
		cause = "(no verdict)"
	}
	row := func(name, format string, args ...any) {
		bw.printf("  %-20s %s\n", name, fmt.Sprintf(format, args...))
	}
	row("verdict", "%s", cause)
	if len(t.Causes) > 0 {
		row("implicated", "%s", strings.Join(t.Causes, ", "))
	}
	row("evidence", "%s", orNone(t.Evidence))
	if t.Forced != "" {
		row("decided early", "%s (%s)", ForcedReason(t.Forced), t.Forced)
	}
	row("link", "%s", linkOf(t))
	if len(t.Outputs) > 0 {
		route := strings.Join(t.Outputs, ", ")
		if t.Bluetooth != nil && *t.Bluetooth {
			route += " (Bluetooth)"
		}
		row("route", "%s", route)
	}
	if t.Underruns > 0 || t.Silent > 0 {
		row("underruns", "%d, %.2f s silent", t.Underruns, t.Silent)
	}
	if t.SpeechEndToPost != nil {
		over := "within"
		if *t.SpeechEndToPost > budget {
			over = "over"
		}
		row("speech end to post", "%.2f s (%s the %.2f s budget)", *t.SpeechEndToPost, over, budget)
	}
	if t.NotSent != nil {
		row("not sent", "%.2f s", *t.NotSent)
	}
	if t.PoolResets != nil {
		if t.PoolResetsBefore != nil {
			row("pool_reset", "%d (before: %d)", *t.PoolResets, *t.PoolResetsBefore)
		} else {
			row("pool_reset", "%d", *t.PoolResets)
		}
	}
	var who []string
	if t.Installation != "" {
		who = append(who, "installation "+t.Installation)
	}
	if t.Launch != "" {
		who = append(who, "launch "+t.Launch)
	}
	if t.Version != "" {
		who = append(who, "version "+t.Version)
	}
	if t.Rules != "" {
		who = append(who, "rules "+t.Rules)
	}
	if len(who) > 0 {
		row("from", "%s", strings.Join(who, ", "))
	}
	if len(t.Underran) > 0 {
		bw.printf("units that underran, each take's need against the unit's cushion:\n")
		for _, u := range t.Underran {
			need := "the take never came"
			if u.Need != nil {
				cmp := "≤"
				if u.Cause == semconv.CauseSynthesis {
					cmp = ">"
				}
				need = fmt.Sprintf("need %.2f s %s cushion %.2f s", *u.Need, cmp, u.Cushion)
			}
			bw.printf("  unit %d, take %s: %d underruns, %.2f s silent; %s: read as %s\n", u.Unit, u.Take, u.Underruns, u.Silent, need, u.Cause)
		}
	}
	if len(links) > 0 {
		bw.printf("link status during the turn:\n")
		for _, l := range links {
			prev := ""
			if l.Previous != "" {
				prev = l.Previous + " → "
			}
			bw.printf("  %s %s%s", l.Time.AsTime().In(loc).Format("15:04:05"), prev, l.Status)
			if l.Message != "" {
				bw.printf(": %q", l.Message)
			}
			if r := LinkReadings(l); r != "" {
				bw.printf(" (%s)", r)
			}
			bw.printf("\n")
		}
	}
	return bw.err
}
