// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
)

// TelemetryBuilder holds the component's own instruments, as defined in
// metadata.yaml.
type TelemetryBuilder struct {
	meter metric.Meter
	// ExporterVerdictsWritten is the number of verdict spans appended to the
	// file.
	ExporterVerdictsWritten metric.Int64Counter
	// ExporterVerdictsDuplicate is the number of verdict spans not written
	// because the file already holds them.
	ExporterVerdictsDuplicate metric.Int64Counter
	// ExporterVerdictsWriteErrors is the number of failed writes (the batch
	// is refused, so the pipeline sends it again).
	ExporterVerdictsWriteErrors metric.Int64Counter
}

// NewTelemetryBuilder makes the component's instruments.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	b := TelemetryBuilder{meter: settings.MeterProvider.Meter(ScopeName)}
	var err, errs error
	b.ExporterVerdictsWritten, err = b.meter.Int64Counter(
		"otelcol_exporter_verdicts_written",
		metric.WithDescription("Verdict spans appended to the verdict file. [alpha]"),
		metric.WithUnit("{verdict}"),
	)
	errs = errors.Join(errs, err)
	b.ExporterVerdictsDuplicate, err = b.meter.Int64Counter(
		"otelcol_exporter_verdicts_duplicate",
		metric.WithDescription("Verdict spans not written again: the file holds them already. [alpha]"),
		metric.WithUnit("{verdict}"),
	)
	errs = errors.Join(errs, err)
	b.ExporterVerdictsWriteErrors, err = b.meter.Int64Counter(
		"otelcol_exporter_verdicts_write_errors",
		metric.WithDescription("Failed writes of the verdict file; the batch is refused and sent again. [alpha]"),
		metric.WithUnit("{error}"),
	)
	errs = errors.Join(errs, err)
	return &b, errs
}
