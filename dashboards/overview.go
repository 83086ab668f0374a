package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Dashboard identities (stable: links and bookmarks on the phone keep working
// across regenerations).
const (
	OverviewUID   = "percause-voice-lane"
	OverviewTitle = "Voice lane: one measurement per cause"
	PipelineUID   = "percause-pipeline"
	PipelineTitle = "percause pipeline: the collector's own health"
)

// annotationWindow is how far back a relaunch or reboot annotation looks to
// decide a launch is new.
const annotationWindow = "1m"

// Overview builds "Voice lane: one measurement per cause": whether the day
// was done, the verdicts, and one row per cause with the readings its rule reads.
//
//lint:ignore SA1019 the v1 dashboard schema is what Grafana 11 file provisioning loads (docs/decisions/0300-dashboards-as-go-with-the-foundation-sdk.md)
func Overview() *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(OverviewTitle). //lint:ignore SA1019 see above
								Uid(OverviewUID).
								Description("Every voice turn gets a verdict: which cause broke it and the reading behind it. One row per cause, each panel stating the rule that reads it.").
								Tags([]string{"percause", "voice"}).
								Refresh("30s").
								Time("now-24h", "now").
								Timezone(common.TimeZoneBrowser).
								Tooltip(dashboard.DashboardCursorSyncCrosshair).
								Readonly().
								WithVariable(installationVariable()).
								WithVariable(linkVariable()).
								WithVariable(launchVariable()).
								Annotation(relaunchAnnotation()).
								Annotation(rebootAnnotation()).
								Link(dashboard.NewDashboardLinkBuilder("Pipeline").Type(dashboard.DashboardLinkTypeDashboards).Tags([]string{"percause"}).AsDropdown(false).KeepTime(true)).
								WithRow(dashboard.NewRowBuilder("Done or not")).
								WithPanel(doneSlowestPost()).
								WithPanel(donePoolResets()).
								WithPanel(doneNotSent()).
								WithPanel(doneTurns()).
								WithRow(dashboard.NewRowBuilder("Verdicts")).
								WithPanel(turnsByCause()).
								WithPanel(causeShares()).
								WithPanel(implicatedCauses()).
								WithPanel(recentTurnVerdicts()).
								WithRow(dashboard.NewRowBuilder("Network")).
								WithPanel(networkUnderruns()).
								WithPanel(networkSilence()).
								WithPanel(networkCushion()).
								WithPanel(networkVerdicts()).
								WithRow(dashboard.NewRowBuilder("Synthesis")).
								WithPanel(synthesisFirstByte()).
								WithPanel(synthesisRate()).
								WithPanel(synthesisNeed()).
								WithPanel(synthesisBeside()).
								WithPanel(synthesisVerdicts()).
								WithRow(dashboard.NewRowBuilder("Pipeline and accumulated state")).
								WithPanel(stateLiveCounts()).
								WithPanel(stateVerdicts()).
								WithPanel(stateMemory()).
								WithPanel(stateAppUptime()).
								WithRow(dashboard.NewRowBuilder("Pool healing")).
								WithPanel(poolTally()).
								WithPanel(poolMovements()).
								WithPanel(poolRepliesInFlight()).
								WithPanel(poolVerdicts()).
								WithPanel(poolLinkStatus()).
								WithRow(dashboard.NewRowBuilder("Bluetooth")).
								WithPanel(bluetoothRouteChanges()).
								WithPanel(bluetoothShare()).
								WithPanel(bluetoothVerdicts()).
								WithRow(dashboard.NewRowBuilder("The wait")).
								WithPanel(waitUnitLead()).
								WithPanel(waitListenOpen()).
								WithPanel(waitVerdicts())
}

func allOption() dashboard.VariableOption {
	return dashboard.VariableOption{
		Text:  dashboard.StringOrArrayOfString{String: ptr("All")},
		Value: dashboard.StringOrArrayOfString{String: ptr("$__all")},
	}
}

// queryVariable is a multi-value variable over a label's values, "All" by
// default (matching series without the label too).
func queryVariable(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(promDS()).
		Query(dashboard.StringOrMap{String: ptr(query)}).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(".*").
		Current(allOption())
}

func installationVariable() cog.Builder[dashboard.VariableModel] {
	return queryVariable(varInstallation, "Installation",
		fmt.Sprintf("label_values(%s, %s)", promTurns, lInstallation))
}

func linkVariable() cog.Builder[dashboard.VariableModel] {
	return queryVariable(varLink, "Link",
		fmt.Sprintf("label_values(%s{%s=~\"$%s\"}, %s)", promTurns, lInstallation, varInstallation, lLink))
}

func launchVariable() cog.Builder[dashboard.VariableModel] {
	return queryVariable(varLaunch, "Launch",
		fmt.Sprintf("label_values(%s{%s=~\"$%s\"}, %s)", mTurns.prom(), lInstallation, varInstallation, lLaunch))
}

// installationScope is used by the annotations: a relaunch or a reboot is a
// fact about the installation whichever launch is selected.
var installationScope = []matcher{varRe(lInstallation, varInstallation)}

// relaunchExpr is present while a launch (service.instance.id) is new: it
// reports now and did not annotationWindow ago.
func relaunchExpr() string {
	s := sel(mTurns.prom(), installationScope)
	g := by(lInstallation, lLaunch)
	return fmt.Sprintf("group%s (%s) unless group%s (%s offset %s)", g, s, g, s, annotationWindow)
}

// rebootExpr is present when a new launch reports a device uptime below the
// highest the installation reported in the 6 hours before: the device
// uptime went down, so the phone rebooted between the two launches.
func rebootExpr() string {
	s := sel(mDeviceUptime.prom(), installationScope)
	return fmt.Sprintf("min%s (%s unless %s offset %s) < on (%s) max%s (max_over_time(%s[6h] offset %s))",
		by(lInstallation), s, s, annotationWindow, lInstallation, by(lInstallation), s, annotationWindow)
}

func relaunchAnnotation() cog.Builder[dashboard.AnnotationQuery] {
	return dashboard.NewAnnotationQueryBuilder().
		Name("Relaunch").
		Datasource(promDS()).
		Enable(true).
		IconColor("orange").
		Expr(relaunchExpr()).
		Step(annotationWindow).
		TitleFormat("Relaunch").
		TextFormat("new launch {{" + lLaunch + "}} (installation {{" + lInstallation + "}}): breakage that stops here was our process holding something").
		TagKeys(lInstallation)
}

func rebootAnnotation() cog.Builder[dashboard.AnnotationQuery] {
	return dashboard.NewAnnotationQueryBuilder().
		Name("Reboot").
		Datasource(promDS()).
		Enable(true).
		IconColor("red").
		Expr(rebootExpr()).
		Step(annotationWindow).
		TitleFormat("Reboot").
		TextFormat("device uptime went down (installation {{" + lInstallation + "}}): breakage that stops only here was the phone's audio state").
		TagKeys(lInstallation)
}
