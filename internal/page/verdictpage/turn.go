package verdictpage

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/dayreport"
)

// One turn as the page shows it: its verdict, readings, route, the underruns
// behind it and the link's status around it.

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

func turnOf(t dayreport.JudgedTurn, changes []dayreport.LinkChange, loc *time.Location, budget float64, lk links) turnView {
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
	tv.Route = routeOf(t)
	tv.Readings = readingsOf(t, budget)
	tv.Underran = underranOf(t)
	for _, l := range changes {
		tv.LinkStatus = append(tv.LinkStatus, linkOf(l, loc, false))
	}
	return tv
}

// routeOf is the turn's route as the page shows it: its outputs, and
// whether one is Bluetooth.
func routeOf(t dayreport.JudgedTurn) string {
	route := strings.Join(t.Outputs, ", ")
	if route == "" {
		route = "not reported"
	}
	if t.Bluetooth != nil && *t.Bluetooth {
		route += " (Bluetooth)"
	}
	return route
}

// readingsOf is the turn's readings as the page lists them: the day
// report's (dayreport.JudgedTurn.Readings), a note only where notable.
func readingsOf(t dayreport.JudgedTurn, budget float64) []reading {
	var out []reading
	for _, r := range t.Readings(budget) {
		rv := reading{Name: r.Name, Value: keepUnits(r.Value), Read: r.Read}
		if r.Notable {
			rv.Note = keepUnits(r.Note)
		}
		out = append(out, rv)
	}
	return out
}

// underranOf is each unit that underran, against its take's need.
func underranOf(t dayreport.JudgedTurn) []underrunView {
	var out []underrunView
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
		out = append(out, uv)
	}
	return out
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
