package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/percause/percause/instr/semconv"
)

// The collector's own telemetry (its internal metrics endpoint, scraped as
// job "percause-collector"), in the names the v0.165 collector exports.
const (
	colAcceptedSpans     = "otelcol_receiver_accepted_spans_total"
	colRefusedSpans      = "otelcol_receiver_refused_spans_total"
	colAcceptedPoints    = "otelcol_receiver_accepted_metric_points_total"
	colRefusedPoints     = "otelcol_receiver_refused_metric_points_total"
	colSentSpans         = "otelcol_exporter_sent_spans_total"
	colFailedSpans       = "otelcol_exporter_send_failed_spans_total"
	colSentPoints        = "otelcol_exporter_sent_metric_points_total"
	colFailedPoints      = "otelcol_exporter_send_failed_metric_points_total"
	colQueueSize         = "otelcol_exporter_queue_size"
	colQueueCapacity     = "otelcol_exporter_queue_capacity"
	colProcessorIncoming = "otelcol_processor_incoming_items_total"
	colProcessorOutgoing = "otelcol_processor_outgoing_items_total"
	colMemoryRSS         = "otelcol_process_memory_rss_bytes"
	colCPUSeconds        = "otelcol_process_cpu_seconds_total"

	// The verdict processor's self-telemetry (processors/verdictprocessor,
	// internal/metadata): pending turns, verdicts by cause, forced decisions
	// and dropped readings by reason (evictions are the pending_limit drops).
	colVerdictPending = "otelcol_processor_verdict_pending_turns"
	colVerdictDecided = "otelcol_processor_verdict_verdicts_total"
	colVerdictForced  = "otelcol_processor_verdict_forced_total"
	colVerdictDropped = "otelcol_processor_verdict_dropped_total"
)

// Labels of the collector's own telemetry.
const (
	lReceiver  = "receiver"
	lExporter  = "exporter"
	lProcessor = "processor"
	lReason2   = "reason"
)

// Pipeline builds the dashboard of the collector itself: what it accepted
// and refused, what it sent and failed to send, its queues, and the verdict
// processor's pending turns, forced decisions, evictions and drops.
//
//lint:ignore SA1019 the v1 dashboard schema is what Grafana 11 file provisioning loads (docs/decisions/0300-dashboards-as-go-with-the-foundation-sdk.md)
func Pipeline() *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(PipelineTitle). //lint:ignore SA1019 see Overview
								Uid(PipelineUID).
								Description("The collector's own health: a verdict can only be as complete as the pipeline that made it.").
								Tags([]string{"percause", "collector"}).
								Refresh("30s").
								Time("now-6h", "now").
								Timezone(common.TimeZoneBrowser).
								Tooltip(dashboard.DashboardCursorSyncCrosshair).
								Readonly().
								Link(dashboard.NewDashboardLinkBuilder("Voice lane").Type(dashboard.DashboardLinkTypeDashboards).Tags([]string{"percause"}).AsDropdown(false).KeepTime(true)).
								WithRow(dashboard.NewRowBuilder("Receiving")).
								WithPanel(acceptedSpans()).
								WithPanel(refusedSpans()).
								WithPanel(acceptedPoints()).
								WithRow(dashboard.NewRowBuilder("Verdict processor")).
								WithPanel(verdictPending()).
								WithPanel(verdictDecisions()).
								WithPanel(verdictLosses()).
								WithPanel(processorThroughput()).
								WithRow(dashboard.NewRowBuilder("Exporting")).
								WithPanel(exporterSent()).
								WithPanel(exporterFailed()).
								WithPanel(exporterQueue()).
								WithRow(dashboard.NewRowBuilder("Senders' spools")).
								WithPanel(senderQueued()).
								WithPanel(senderDropped()).
								WithRow(dashboard.NewRowBuilder("Process")).
								WithPanel(collectorMemory()).
								WithPanel(collectorCPU())
}

func rateBy(series string, labels ...string) string {
	return fmt.Sprintf("sum%s (rate(%s[%s]))", by(labels...), series, rateInterval)
}

func acceptedSpans() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Spans accepted", "Spans per second each receiver accepted from phones and engines.", "reqps").
		Span(thirdWidth).
		WithTarget(promRange(rateBy(colAcceptedSpans, lReceiver), legend(lReceiver)))
}

func refusedSpans() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Spans refused",
		"Spans per second a receiver refused (the pipeline pushed back, e.g. the memory limiter): the sender keeps them in its spool and retries.",
		"reqps").
		Span(thirdWidth).
		WithTarget(promRange(rateBy(colRefusedSpans, lReceiver), legend(lReceiver)))
}

func acceptedPoints() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Metric points accepted and refused", "Metric points per second through the receivers.", "reqps").
		Span(thirdWidth).
		WithTarget(promRange(rateBy(colAcceptedPoints, lReceiver), "accepted {{"+lReceiver+"}}")).
		WithTarget(promRange(rateBy(colRefusedPoints, lReceiver), "refused {{"+lReceiver+"}}"))
}

