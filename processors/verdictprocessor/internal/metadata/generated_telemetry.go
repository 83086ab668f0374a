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
}

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
	return &builder, errs
}
