package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Panel sizes on Grafana's 24-column grid.
const (
	fullWidth    = 24
	halfWidth    = 12
	thirdWidth   = 8
	quarterWidth = 6
	panelHeight  = 8
	statHeight   = 5
)

// Colours of the cause series, the same on every panel.
var causeColors = map[string]string{
	"network":   "blue",
	"synthesis": "purple",
	"bluetooth": "light-blue",
	"wait":      "orange",
	"pool":      "red",
	"state":     "dark-red",
	"none":      "green",
	"unknown":   "text",
}

// timeseriesPanel is the common base of the graphs.
func timeseriesPanel(title, description, unit string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(promDS()).
		Unit(unit).
		Height(panelHeight).
		Span(halfWidth).
		LineWidth(1).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeAuto).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true))
}

// barsPanel draws per-interval counts as bars (turns, underruns, heals).
func barsPanel(title, description, unit string) *timeseries.PanelBuilder {
	return timeseriesPanel(title, description, unit).
		DrawStyle(common.GraphDrawStyleBars).
		FillOpacity(80).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))
}

// statPanel is the common base of the single numbers.
func statPanel(title, description, unit string) *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(promDS()).
		Unit(unit).
		Height(statHeight).
		Span(quarterWidth).
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
}

// greenUntil colours a value green below limit and red from it on.
func greenUntil(limit float64) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps([]dashboard.Threshold{
			{Value: nil, Color: "green"},
			{Value: ptr(limit), Color: "red"},
		})
}

// redBelow colours a value red below limit and green from it on.
func redBelow(limit float64) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps([]dashboard.Threshold{
			{Value: nil, Color: "red"},
			{Value: ptr(limit), Color: "green"},
		})
}

// causeColorOverrides pins each cause's series to its colour.
func causeColorOverrides(p *timeseries.PanelBuilder) *timeseries.PanelBuilder {
	for _, c := range causeOrder {
		p = p.OverrideByName(c, []dashboard.DynamicConfigValue{
			{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": causeColors[c]}},
		})
	}
	return p
}

// withThresholdLine draws a timeseries panel's thresholds as a dashed line,
// so the rule's limit is on the graph.
func withThresholdLine(p *timeseries.PanelBuilder, t *dashboard.ThresholdsConfigBuilder) *timeseries.PanelBuilder {
	return p.Thresholds(t).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashed))
}
