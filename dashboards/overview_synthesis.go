package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/percause/percause/instr/semconv"
)

const synthesisRule = "Rule (synthesis): an underrun on a take whose need is above the unit's cushion broke on synthesis. " +
	"Engine readings: the engine serves every installation, so these panels ignore the installation and launch variables. "

// engineScope selects the engine's series.
var engineScope = []matcher{eq(lService, semconv.ServiceEngine)}

func synthesisFirstByte() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Take first byte",
		synthesisRule+"Seconds from a take's request to its first audio byte.",
		"s").
		WithTarget(promRange(quantile(0.5, mTakeFirstByte, engineScope, rateInterval), "median")).
		WithTarget(promRange(quantile(0.95, mTakeFirstByte, engineScope, rateInterval), "p95"))
}

func synthesisRate() cog.Builder[dashboard.Panel] {
	return withThresholdLine(timeseriesPanel("Rate against real time",
		synthesisRule+"Audio seconds made per second of making (mean over takes). Below 1 the engine is slower than real time: "+
			"every take then needs a cushion that grows with its length (alert: synthesis slower than real time).",
		"none"), redBelow(1)).
		WithTarget(promRange(mean(mTakeRate, engineScope, rateInterval), "mean rate"))
}

func synthesisNeed() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Need against cushion",
		synthesisRule+"need: the cushion a take alone needed to play without a gap (worst lag of its making behind playback). "+
			"When the need line rises above the cushion line, underruns are synthesis's.",
		"s").
		WithTarget(promRange(quantile(0.95, mTakeNeed, engineScope, rateInterval), "need p95")).
		WithTarget(promRange(quantile(0.5, mCushion, phoneScope, rateInterval), "cushion median"))
}

func synthesisBeside() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Takes made beside",
		synthesisRule+"The most other takes in flight while a take was made: a need that rises with it is the engine sharing itself.",
		"short").
		WithTarget(promRange(mean(mTakeBeside, engineScope, rateInterval), "mean beside")).
		WithTarget(promRange(quantile(1, mTakeBeside, engineScope, rateInterval), "max beside"))
}

func synthesisVerdicts() cog.Builder[dashboard.Panel] {
	return barsPanel("Turns implicating synthesis",
		synthesisRule+"Turns whose verdict implicated synthesis.",
		"short").
		WithTarget(promRange(implicated(semconv.CauseSynthesis, stepWindow), semconv.CauseSynthesis))
}
