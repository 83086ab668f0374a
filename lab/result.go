package lab

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/plural"
	"github.com/percause/percause/lab/phone"
	"github.com/percause/percause/lab/scenario"
	"github.com/percause/percause/lab/verdicts"
)

// TurnResult is one turn: what was expected, what the collector decided,
// and the readings behind it.
type TurnResult struct {
	Scenario string `json:"scenario"`
	// Turn is the turn's number within its scenario, from 1; LaunchTurn its
	// number within the phone's launch (pippa.turn.index).
	Turn       int    `json:"turn"`
	LaunchTurn int    `json:"launch_turn"`
	Expected   string `json:"expected"`
	// Cause, Causes and Evidence are the collector's verdict ("" cause: no
	// verdict came back).
	Cause    string   `json:"cause"`
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	TraceID  string   `json:"trace_id"`
	OK       bool     `json:"ok"`
	Mismatch string   `json:"mismatch,omitempty"`
	Readings Readings `json:"readings"`
	// HostStall is the longest pause of the lab's own process during the
	// turn, in person-seconds; Disturbed says it exceeded
	// DefaultStallLimit, so the turn's timing readings may be the host's.
	HostStall float64 `json:"host_stall"`
	Disturbed bool    `json:"disturbed"`
	// Attempt is 2 when the scenario ran again because a disturbed turn of
	// its first run missed its expectation.
	Attempt int `json:"attempt,omitempty"`

	expect scenario.Expect
}

// Readings are the turn's measurements as the phone and the engine exported
// them (and the phone's progress checks and status lines).
type Readings struct {
	Units     int     `json:"units"`
	Underruns int     `json:"underruns"`
	Silent    float64 `json:"silent"`
	Longest   float64 `json:"longest"`
	Cushion   float64 `json:"cushion"`
	Takes     int     `json:"takes"`
	// NeedMax is the largest need of the turn's takes; NeedUnderrun the
	// largest need of a take whose unit underran (-1: no unit underran).
	NeedMax      float64 `json:"need_max"`
	NeedUnderrun float64 `json:"need_underrun"`
	// MinLead is the lowest unit lead (0 when the turn had one unit).
	MinLead          float64          `json:"min_lead"`
	ListenTotal      float64          `json:"listen_total"`
	PoolResets       int              `json:"pool_resets"`
	PoolResetsBefore int              `json:"pool_resets_before"`
	Live             map[string]int   `json:"live"`
	LiveBefore       map[string][]int `json:"live_before,omitempty"`
	Bluetooth        bool             `json:"bluetooth"`
	RouteChanges     int              `json:"route_changes"`
	Stutter          bool             `json:"stutter"`
	Checks           int              `json:"checks"`
	ChecksFailed     int              `json:"checks_failed"`
	// CheckFailures say when each failed check was asked (person-seconds
	// into the turn) and how it failed.
	CheckFailures []string `json:"check_failures,omitempty"`
	// LinkStatuses are the status lines recorded during the turn
	// (pippa.link.status values, in order) and their messages as they
	// first read; LinkShown what each last read before the next change (a
	// wait's seconds grow while it lasts).
	LinkStatuses []string `json:"link_statuses"`
	LinkMessages []string `json:"link_messages"`
	LinkShown    []string `json:"link_shown"`
	// Link is the turn's network.connection.type and subtype ("cell/lte").
	Link string `json:"link"`
	// SpeechEndToPost is the turn's pippa.turn.speech_end_to_post (-1: not
	// reported: the post never left); NotSent its pippa.turn.not_sent.
	SpeechEndToPost float64 `json:"speech_end_to_post"`
	NotSent         float64 `json:"not_sent"`
	// PostBytes is the size of her recording as the phone posted it.
	PostBytes int `json:"post_bytes"`
	// Errors are the phone's calls that failed during the turn.
	Errors []string `json:"errors,omitempty"`
	// Refused are the phone's and the engine's readings the SDK refused
	// during the turn (instr.WithErrorHandler): each one fails the turn.
	Refused []string `json:"refused,omitempty"`
	// PerUnit is each unit read aloud with its take's engine readings.
	PerUnit []UnitReadings `json:"per_unit"`
}

