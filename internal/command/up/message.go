package up

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/instr/semconv"
)

// maxPayload bounds what the relay reads of one Alertmanager post.
const maxPayload = 1 << 20

// amAlert is one alert of Alertmanager's webhook payload (version 4).
type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// amPayload is Alertmanager's webhook payload: one alert group.
type amPayload struct {
	Version  string    `json:"version"`
	GroupKey string    `json:"groupKey"`
	Status   string    `json:"status"`
	Receiver string    `json:"receiver"`
	Alerts   []amAlert `json:"alerts"`
}

const (
	statusFiring   = "firing"
	statusResolved = "resolved"
	labelAlertname = "alertname"
	labelSeverity  = "severity"
	// labelInstallation is the installation label of the alerts
	// (app.installation.id as Prometheus names it).
	labelInstallation = "app_installation_id"
)

// badLabel stands, in a notification's headers, title and text, for a
// label value that is not printable (see cleanLabels).
const badLabel = "(unprintable label)"

// maxLabel is the longest label value a notification carries: an
// installation or launch ID is a few dozen bytes.
const maxLabel = 256

// printable reports whether a label value may go into a header or a title
// as it is: valid UTF-8 of at most maxLabel bytes whose every character is
// printable (no control character, no newline, no tab). Such a value is
// also a valid HTTP header field value: what is not ASCII is printable
// text, which net/http sends as it is.
func printable(v string) bool {
	if len(v) > maxLabel || !utf8.ValidString(v) {
		return false
	}
	for _, c := range v {
		if !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// cleanLabels is the one check of what an alert brings from its labels:
// each label value that is not printable is replaced by badLabel, in the
// labels and in the annotations Prometheus filled in from them (the
// summary is the title), so the notification built from the alert can
// always be sent. bad holds the values replaced, by label name; the alert
// passed in is not changed.
func cleanLabels(a amAlert) (clean amAlert, bad map[string]string) {
	for k, v := range a.Labels {
		if !printable(v) {
			if bad == nil {
				bad = map[string]string{}
			}
			bad[k] = v
		}
	}
	if bad == nil {
		return a, nil
	}
	values := make([]string, 0, len(bad))
	labels := make(map[string]string, len(a.Labels))
	for k, v := range a.Labels {
		labels[k] = v
	}
	for k, v := range bad {
		labels[k] = badLabel
		values = append(values, v)
	}
	// The longer first: a bad value may hold a shorter one.
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	annotations := make(map[string]string, len(a.Annotations))
	for k, text := range a.Annotations {
		for _, v := range values {
			text = strings.ReplaceAll(text, v, badLabel)
		}
		annotations[k] = text
	}
	a.Labels, a.Annotations = labels, annotations
	return a, bad
}

// quoteLabel is a label value as the relay's log names it: quoted, and cut
// after maxLabel bytes.
func quoteLabel(v string) string {
	if len(v) <= maxLabel {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%q… (%d bytes)", v[:maxLabel], len(v))
}

// parsePayload reads one webhook post. Anything but a version 4 payload
// whose every alert has a name, a start and a status of firing or
// resolved is refused: the relay never guesses what to tell a person.
func parsePayload(b []byte) (amPayload, error) {
	var p amPayload
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("not an Alertmanager webhook payload: %w", err)
	}
	if p.Version != "4" {
		return p, fmt.Errorf("webhook payload version %q, want 4", p.Version)
	}
	if len(p.Alerts) == 0 {
		return p, errors.New("webhook payload without alerts")
	}
	for i, a := range p.Alerts {
		switch {
		case a.Status != statusFiring && a.Status != statusResolved:
			return p, fmt.Errorf("alert %d: status %q, want firing or resolved", i, a.Status)
		case a.Labels[labelAlertname] == "":
			return p, fmt.Errorf("alert %d: no alertname", i)
		case a.StartsAt.IsZero():
			return p, fmt.Errorf("alert %d: no startsAt", i)
		}
	}
	return p, nil
}

// causeOf is the verdict cause whose turn an alert names, by alert name,
// as the rules say it (their percause_cause label); alerts without one
// name no turn. Made on first use: the rules are formatted whole, which
// no other percause command needs to pay for at start.
var causeOf = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, a := range dashboards.Alerts() {
		if a.Cause != "" {
			m[a.Name] = a.Cause
		}
	}
	return m
})

// movementAlerts fire for the window after a movement, then resolve.
var movementAlerts = map[string]bool{
	dashboards.AlertPoolResetMoved:    true,
	dashboards.AlertLiveCountGrowing:  true,
	dashboards.AlertReconnectingFired: true,
}

