package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/percause/percause/instr/semconv"
)

var stateRule = fmt.Sprintf("Rule (state): a live count of any kind that rose on each of the last %d turns of the same launch "+
	"is the process holding something it should have let go. ", semconv.DefaultRisingTurns)

func stateLiveCounts() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Live objects by kind",
		stateRule+"Players, microphone engines, audio queues, takes, open byte streams, replies in flight, at the end of each turn, per launch. "+
			"A staircase that a force-quit resets was our process; one that survives it and only a reboot clears was the phone's audio state.",
		"short").
		WithTarget(promRange(maxOf(sel(mLiveObjects.prom(), phoneScope), lLiveKind, lLaunch),
			"{{"+lLiveKind+"}} ({{"+lLaunch+"}})"))
}

func stateMemory() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Memory",
		stateRule+"The app's memory per launch: growth beside a growing live count names the leak's size.",
		"bytes").
		Span(thirdWidth).
		WithTarget(promRange(maxOf(sel(mMemory.prom(), phoneScope), lLaunch), legend(lLaunch)))
}

func stateAppUptime() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("App and device uptime",
		stateRule+"App uptime restarts on a relaunch, device uptime on a reboot (both also drawn as annotations).",
		"s").
		Span(thirdWidth).
		WithTarget(promRange(maxOf(sel(mAppUptime.prom(), phoneScope), lLaunch), "app {{"+lLaunch+"}}")).
		WithTarget(promRange(maxOf(sel(mDeviceUptime.prom(), phoneScope), lInstallation), "device"))
}

func stateVerdicts() cog.Builder[dashboard.Panel] {
	return barsPanel("Turns implicating state",
		stateRule+"Turns whose verdict implicated accumulated state (alert: live count growing).",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(implicated(semconv.CauseState, stepWindow), semconv.CauseState))
}
