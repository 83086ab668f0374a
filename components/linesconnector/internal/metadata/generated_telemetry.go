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
	// AttributeOutcome is what a line read was: turn, take, malformed or other.
	AttributeOutcome = "outcome"
	// AttributeReason says why a line was refused or why readings were dropped.
	AttributeReason = "reason"
)

// TelemetryBuilder provides an interface for components to report telemetry
// as defined in metadata.yaml.
type TelemetryBuilder struct {
	meter metric.Meter
	// ConnectorLinesLines is the number of lines read, by outcome.
	ConnectorLinesLines metric.Int64Counter
	// ConnectorLinesMalformed is the number of tagged lines refused, by reason.
	ConnectorLinesMalformed metric.Int64Counter
	// ConnectorLinesUnknownFields is the number of fields ignored because
	// this version does not know them.
	ConnectorLinesUnknownFields metric.Int64Counter
	// ConnectorLinesTurns is the number of voice turns emitted as traces.
	ConnectorLinesTurns metric.Int64Counter
	// ConnectorLinesTakes is the number of engine takes emitted as spans.
	ConnectorLinesTakes metric.Int64Counter
	// ConnectorLinesPending is the number of lines held awaiting their partner.
	ConnectorLinesPending metric.Int64UpDownCounter
	// ConnectorLinesDropped is the number of lines read but not emitted, by reason.
	ConnectorLinesDropped metric.Int64Counter
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
	counter := func(name, desc, unit string) metric.Int64Counter {
		c, e := builder.meter.Int64Counter(name, metric.WithDescription(desc+" [alpha]"), metric.WithUnit(unit))
		errs = errors.Join(errs, e)
		return c
	}
	builder.ConnectorLinesLines = counter("otelcol_connector_lines_lines", "Lines read, by outcome (turn, take, malformed, other).", "{line}")
	builder.ConnectorLinesMalformed = counter("otelcol_connector_lines_malformed", "Tagged lines refused, by reason.", "{line}")
	builder.ConnectorLinesUnknownFields = counter("otelcol_connector_lines_unknown_fields", "Fields ignored because this version does not know them.", "{field}")
	builder.ConnectorLinesTurns = counter("otelcol_connector_lines_turns", "Voice turns emitted as traces.", "{turn}")
	builder.ConnectorLinesTakes = counter("otelcol_connector_lines_takes", "Engine takes emitted as spans.", "{take}")
	builder.ConnectorLinesDropped = counter("otelcol_connector_lines_dropped", "Lines read but not emitted, by reason.", "{line}")
	builder.ConnectorLinesPending, err = builder.meter.Int64UpDownCounter("otelcol_connector_lines_pending",
		metric.WithDescription("Lines held awaiting the lines they join. [alpha]"), metric.WithUnit("{line}"))
	errs = errors.Join(errs, err)
	return &builder, errs
}
