package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/percause/percause/instr/semconv"
)

var waitRule = fmt.Sprintf("Rule (wait): a unit whose lead is below -%.2f s (queued after the previous unit had ended: her words were late, the pipeline), "+
	"or a microphone open over %s (naming the slowest stage). ", semconv.DefaultLateLead.Seconds(), seconds(semconv.DefaultMicOpenLimit))

func waitUnitLead() cog.Builder[dashboard.Panel] {
	return withThresholdLine(timeseriesPanel("Unit lead",
		waitRule+"When each unit was queued relative to the previous unit's end; negative is late. The p10 line is the latest units.",
		"s").
		Span(thirdWidth), redBelow(lateLeadLine)).
		WithTarget(promRange(quantile(0.1, mUnitLead, phoneScope, rateInterval), "p10")).
		WithTarget(promRange(quantile(0.5, mUnitLead, phoneScope, rateInterval), "median"))
}

func waitListenOpen() cog.Builder[dashboard.Panel] {
	return withThresholdLine(timeseriesPanel("Microphone open by stage",
		waitRule+"Seconds to open the microphone, by stage: the engine's grant, the audio session, and the total (p95).",
		"s").
		Span(thirdWidth), greenUntil(micOpenLine)).
		WithTarget(promRange(quantile(0.95, mListenOpen, phoneScope, rateInterval, lStage), legend(lStage)))
}

func waitVerdicts() cog.Builder[dashboard.Panel] {
	return barsPanel("Turns implicating the wait",
		waitRule+"Turns whose verdict implicated the wait.",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(implicated(semconv.CauseWait, stepWindow), semconv.CauseWait))
}
