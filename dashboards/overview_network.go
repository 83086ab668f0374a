package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/percause/percause/instr/semconv"
)

const networkRule = "Rule (network): an underrun on a take whose need is at or under the unit's cushion broke on the network. "

func networkUnderruns() cog.Builder[dashboard.Panel] {
	return barsPanel("Underruns by link",
		networkRule+"Underruns counted per unit read aloud, by the turn's link (Wi-Fi, cellular).",
		"short").
		WithTarget(promRange(sumGrowth(sel(mUnderruns.prom(), linkScope), stepWindow, lLink), legend(lLink)))
}

func networkSilence() cog.Builder[dashboard.Panel] {
	return barsPanel("Silent seconds by link",
		networkRule+"Seconds of silence the underruns left, by link: the primary cause of a turn is the underrun cause with the most of them.",
		"s").
		WithTarget(promRange(sumGrowth(sel(mSilence.sum(), linkScope), stepWindow, lLink), legend(lLink)))
}

func networkCushion() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Cushion",
		networkRule+"Seconds buffered ahead of the play head when a unit started: the cushion each take's need is read against.",
		"s").
		WithTarget(promRange(quantile(0.5, mCushion, linkScope, rateInterval), "median")).
		WithTarget(promRange(quantile(0.1, mCushion, linkScope, rateInterval), "p10 (thinnest)"))
}

func networkVerdicts() cog.Builder[dashboard.Panel] {
	return barsPanel("Turns implicating the network",
		networkRule+"Turns whose verdict implicated the network.",
		"short").
		WithTarget(promRange(implicated(semconv.CauseNetwork, stepWindow), semconv.CauseNetwork))
}
