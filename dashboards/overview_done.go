package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// The "Done or not" row: the criterion written down for this work, over
// the selected range. Each stat is green when its part of the criterion
// holds, so one glance says whether the day was clean and which part failed.

const doneRule = "Done: a day of dictated turns on Wi-Fi and LTE with speech-end-to-post within the end-of-speech window " +
	"plus the upload, pool_reset at 0, and no \"not sent\" line. "

func doneSlowestPost() cog.Builder[dashboard.Panel] {
	return statPanel("Slowest speech-end-to-post",
		doneRule+"This part: the slowest turn's end of speech to its post leaving the phone "+
			fmt.Sprintf("(the upper bound of its histogram bucket), red above %g s (DefaultPostBudget).", DefaultPostBudget),
		"s").
		Thresholds(greenUntil(DefaultPostBudget)).
		WithTarget(promInstant(quantile(1, mSpeechEndToPost, linkScope, wholeRange), "slowest post"))
}

func donePoolResets() cog.Builder[dashboard.Panel] {
	return statPanel("Highest pool_reset tally",
		doneRule+"This part: the highest pool_reset tally any launch reached in the range; 0 is clean. "+
			"The tally counts heals since the launch and restarts at 0 on a new launch.",
		"short").
		Thresholds(greenUntil(1)).
		WithTarget(promInstant(
			fmt.Sprintf("max(max_over_time(%s[%s])) or vector(0)", sel(mPoolResets.prom(), phoneScope), wholeRange),
			"pool_reset"))
}

func doneNotSent() cog.Builder[dashboard.Panel] {
	return statPanel("\"Not sent\" seconds",
		doneRule+"This part: the seconds of \"not sent for N s\" waits shown in the range (the sum of each turn's longest); 0 is clean.",
		"s").
		Thresholds(greenUntil(0.001)).
		WithTarget(promInstant(
			sumGrowth(sel(mNotSent.sum(), linkScope), wholeRange)+" or vector(0)", "not sent"))
}

func doneTurns() cog.Builder[dashboard.Panel] {
	return statPanel("Turns in range",
		"How many turns reached a verdict in the range, by link: the criterion asks for a day on Wi-Fi and on LTE.",
		"short").
		Thresholds(redBelow(1)).
		WithTarget(promInstant(sumGrowth(sel(promTurns, verdictScope), wholeRange, lLink), legend(lLink)))
}
