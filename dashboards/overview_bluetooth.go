package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/percause/percause/instr/semconv"
)

const bluetoothRule = "Rule (bluetooth): a stutter on a turn with 0 underruns and a Bluetooth output is the radio between the phone and the earbuds, " +
	"not the stream; so is a route change while she reads on a turn that stuttered or underran. "

func bluetoothRouteChanges() cog.Builder[dashboard.Panel] {
	return barsPanel("Route changes by reason",
		bluetoothRule+"Audio route changes while she reads, by the reason the system gave.",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(sumGrowth(sel(mRouteChanges.prom(), phoneScope), stepWindow, lReason), legend(lReason)))
}

// bluetoothShareExpr is the share of the range's turns on a Bluetooth
// route. With no series labelled by the route at all it returns nothing (the
// panel says so) rather than a misleading 0; with only turns off Bluetooth
// it returns 0.
func bluetoothShareExpr() string {
	turns := sel(mTurns.prom(), linkScope)
	on := sel(mTurns.prom(), with(linkScope, eq(lBluetooth, "true")))
	off := sel(mTurns.prom(), with(linkScope, eq(lBluetooth, "false")))
	return fmt.Sprintf("(%s or %s * 0) / %s", sumGrowth(on, wholeRange), sumGrowth(off, wholeRange), sumGrowth(turns, wholeRange))
}

func bluetoothShare() cog.Builder[dashboard.Panel] {
	return statPanel("Turns on a Bluetooth route",
		bluetoothRule+"The share of the range's turns whose output route was Bluetooth.",
		"percentunit").
		Span(thirdWidth).
		Height(panelHeight).
		NoValue("no turn carries " + semconv.RouteBluetooth).
		WithTarget(promInstant(bluetoothShareExpr(), "bluetooth"))
}

func bluetoothVerdicts() cog.Builder[dashboard.Panel] {
	return barsPanel("Turns implicating Bluetooth",
		bluetoothRule+"Turns whose verdict implicated Bluetooth.",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(implicated(semconv.CauseBluetooth, stepWindow), semconv.CauseBluetooth))
}
