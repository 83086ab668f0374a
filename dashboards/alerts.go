package dashboards

import (
	"fmt"

	"github.com/percause/percause/instr/semconv"
)

// DefaultAlertWindow is how long after a movement an alert keeps firing,
// and so how late an evaluation may come and still see it: a heal is
// announced for this long, then the alert resolves by itself (a tally never
// counts down, so "resolved" means "did not move again").
const DefaultAlertWindow = "10m"

// Alert names (Prometheus alertname, Grafana rule title and UID suffix).
const (
	AlertPoolResetMoved    = "PercausePoolResetMoved"
	AlertLiveCountGrowing  = "PercauseLiveCountGrowing"
	AlertSynthesisTooSlow  = "PercauseSynthesisSlowerThanRealTime"
	AlertReconnectingFired = "PercauseReconnecting"
	AlertPhoneSilent       = "PercausePhoneSilentWhileServed"
)

// dropNoTurn is the verdict processor's drop reason for a trace that aged
// out (max_age) without its voice.turn: the engine's takes of a turn whose
// phone never reported (processors/verdictprocessor/hold.go).
const dropNoTurn = "no_turn"

// comparison is how Grafana's threshold expression reads the query.
type comparison string

const (
	above comparison = "gt"
	below comparison = "lt"
)

// Alert is one alert, written both as a Prometheus alerting rule and as a
// Grafana-managed rule. Query is the PromQL Grafana evaluates; Prometheus
// evaluates Query Op Threshold unless Query already carries its own
// comparison (Compared).
type Alert struct {
	Name        string
	Summary     string
	Description string
	Query       string
	Op          comparison
	Threshold   float64
	// Compared: Query already keeps only the samples that fire (its value
	// is then the amount that moved), so Prometheus uses it as it is.
	Compared bool
	For      string
	Severity string
	// Cause is the verdict cause whose turns the alert is about ("" none):
	// written as the rule's percause_cause label, so a receiver (the
	// page, percause up's relay) can find the installation's latest turn
	// that implicated it.
	Cause string
	// Tally, for a movement alert, is the installation's running tally
	// (the counter summed over its launches): the Prometheus rule's value,
	// written into its LabelTally label. Each movement raises it, so each
	// movement is a new alert in the same Alertmanager group, which
	// notifies again; the alert of the tally before resolves.
	Tally string
}

// LabelTally is the label of a movement alert that carries the
// installation's running tally: it changes with every movement.
const LabelTally = "percause_tally"

// tallyTemplate writes the rule's value (a whole count) into LabelTally.
const tallyTemplate = `{{ printf "%.0f" $value }}`

// Labels are the rule's labels: its severity and, when it has one, its
// cause.
func (a Alert) Labels() map[string]string {
	l := map[string]string{"severity": a.Severity}
	if a.Cause != "" {
		l[lCause] = a.Cause
	}
	return l
}

// PromExpr is the Prometheus rule's expression. A movement alert's value
// is its Tally, where Query says it moved.
func (a Alert) PromExpr() string {
	if a.Compared && a.Tally != "" {
		return fmt.Sprintf("(%s) and on (%s) (%s)", a.Tally, lInstallation, a.Query)
	}
	if a.Compared {
		return a.Query
	}
	op := ">"
	if a.Op == below {
		op = "<"
	}
	return fmt.Sprintf("%s %s %g", a.Query, op, a.Threshold)
}

// Alerts returns every alert with the default window, in a fixed order:
// what the committed rules say.
func Alerts() []Alert { return AlertsWithin(DefaultAlertWindow) }

