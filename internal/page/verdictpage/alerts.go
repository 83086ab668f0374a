package verdictpage

import (
	"fmt"
	"time"
)

// What Alertmanager said, as the page shows it.

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