// UnitReadings is one unit (phone side) and the take it played (engine side).
type UnitReadings struct {
	Index     int     `json:"index"`
	Take      string  `json:"take"`
	Gap       float64 `json:"gap"`
	Lead      float64 `json:"lead"`
	Underruns int     `json:"underruns"`
	Silent    float64 `json:"silent"`
	Longest   float64 `json:"longest"`
	FirstByte float64 `json:"first_byte"`
	Rate      float64 `json:"rate"`
	Need      float64 `json:"need"`
	Beside    int     `json:"beside"`
}

// readingsOf reads a turn's readings from its exported spans.
func readingsOf(spans []span, rep *phone.Report) Readings {
	r := Readings{Live: map[string]int{}, NeedUnderrun: -1, LinkStatuses: []string{}, LinkMessages: []string{}, LinkShown: []string{},
		SpeechEndToPost: -1}
	var previous []string // each change's pippa.link.previous_message
	takes := map[string]UnitReadings{}
	var units []UnitReadings
	first := true
	for _, s := range spans {
		a := s.Attrs
		switch s.Name {
		case semconv.SpanVoiceTurn:
			r.PoolResets = int(a[semconv.PoolResets].AsInt64())
			r.PoolResetsBefore = int(a[semconv.PoolResetsBefore].AsInt64())
			r.Bluetooth = a[semconv.RouteBluetooth].AsBool()
			r.Stutter = a[semconv.TurnStutter].AsBool()
			r.ListenTotal = a[semconv.ListenTotal].AsFloat64()
			r.Link = a[semconv.NetworkConnectionType].AsString()
			if sub := a[semconv.NetworkConnectionSubtype].AsString(); sub != "" {
				r.Link += "/" + sub
			}
			if v, ok := a[semconv.TurnSpeechEndPost]; ok {
				r.SpeechEndToPost = v.AsFloat64()
			}
			r.NotSent = a[semconv.TurnNotSent].AsFloat64()
			for _, k := range semconv.LiveKinds {
				if v, ok := a[attribute.Key(semconv.LiveAttr(k))]; ok {
					r.Live[k] = int(v.AsInt64())
				}
				if v, ok := a[attribute.Key(semconv.LiveBeforeAttr(k))]; ok {
					if r.LiveBefore == nil {
						r.LiveBefore = map[string][]int{}
					}
					for _, x := range v.AsInt64Slice() {
						r.LiveBefore[k] = append(r.LiveBefore[k], int(x))
					}
				}
			}
			for _, e := range s.Events {
				if e.Name == semconv.EventRouteChange {
					r.RouteChanges++
				}
			}
		case semconv.SpanVoiceUnit:
			u := UnitReadings{
				Index: int(a[semconv.UnitIndex].AsInt64()), Take: a[semconv.TakeID].AsString(),
				Gap: a[semconv.UnitGap].AsFloat64(), Lead: a[semconv.UnitLead].AsFloat64(),
				Underruns: int(a[semconv.UnitUnderruns].AsInt64()),
				Silent:    a[semconv.UnitSilent].AsFloat64(), Longest: a[semconv.UnitLongest].AsFloat64(),
			}
			units = append(units, u)
			r.Units++
			r.Underruns += u.Underruns
			r.Silent += u.Silent
			r.Longest = math.Max(r.Longest, u.Longest)
			r.Cushion = a[semconv.UnitCushion].AsFloat64()
			if u.Index > 1 && (first || u.Lead < r.MinLead) {
				r.MinLead, first = u.Lead, false
			}
		case semconv.SpanTTSTake:
			n := a[semconv.TakeNeed].AsFloat64()
			takes[a[semconv.TakeID].AsString()] = UnitReadings{Need: n, Rate: a[semconv.TakeRate].AsFloat64(),
				FirstByte: a[semconv.TakeFirstByte].AsFloat64(), Beside: int(a[semconv.TakeBeside].AsInt64())}
			r.Takes++
			r.NeedMax = math.Max(r.NeedMax, n)
		case semconv.SpanLinkStatus:
			r.LinkStatuses = append(r.LinkStatuses, a[semconv.LinkStatus].AsString())
			r.LinkMessages = append(r.LinkMessages, a[semconv.LinkStatusMessage].AsString())
			previous = append(previous, a[semconv.LinkPreviousMessage].AsString())
		}
	}
	for i := range r.LinkMessages {
		shown := r.LinkMessages[i]
		if i+1 < len(previous) && previous[i+1] != "" {
			shown = previous[i+1]
		}
		r.LinkShown = append(r.LinkShown, shown)
	}
	sort.Slice(units, func(i, j int) bool { return units[i].Index < units[j].Index })
	for _, u := range units {
		if tk, ok := takes[u.Take]; ok {
			u.Need, u.Rate, u.FirstByte, u.Beside = tk.Need, tk.Rate, tk.FirstByte, tk.Beside
			if u.Underruns > 0 {
				r.NeedUnderrun = math.Max(r.NeedUnderrun, tk.Need)
			}
		}
		r.PerUnit = append(r.PerUnit, u)
	}
	if rep != nil {
		r.Checks, r.ChecksFailed = len(rep.Checks), rep.ChecksFailed()
		for _, c := range rep.Checks {
			if !c.OK {
				r.CheckFailures = append(r.CheckFailures, fmt.Sprintf("at %.1f s: %s", c.Asked, c.Err))
			}
		}
		r.Errors = rep.Errors
		r.PostBytes = rep.PostBytes
	}
	return r
}

