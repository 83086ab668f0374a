// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
)

// Meter returns the component's meter.
func Meter(settings component.TelemetrySettings) metric.Meter {
	return settings.MeterProvider.Meter(ScopeName)
}

// Attribute keys of the component's own telemetry.
const (
	// AttributeCause is the verdict's primary cause (the same key the verdict
	// span carries).
	AttributeCause = "percause.cause"
	// AttributeReason says why a turn was forced to a decision or why
	// readings were dropped.
	AttributeReason = "reason"
	// AttributeOperation names a storage operation: restore, commit.
	AttributeOperation = "operation"
)

// TelemetryBuilder provides an interface for components to report telemetry
// as defined in metadata.yaml.
type TelemetryBuilder struct {
	meter metric.Meter
	// ProcessorVerdictPendingTurns is the number of traces held awaiting a
	// decision.
	ProcessorVerdictPendingTurns metric.Int64UpDownCounter
	// ProcessorVerdictVerdicts is the number of verdicts emitted, by primary
	// cause.
	ProcessorVerdictVerdicts metric.Int64Counter
	// ProcessorVerdictForced is the number of turns decided before everything
	// they name arrived, by reason.
	ProcessorVerdictForced metric.Int64Counter
	// ProcessorVerdictDropped is the number of readings dropped without a
	// verdict, by reason.
	ProcessorVerdictDropped metric.Int64Counter
	// ProcessorVerdictDecisionLatency is the time from a turn's voice.turn
	// span arriving to its verdict being accepted downstream, in seconds.
	ProcessorVerdictDecisionLatency metric.Float64Histogram
	// ProcessorVerdictRefused is the number of verdicts the next consumer
	// refused; each is kept and sent again.
	ProcessorVerdictRefused metric.Int64Counter
	// ProcessorVerdictRestored is the number of pending traces read back
	// from storage at start.
	ProcessorVerdictRestored metric.Int64Counter
	// ProcessorVerdictStorageErrors is the number of failed storage
	// operations, by operation.
	ProcessorVerdictStorageErrors metric.Int64Counter
	// ProcessorVerdictLaunches is the number of launches whose recent turns
	// are kept for the cross-turn rules.
	ProcessorVerdictLaunches metric.Int64UpDownCounter
	// ProcessorVerdictLaunchesForgotten is the number of launches forgotten,
	// by reason (limit, idle).
	ProcessorVerdictLaunchesForgotten metric.Int64Counter
	// ProcessorVerdictHistoryDisagreements is the number of turns whose own
	// history differed from what was kept of their launch.
	ProcessorVerdictHistoryDisagreements metric.Int64Counter
}

// DecisionLatencyBuckets are the decision-latency histogram's bucket bounds,
// in seconds: from a turn decided in the request that completed it to one
// decided at max_age.
var DecisionLatencyBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120}

// TelemetryBuilderOption applies changes to default builder.
type TelemetryBuilderOption interface {
	apply(*TelemetryBuilder)
}

// Shutdown unregisters all registered callbacks for async instruments.
func (builder *TelemetryBuilder) Shutdown() {}

// NewTelemetryBuilder provides a struct with methods to update all internal
// telemetry for a component.
func NewTelemetryBuilder(settings component.TelemetrySettings, options ...TelemetryBuilderOption) (*TelemetryBuilder, error) {
	builder := TelemetryBuilder{}
	for _, op := range options {
		op.apply(&builder)
	}
	builder.meter = Meter(settings)
	var err, errs error
	builder.ProcessorVerdictPendingTurns, err = builder.meter.Int64UpDownCounter(
		"otelcol_processor_verdict_pending_turns",
		metric.WithDescription("Traces held by the verdict processor awaiting a decision. [alpha]"),
		metric.WithUnit("{trace}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictVerdicts, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_verdicts",
		metric.WithDescription("Verdicts emitted, by primary cause. [alpha]"),
		metric.WithUnit("{verdict}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictForced, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_forced",
		metric.WithDescription("Turns decided before everything they name had arrived, by reason. [alpha]"),
		metric.WithUnit("{verdict}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictDropped, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_dropped",
		metric.WithDescription("Readings dropped without a verdict, by reason. [alpha]"),
		metric.WithUnit("{item}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictDecisionLatency, err = builder.meter.Float64Histogram(
		"otelcol_processor_verdict_decision_latency",
		metric.WithDescription("Time from a turn's voice.turn span arriving to its verdict being accepted downstream. [alpha]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(DecisionLatencyBuckets...),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictRefused, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_refused",
		metric.WithDescription("Verdicts the next consumer refused; each is kept and sent again. [alpha]"),
		metric.WithUnit("{verdict}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictRestored, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_restored",
		metric.WithDescription("Pending traces read back from storage at start. [alpha]"),
		metric.WithUnit("{trace}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictStorageErrors, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_storage_errors",
		metric.WithDescription("Failed storage operations, by operation. [alpha]"),
		metric.WithUnit("{error}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictLaunches, err = builder.meter.Int64UpDownCounter(
		"otelcol_processor_verdict_launches",
		metric.WithDescription("Launches whose recent turns are kept for the cross-turn rules. [alpha]"),
		metric.WithUnit("{launch}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictLaunchesForgotten, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_launches_forgotten",
		metric.WithDescription("Launches forgotten, by reason: limit (launches.max) or idle (launches.idle). [alpha]"),
		metric.WithUnit("{launch}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictHistoryDisagreements, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_history_disagreements",
		metric.WithDescription("Turns whose own history differed from what was kept of their launch; the turn's own was read. [alpha]"),
		metric.WithUnit("{turn}"),
	)
	errs = errors.Join(errs, err)
	return &builder, errs
}