// message is one notification, before it takes the target's format.
type message struct {
	Title    string
	Body     string
	Priority int // ntfy's 1 (min) to 5 (max)
	Tags     []string
	Click    string

	Alert, Status, Severity, Installation string
	TurnID, TurnURL                       string
	TallyBefore, TallyAfter               *int64
	StartsAt, EndsAt                      time.Time

	// SequenceID makes the target update one notification in place
	// (ntfy's X-Sequence-ID, v2.16 and later): every message of an alert
	// group carries the same.
	SequenceID string
	// Again counts the movements told since the first of the episode
	// (0: this is the first); Moves and Span are what the installation
	// moved over the episode, and over how long.
	Again int
	Moves int64
	Span  time.Duration
	// Delay, when set, asks the target to deliver the message that much
	// later (ntfy's X-Delay); a later message with the same SequenceID
	// replaces it before then (the heartbeat).
	Delay time.Duration
	// Actions are ntfy's action buttons (the mute).
	Actions []action
}

// action is one of ntfy's action buttons: an HTTP request the phone makes
// when it is tapped.
type action struct {
	Action string `json:"action"`
	Label  string `json:"label"`
	URL    string `json:"url"`
	Method string `json:"method,omitempty"`
	Clear  bool   `json:"clear,omitempty"`
}

// header is the action in ntfy's Actions header form.
func (a action) header() string {
	h := fmt.Sprintf("%s, %s, %s", a.Action, a.Label, a.URL)
	if a.Method != "" {
		h += ", method=" + a.Method
	}
	if a.Clear {
		h += ", clear=true"
	}
	return h
}

// messageContext is what compose needs besides the alert.
type messageContext struct {
	pageURL string
	window  string
	loc     *time.Location
	// waited is set when a firing alert's turn was looked for and not found.
	waited bool
	// again, moves and span: see message.
	again int
	moves int64
	span  time.Duration
	unit  string // what moves counts: "heals", "turns", "movements"
}

// spanText is a span as a person reads it: seconds under a minute, then
// whole minutes rounded up.
func spanText(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	}
	return fmt.Sprintf("%d min", int((d+time.Minute-1)/time.Minute))
}

// compose writes the notification for one alert and the turn it names
// (nil: none found, or the alert names none).
func compose(a amAlert, turn *LinkedTurn, mc messageContext) message {
	name := a.Labels[labelAlertname]
	m := message{
		Alert: name, Status: a.Status, Severity: a.Labels[labelSeverity],
		Installation: a.Labels[labelInstallation], StartsAt: a.StartsAt, Click: mc.pageURL,
	}
	if a.Status == statusResolved {
		m.EndsAt = a.EndsAt
	}
	clock := func(t time.Time) string { return t.In(mc.loc).Format("15:04:05 MST") }
	summary := a.Annotations["summary"]
	if summary == "" {
		summary = name
	}
	var lines []string
	if turn != nil {
		m.TurnID = turn.TraceID
		m.TurnURL = turnURL(mc.pageURL, turn.TraceID)
		m.Click = m.TurnURL
		on := "turn " + fmt.Sprint(turn.Turn)
		if turn.Link != "" {
			on += " on " + turn.Link
		}
		if !turn.Ended.IsZero() {
			on += ", ended " + clock(turn.Ended)
		}
		reading := ""
		switch {
		case name == dashboards.AlertPoolResetMoved && turn.HasPool && turn.HasPoolBefore:
			before, after := turn.PoolBefore, turn.PoolAfter
			m.TallyBefore, m.TallyAfter = &before, &after
			reading = fmt.Sprintf("pool_reset moved %d→%d", before, after)
		case name == dashboards.AlertPoolResetMoved && turn.HasPool:
			after := turn.PoolAfter
			m.TallyAfter = &after
			reading = fmt.Sprintf("pool_reset at %d on its launch's first turn", after)
		default:
			reading = clauseOf(turn.Evidence, causeOf()[name])
		}
		if mc.again > 0 && a.Status == statusFiring {
			reading = strings.Replace(reading, " moved ", " moved again: ", 1)
			if !strings.Contains(reading, "moved again") {
				reading = "again: " + reading
			}
			reading += fmt.Sprintf(", %d %s in %s", mc.moves, mc.unit, spanText(mc.span))
		}
		line := fmt.Sprintf("%s on installation %s: %s.", reading, m.Installation, on)
		if a.Status == statusResolved {
			line = "The last movement: " + line
		}
		lines = append(lines, line)
	} else {
		line := summary + "."
		if mc.again > 0 && a.Status == statusFiring {
			line = fmt.Sprintf("%s again: %d %s in %s.", summary, mc.moves, mc.unit, spanText(mc.span))
		}
		if mc.waited {
			line += " The verdict of the turn that moved has not arrived yet: the page lists the latest turns."
		}
		lines = append(lines, line)
	}
	switch a.Status {
	case statusFiring:
		line := fmt.Sprintf("%s firing since %s.", name, clock(a.StartsAt))
		if movementAlerts[name] {
			line += fmt.Sprintf(" It stays firing for %s after the last movement.", mc.window)
		}
		lines = append(lines, line)
		m.Title = summary
		if mc.again > 0 {
			m.Title = fmt.Sprintf("%s (again: %d %s in %s)", summary, mc.moves, mc.unit, spanText(mc.span))
			m.Again, m.Moves, m.Span = mc.again, mc.moves, mc.span
		}
		// The priority follows the cause, through the rule's severity:
		// the pool and Reconnecting page (4), a growing live count and
		// slow synthesis warn (3).
		m.Priority, m.Tags = 3, []string{"warning", "percause"}
		if m.Severity == "page" {
			m.Priority, m.Tags = 4, []string{"rotating_light", "percause"}
		}
	case statusResolved:
		line := fmt.Sprintf("%s resolved at %s (firing since %s)", name, clock(a.EndsAt), clock(a.StartsAt))
		if movementAlerts[name] {
			line += fmt.Sprintf(": no movement for %s", mc.window)
		}
		lines = append(lines, line+".")
		m.Title = "Resolved: " + summary
		m.Priority, m.Tags = 2, []string{"white_check_mark", "percause"}
	}
	lines = append(lines, m.Click)
	m.Body = strings.Join(lines, "\n")
	return m
}