func (t *TurnResult) setVerdict(v verdicts.Verdict) {
	t.Cause, t.Evidence = v.Cause, v.Evidence
	t.Causes = append([]string{}, v.Causes...)
}

// judge compares the turn with its scenario's expectation.
func (t *TurnResult) judge() {
	var why []string
	e := t.expect
	if e.Cause != "" {
		switch {
		case t.Cause == "":
			why = append(why, "no verdict came back from the collector")
		case t.Cause != e.Cause:
			why = append(why, fmt.Sprintf("verdict %s, expected %s", t.Cause, e.Cause))
		}
	}
	if e.Link != "" && !slices.Contains(t.Readings.LinkStatuses, e.Link) {
		why = append(why, fmt.Sprintf("status line %s never shown (shown: %s)", e.Link, orNone(t.Readings.LinkStatuses)))
	}
	switch e.Missed {
	case scenario.MissedSome:
		if t.Readings.ChecksFailed == 0 {
			all := ""
			if t.Readings.Checks > 1 {
				all = "all "
			}
			why = append(why, fmt.Sprintf("%s%s answered, expected some to fail", all, plural.N(t.Readings.Checks, "progress check")))
		}
	case scenario.MissedNone:
		if t.Readings.ChecksFailed > 0 {
			why = append(why, fmt.Sprintf("%d of %s failed, expected none", t.Readings.ChecksFailed, plural.N(t.Readings.Checks, "progress check")))
		}
	}
	for _, s := range scenario.Strict {
		shown := slices.Contains(t.Readings.LinkStatuses, s)
		switch {
		case e.Shows(s) && !shown && s != e.Link: // a missing Link is said above
			why = append(why, fmt.Sprintf("status line %s never shown (shown: %s)", s, orNone(t.Readings.LinkStatuses)))
		case !e.Shows(s) && shown:
			why = append(why, fmt.Sprintf("status line %s shown, but its fault was not injected", s))
		}
	}
	if n := len(t.Readings.Refused); n > 0 {
		why = append(why, fmt.Sprintf("the SDK refused %d reading(s): %s", n, strings.Join(t.Readings.Refused, "; ")))
	}
	t.OK = len(why) == 0
	t.Mismatch = strings.Join(why, "; ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// WriteJSON writes one JSON object per turn.
func WriteJSON(w io.Writer, turns []TurnResult) error {
	enc := json.NewEncoder(w)
	for _, t := range turns {
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return nil
}

// Line is the turn as one line of text: scenario, turn, expected, verdict,
// whether they agree, and the detail: the link, the end of speech to the
// post leaving the phone, the progress checks (for turns that judge them),
// the lost-link status and the waits the phone showed, and the evidence.
func (t TurnResult) Line() string {
	verdict := t.Cause
	if verdict == "" {
		verdict = "(none yet)"
	}
	mark := "ok"
	if !t.OK {
		mark = "MISMATCH"
	}
	detail := t.Evidence
	if waits := waitLines(t.Readings); len(waits) > 0 {
		quoted := make([]string, len(waits))
		for i, w := range waits {
			quoted[i] = strconv.Quote(w)
		}
		detail = fmt.Sprintf("%s; %s", strings.Join(quoted, " → "), detail)
	}
	if msg := lastNonOK(t.Readings); msg != "" {
		detail = fmt.Sprintf("status %q; %s", msg, detail)
	}
	if t.expect.Missed != scenario.MissedAny {
		detail = fmt.Sprintf("checks %d failed of %d; %s", t.Readings.ChecksFailed, t.Readings.Checks, detail)
	}
	post := "post never left"
	if p := t.Readings.SpeechEndToPost; p >= 0 {
		post = fmt.Sprintf("post %.2f s", p)
	}
	link := t.Readings.Link
	if link == "" {
		link = semconv.LinkUnknown
	}
	detail = fmt.Sprintf("%s, %s; %s", link, post, detail)
	if !t.OK {
		detail = t.Mismatch + " | " + detail
		if t.Disturbed {
			detail = fmt.Sprintf("(the lab's host stalled %.1f s) %s", t.HostStall, detail)
		}
	}
	if t.Attempt > 1 {
		detail = "(second run: the first was disturbed by its host) " + detail
	}
	return fmt.Sprintf("%-14s %d  expected %-34s verdict %-10s %-8s %s", t.Scenario, t.Turn, t.Expected, verdict, mark, detail)
}

// waitLines are the wait lines the turn showed, in order, each as it last
// read before the line changed: the microphone's stages one after the
// other, a not-sent post with its seconds, her voice late and then what the
// bulk probe found (a line that only grew into the next is left out).
func waitLines(r Readings) []string {
	var out []string
	for i, s := range r.LinkStatuses {
		if !slices.Contains(semconv.WaitStatuses, s) {
			continue
		}
		msg := r.shown(i)
		if n := len(out); n > 0 && (out[n-1] == msg || strings.HasPrefix(msg, out[n-1])) {
			out[n-1] = msg
			continue
		}
		out = append(out, msg)
	}
	return out
}

// shown is status line i's message as it last read (its status when the
// readings have no message for it).
func (r Readings) shown(i int) string {
	switch {
	case i < len(r.LinkShown) && r.LinkShown[i] != "":
		return r.LinkShown[i]
	case i < len(r.LinkMessages) && r.LinkMessages[i] != "":
		return r.LinkMessages[i]
	}
	return r.LinkStatuses[i]
}

// lastNonOK is the last lost-link status line that named why the link was
// lost (or, failing that, "Checking why…"), as it last read; "" when the
// line never left OK but for the waits.
func lastNonOK(r Readings) string {
	msg := r.shown
	last := ""
	for i := len(r.LinkStatuses) - 1; i >= 0; i-- {
		switch s := r.LinkStatuses[i]; {
		case s == semconv.LinkStatusOK || slices.Contains(semconv.WaitStatuses, s):
		case s == semconv.LinkStatusConnectionLost:
			if last == "" {
				last = msg(i)
			}
		default:
			return msg(i)
		}
	}
	return last
}