func verdictPending() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Turns pending a verdict",
		"Traces the verdict processor holds until their turn can be decided (the voice.turn span and the takes its units name have arrived, or the bounded wait passed). "+
			"Bounded in number and age.",
		"short").
		Span(halfWidth).
		WithTarget(promRange("sum ("+colVerdictPending+")", "pending"))
}

func verdictDecisions() cog.Builder[dashboard.Panel] {
	return barsPanel("Verdicts made and forced",
		"Verdicts per interval by primary cause; forced: decided when the wait ran out before every take the units name arrived "+
			"(the verdict then names the missing take), by reason.",
		"short").
		Span(halfWidth).
		WithTarget(promRange(sumGrowth(colVerdictDecided, stepWindow, lCause), legend(lCause))).
		WithTarget(promRange(sumGrowth(colVerdictForced, stepWindow, lReason2), "forced: {{"+lReason2+"}}"))
}

func verdictLosses() cog.Builder[dashboard.Panel] {
	return barsPanel("Evictions and drops",
		"Readings dropped without a verdict, by reason: pending_limit (evicted by the limit on pending turns), no_turn (aged out without its voice.turn), "+
			"decided and duplicate_* (late or repeated deliveries of a turn already decided, at-least-once delivery), export_failed. Every loss is counted, none is silent.",
		"short").
		Span(halfWidth).
		WithTarget(promRange(sumGrowth(colVerdictDropped, stepWindow, lReason2), legend(lReason2)))
}

func processorThroughput() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Processor items in and out",
		"Items per second into and out of each processor; the verdict processor emits one extra span per turn.",
		"reqps").
		Span(halfWidth).
		WithTarget(promRange(rateBy(colProcessorIncoming, lProcessor), "in {{"+lProcessor+"}}")).
		WithTarget(promRange(rateBy(colProcessorOutgoing, lProcessor), "out {{"+lProcessor+"}}"))
}

func exporterSent() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Sent by exporter", "Spans and metric points per second each exporter delivered.", "reqps").
		Span(thirdWidth).
		WithTarget(promRange(rateBy(colSentSpans, lExporter), "spans {{"+lExporter+"}}")).
		WithTarget(promRange(rateBy(colSentPoints, lExporter), "points {{"+lExporter+"}}"))
}

func exporterFailed() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Send failures by exporter", "Spans and metric points per second an exporter failed to deliver.", "reqps").
		Span(thirdWidth).
		WithTarget(promRange(rateBy(colFailedSpans, lExporter), "spans {{"+lExporter+"}}")).
		WithTarget(promRange(rateBy(colFailedPoints, lExporter), "points {{"+lExporter+"}}"))
}

func exporterQueue() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Exporter queues",
		"Batches waiting in each exporter's sending queue against its capacity: a full queue drops.",
		"short").
		Span(thirdWidth).
		WithTarget(promRange(maxOf(colQueueSize, lExporter), "size {{"+lExporter+"}}")).
		WithTarget(promRange(maxOf(colQueueCapacity, lExporter), "capacity {{"+lExporter+"}}"))
}

func collectorMemory() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Collector memory", "Resident memory of the collector process.", "bytes").
		WithTarget(promRange("max ("+colMemoryRSS+")", "rss"))
}

func collectorCPU() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Collector CPU", "CPU seconds per second the collector used.", "percentunit").
		WithTarget(promRange(rateBy(colCPUSeconds), "cpu"))
}

// The senders' side (instr's export self-telemetry): batches waiting on a
// phone's or the engine's disk, and batches lost. A phone offline for a day
// shows here as a queue that drains when it is back.
var (
	mExporterQueued  = instrument{semconv.MetricExporterQueued, semconv.UnitBatches, kindGauge}
	mExporterDropped = instrument{semconv.MetricExporterDropped, semconv.UnitBatches, kindCounter}
	lExporterReason  = label(semconv.ExporterReason)
)

func senderQueued() cog.Builder[dashboard.Panel] {
	return timeseriesPanel("Batches waiting in senders' spools",
		"Export batches on a phone's or the engine's disk, not yet accepted by the collector, per service and launch: "+
			"recording never waits on the network, the spool does.",
		"short").
		WithTarget(promRange(maxOf(mExporterQueued.prom(), lService, lLaunch), "{{"+lService+"}} {{"+lLaunch+"}}"))
}

func senderDropped() cog.Builder[dashboard.Panel] {
	return barsPanel("Batches senders dropped",
		"Export batches a sender lost, by reason: full (the spool's bound dropped the oldest), torn (a corrupt file skipped), "+
			"rejected (the collector refused it permanently).",
		"short").
		WithTarget(promRange(sumGrowth(mExporterDropped.prom(), stepWindow, lService, lExporterReason), "{{"+lService+"}} {{"+lExporterReason+"}}"))
}
