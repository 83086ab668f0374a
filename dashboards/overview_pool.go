package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/percause/percause/instr/semconv"
)

const poolRule = "Rule (pool): pool_reset is a tally of heals since the launch, never counted down; its reading is whether it moved " +
	"since the previous turn (or is above 0 on a launch's first turn), not its value. A new launch restarting at 0 is not movement. "

func poolTally() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("pool_reset tally",
		poolRule+"The tally per launch and lane (control, bulk).",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(maxOf(sel(mPoolResets.prom(), phoneScope), lLaunch, lLane),
			"{{"+lLane+"}} ({{"+lLaunch+"}})"))
}

func poolMovements() cog.Builder[dashboard.Panel] {
	return barsPanel("pool_reset movements",
		poolRule+"Heals per interval by lane: every bar is the alert \"pool_reset moved\".",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(sumGrowth(sel(mPoolResets.prom(), phoneScope), stepWindow, lLane), legend(lLane)))
}

func poolRepliesInFlight() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Replies in flight by lane",
		poolRule+"Calls waiting for a reply per lane: what a \"not sent for 20s (4 other calls open)\" wait counts.",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(maxOf(sel(mRepliesInFlight.prom(), phoneScope), lLane), legend(lLane)))
}

func poolVerdicts() cog.Builder[dashboard.Panel] {
	return barsPanel("Turns implicating pool healing",
		poolRule+"Turns whose verdict implicated the pool.",
		"short").
		Span(halfWidth).
		WithTarget(promRange(implicated(semconv.CausePool, stepWindow), semconv.CausePool))
}

func poolLinkStatus() cog.Builder[dashboard.Panel] {
	return barsPanel("Link status changes",
		"\"Reconnecting\" shows only when "+reconnectingRule+"; "+
			"a lost link then says exactly one of: engine restarting, device offline, cannot be reached. "+
			"Every change of the status line, by status (alert: Reconnecting fired).",
		"short").
		Span(halfWidth).
		WithTarget(promRange(sumGrowth(sel(mLinkStatus.prom(), phoneScope), stepWindow, lLinkStatus), legend(lLinkStatus)))
}