// AlertsWithin returns every alert with window w (a Prometheus duration such
// as "10m"; see WithAlertWindow), in a fixed order. The window is how long a
// movement keeps an alert firing; what counts as a movement does not change
// with it.
func AlertsWithin(w string) []Alert {
	return []Alert{
		{
			Name:    AlertPoolResetMoved,
			Summary: "pool_reset moved on installation {{ $labels." + lInstallation + " }}",
			Description: fmt.Sprintf("The phone's connection pool healed itself (%d buffered replies timed out in a row) within the last ", semconv.DefaultPoolResetAfter) + w +
				": something starved or stalled its calls. The tally counts heals since the launch; a relaunch restarting at 0 does not fire. " +
				"Open the Voice lane dashboard's Pool healing row and the turns around it.",
			Query:    movedWithin(sel(mPoolResets.prom()), w, lInstallation),
			Tally:    fmt.Sprintf("sum%s (%s)", by(lInstallation), sel(mPoolResets.prom())),
			Op:       above,
			Compared: true,
			For:      "0s",
			Severity: "page",
			Cause:    semconv.CausePool,
		},
		{
			Name:    AlertLiveCountGrowing,
			Summary: "a live count grows turn over turn on installation {{ $labels." + lInstallation + " }}",
			Description: "A turn's verdict implicated accumulated state within the last " + w +
				fmt.Sprintf(": a live count (players, microphone engines, audio queues, takes, byte streams, replies in flight) rose on each of the last %d turns of its launch. ", semconv.DefaultRisingTurns) +
				"The process holds something it should have let go: force-quit the app before rebooting the phone; the State row shows what grew.",
			Query:    movedWithin(sel(promImplicated, []matcher{eq(lCause, semconv.CauseState)}), w, lInstallation),
			Tally:    fmt.Sprintf("sum%s (%s)", by(lInstallation), sel(promImplicated, []matcher{eq(lCause, semconv.CauseState)})),
			Op:       above,
			Compared: true,
			For:      "0s",
			Severity: "warning",
			Cause:    semconv.CauseState,
		},
		{
			Name:    AlertSynthesisTooSlow,
			Summary: "synthesis is slower than real time on engine launch {{ $labels." + lLaunch + " }}",
			Description: "Over the last " + w + " the engine made takes at a mean rate below 1 audio second per second of making: " +
				"every take needs a cushion that grows with its length, and underruns will be synthesis's.",
			// By the engine's installation too (app.installation.id, when
			// the engine sets it), so the page links the alert to it.
			Query:     mean(mTakeRate, engineScope, w, lInstallation, lLaunch),
			Op:        below,
			Threshold: 1,
			For:       "2m",
			Severity:  "warning",
		},
		{
			Name:    AlertReconnectingFired,
			Summary: "\"Reconnecting\" was shown on installation {{ $labels." + lInstallation + " }}",
			Description: "The Reconnecting verdict fired within the last " + w + ": " + reconnectingRule +
				". Check the Pool healing row for a starved control lane before blaming the engine.",
			Query:    movedWithin(sel(mLinkStatus.prom(), []matcher{eq(lLinkStatus, semconv.LinkStatusReconnecting)}), w, lInstallation),
			Tally:    fmt.Sprintf("sum%s (%s)", by(lInstallation), sel(mLinkStatus.prom(), []matcher{eq(lLinkStatus, semconv.LinkStatusReconnecting)})),
			Op:       above,
			Compared: true,
			For:      "0s",
			Severity: "page",
		},
		{
			// Silence while in use: the heartbeat of percause up tells a
			// home machine gone quiet; this tells a phone gone quiet while
			// someone talks to its engine. A phone that is simply not used
			// sends nothing and its engine serves nothing: no alert.
			Name:    AlertPhoneSilent,
			Summary: "the phone's reports are not reaching home while its engine serves it",
			Description: "Within the last " + w + " the engine made takes for turns whose voice.turn never reached the collector within max_age " +
				"(the verdict processor dropped them, reason " + dropNoTurn + "): someone was talking to Pippa and the phone's reports are not reaching home " +
				"(its exporter refused or offline, the tunnel for OTLP down, or the app killed mid-reply). " +
				"Those turns have no verdict until the phone's spool sends them, and they are then judged without the engine's takes.",
			Query:    movedWithin(sel(colVerdictDropped, []matcher{eq(lReason2, dropNoTurn)}), w),
			Op:       above,
			Compared: true,
			For:      "0s",
			Severity: "warning",
		},
	}
}
