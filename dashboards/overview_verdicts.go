package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/piechart"
	"github.com/grafana/grafana-foundation-sdk/go/table"

	"github.com/percause/percause/instr/semconv"
)

// causeOrder is the order causes are listed in legends.
var causeOrder = semconv.Causes

// recentVerdicts is how many verdicts the recent-turns table lists.
const recentVerdicts = 30

// primaryRule is how the verdict processor chooses a turn's primary cause,
// and what unknown means; the panels that count primary causes state it.
const primaryRule = "The primary cause: on a turn with underruns, the underrun cause with the most silent seconds; " +
	"otherwise the first rule that fired of bluetooth, wait, pool, state; otherwise none. " +
	"unknown: an underrun whose take never reached the collector, or a reading that could not be read (bad input, named in the evidence)."

func turnsByCause() cog.Builder[dashboard.Panel] {
	return causeColorOverrides(barsPanel("Turns by primary cause",
		"Every turn counted once under its primary cause (percause_turns_total). "+primaryRule,
		"short").
		Span(fullWidth).
		WithTarget(promRange(sumGrowth(sel(promTurns, verdictScope), stepWindow, lCause), legend(lCause))))
}

func causeShares() cog.Builder[dashboard.Panel] {
	return piechart.NewPanelBuilder().
		Title("Share of turns by primary cause").
		Description("The selected range's turns split by primary cause: how much of the breaking up each cause explains. " +
			"A day that was clean is all none. " + primaryRule).
		Datasource(promDS()).
		Height(panelHeight).
		Span(thirdWidth).
		PieType(piechart.PieChartTypeDonut).
		DisplayLabels([]piechart.PieChartLabels{piechart.PieChartLabelsName, piechart.PieChartLabelsPercent}).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		WithTarget(promInstant(sumGrowth(sel(promTurns, verdictScope), wholeRange, lCause), legend(lCause)))
}

func implicatedCauses() cog.Builder[dashboard.Panel] {
	return causeColorOverrides(barsPanel("Causes implicated",
		"Every cause a rule implicated (percause_cause_implicated_total): a turn can implicate several, "+
			"so this shows the causes hidden behind a primary one.",
		"short").
		Span(thirdWidth * 2).
		WithTarget(promRange(sumGrowth(sel(promImplicated, verdictScope), stepWindow, lCause), legend(lCause))))
}

func recentTurnVerdicts() cog.Builder[dashboard.Panel] {
	return table.NewPanelBuilder().
		Title("Recent turns: verdict and evidence").
		Description(fmt.Sprintf("The last %d %s spans from Jaeger. Open a row for its trace: the verdict span carries "+
			"%s (primary), %s (all implicated) and %s (the readings and the rule, "+
			"e.g. \"unit 3: 2 underruns, 1.4 s silent; take t3 need 2.10 s > cushion 1.50 s\"), "+
			"beside the voice.turn, voice.unit and tts.take spans it was read from.",
			recentVerdicts, semconv.SpanVerdict, semconv.VerdictCause, semconv.VerdictCauses, semconv.VerdictEvidence)).
		Datasource(jaegerDS()).
		Height(panelHeight * 3 / 2).
		Span(fullWidth).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}).EnablePagination(true)).
		WithTarget(NewJaegerSearch(semconv.ServicePhone, semconv.SpanVerdict).
			Datasource(jaegerDS()).
			Limit(recentVerdicts))
}
