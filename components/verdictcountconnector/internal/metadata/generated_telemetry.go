// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
)

// TelemetryBuilder holds the component's own instruments.
type TelemetryBuilder struct {
	meter metric.Meter
	// ConnectorVerdictcountVerdicts is the number of verdict spans counted.
	ConnectorVerdictcountVerdicts metric.Int64Counter
	// ConnectorVerdictcountDuplicates is the number of verdict spans not
	// counted again: counted already.
	ConnectorVerdictcountDuplicates metric.Int64Counter
}

// NewTelemetryBuilder makes the component's instruments.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	b := TelemetryBuilder{meter: settings.MeterProvider.Meter(ScopeName)}
	var err, errs error
	b.ConnectorVerdictcountVerdicts, err = b.meter.Int64Counter(
		"otelcol_connector_verdictcount_verdicts",
		metric.WithDescription("Verdict spans counted. [alpha]"),
		metric.WithUnit("{verdict}"),
	)
	errs = errors.Join(errs, err)
	b.ConnectorVerdictcountDuplicates, err = b.meter.Int64Counter(
		"otelcol_connector_verdictcount_duplicates",
		metric.WithDescription("Verdict spans not counted again: they were counted already. [alpha]"),
		metric.WithUnit("{verdict}"),
	)
	errs = errors.Join(errs, err)
	return &b, errs
}
