// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/internal/leaf/observed"
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
//
// The counts a request changes are observed (internal/leaf/observed): kept
// in atomics and read when the collector's metrics are.
type TelemetryBuilder struct {
	meter    metric.Meter
	observed *observed.Set
	// ProcessorVerdictPendingTurns is the number of traces held awaiting a
	// decision.
	ProcessorVerdictPendingTurns *observed.Counts
	// ProcessorVerdictVerdicts is the number of verdicts emitted, by primary
	// cause.
	ProcessorVerdictVerdicts *observed.Counts
	// ProcessorVerdictForced is the number of turns decided before everything
	// they name arrived, by reason.
	ProcessorVerdictForced *observed.Counts
	// ProcessorVerdictDropped is the number of readings dropped without a
	// verdict, by reason.
	ProcessorVerdictDropped *observed.Counts
	// ProcessorVerdictDecisionLatency is the time from a turn's voice.turn
	// span arriving to its verdict being accepted downstream, in seconds.
	ProcessorVerdictDecisionLatency metric.Float64Histogram
	// ProcessorVerdictRefused is the number of verdicts the next consumer
	// refused; each is kept and sent again.
	ProcessorVerdictRefused *observed.Counts
	// ProcessorVerdictRestored is the number of pending traces read back
	// from storage at start.
	ProcessorVerdictRestored metric.Int64Counter
	// ProcessorVerdictStorageErrors is the number of failed storage
	// operations, by operation.
	ProcessorVerdictStorageErrors metric.Int64Counter
	// ProcessorVerdictTakeovers is the number of partitions taken over,
	// their changelog read back before their next record.
	ProcessorVerdictTakeovers metric.Int64Counter
	// ProcessorVerdictLaunches is the number of launches whose recent turns
	// are kept for the cross-turn rules.
	ProcessorVerdictLaunches *observed.Counts
	// ProcessorVerdictLaunchesForgotten is the number of launches forgotten,
	// by reason (limit, idle).
	ProcessorVerdictLaunchesForgotten *observed.Counts
	// ProcessorVerdictHistoryDisagreements is the number of turns whose own
	// history differed from what was kept of their launch.
	ProcessorVerdictHistoryDisagreements *observed.Counts
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
func (builder *TelemetryBuilder) Shutdown() {
	if builder.observed != nil {
		_ = builder.observed.Shutdown()
	}
}

// NewTelemetryBuilder provides a struct with methods to update all internal
// telemetry for a component.
func NewTelemetryBuilder(settings component.TelemetrySettings, options ...TelemetryBuilderOption) (*TelemetryBuilder, error) {
	builder := TelemetryBuilder{}
	for _, op := range options {
		op.apply(&builder)
	}
	builder.meter = Meter(settings)
	builder.observed = observed.NewSet(builder.meter)
	var err, errs error
	builder.ProcessorVerdictPendingTurns, err = builder.observed.UpDownCounter("otelcol_processor_verdict_pending_turns", "Traces held by the verdict processor awaiting a decision. [alpha]", "{trace}")
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictVerdicts, err = builder.observed.Counter("otelcol_processor_verdict_verdicts", "Verdicts emitted, by primary cause. [alpha]", "{verdict}", AttributeCause)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictForced, err = builder.observed.Counter("otelcol_processor_verdict_forced", "Turns decided before everything they name had arrived, by reason. [alpha]", "{verdict}", AttributeReason)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictDropped, err = builder.observed.Counter("otelcol_processor_verdict_dropped", "Readings dropped without a verdict, by reason. [alpha]", "{item}", AttributeReason)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictDecisionLatency, err = builder.meter.Float64Histogram(
		"otelcol_processor_verdict_decision_latency",
		metric.WithDescription("Time from a turn's voice.turn span arriving to its verdict being accepted downstream. [alpha]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(DecisionLatencyBuckets...),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictRefused, err = builder.observed.Counter("otelcol_processor_verdict_refused", "Verdicts the next consumer refused; each is kept and sent again. [alpha]", "{verdict}", "")
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
	builder.ProcessorVerdictTakeovers, err = builder.meter.Int64Counter(
		"otelcol_processor_verdict_takeovers",
		metric.WithDescription("Partitions taken over, their changelog read back before their next record. [alpha]"),
		metric.WithUnit("{partition}"),
	)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictLaunches, err = builder.observed.UpDownCounter("otelcol_processor_verdict_launches", "Launches whose recent turns are kept for the cross-turn rules. [alpha]", "{launch}")
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictLaunchesForgotten, err = builder.observed.Counter("otelcol_processor_verdict_launches_forgotten", "Launches forgotten, by reason: limit (launches.max) or idle (launches.idle). [alpha]", "{launch}", AttributeReason)
	errs = errors.Join(errs, err)
	builder.ProcessorVerdictHistoryDisagreements, err = builder.observed.Counter("otelcol_processor_verdict_history_disagreements", "Turns whose own history differed from what was kept of their launch; the turn's own was read. [alpha]", "{turn}", "")
	errs = errors.Join(errs, err)
	return &builder, errs
}