// clauseOf is the clause of a verdict's evidence that speaks of cause (the
// evidence joins one clause per rule that fired with "; "), or the whole
// evidence.
func clauseOf(evidence, cause string) string {
	marker := map[string]string{semconv.CauseState: "rose on each", semconv.CausePool: "pool_reset"}[cause]
	if marker != "" {
		for _, c := range strings.Split(evidence, "; ") {
			if strings.Contains(c, marker) {
				return c
			}
		}
	}
	return evidence
}

// turnURL is the page's address for one turn: PAGE/?turn=TRACE.
func turnURL(page, traceID string) string {
	u, err := url.Parse(page)
	if err != nil {
		return page
	}
	q := u.Query()
	q.Set("turn", traceID)
	u.RawQuery = q.Encode()
	return u.String()
}

// jsonMessage is the json format's body.
type jsonMessage struct {
	Title        string   `json:"title"`
	Message      string   `json:"message"`
	Priority     int      `json:"priority"`
	Tags         []string `json:"tags"`
	Click        string   `json:"click"`
	Alert        string   `json:"alert"`
	Status       string   `json:"status"`
	Severity     string   `json:"severity,omitempty"`
	Installation string   `json:"installation,omitempty"`
	Turn         string   `json:"turn,omitempty"`
	TurnURL      string   `json:"turn_url,omitempty"`
	TallyBefore  *int64   `json:"tally_before,omitempty"`
	TallyAfter   *int64   `json:"tally_after,omitempty"`
	StartsAt     string   `json:"starts_at"`
	EndsAt       string   `json:"ends_at,omitempty"`
	// ntfy's JSON publishing fields.
	SequenceID string   `json:"sequence_id,omitempty"`
	Delay      string   `json:"delay,omitempty"`
	Actions    []action `json:"actions,omitempty"`
	Again      int      `json:"again,omitempty"`
	Moves      int64    `json:"moves,omitempty"`
}

// delayText is a delay as ntfy's X-Delay reads it: whole seconds ("600s").
func delayText(d time.Duration) string { return fmt.Sprintf("%ds", int((d+time.Second-1)/time.Second)) }

func (m message) json() ([]byte, error) {
	j := jsonMessage{
		Title: m.Title, Message: m.Body, Priority: m.Priority, Tags: m.Tags, Click: m.Click,
		Alert: m.Alert, Status: m.Status, Severity: m.Severity, Installation: m.Installation,
		Turn: m.TurnID, TurnURL: m.TurnURL, TallyBefore: m.TallyBefore, TallyAfter: m.TallyAfter,
		StartsAt:   m.StartsAt.UTC().Format(time.RFC3339),
		SequenceID: m.SequenceID, Actions: m.Actions, Again: m.Again, Moves: m.Moves,
	}
	if m.Delay > 0 {
		j.Delay = delayText(m.Delay)
	}
	if !m.EndsAt.IsZero() {
		j.EndsAt = m.EndsAt.UTC().Format(time.RFC3339)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	return append(b, '\n'), err
}
