// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/internal/leaf/observed"
)

// TelemetryBuilder holds the component's own instruments. Both counts
// change on a request's way: they are observed (internal/leaf/observed),
// kept in atomics and read when the collector's metrics are.
type TelemetryBuilder struct {
	meter    metric.Meter
	observed *observed.Set
	// ConnectorVerdictcountVerdicts is the number of verdict spans counted.
	ConnectorVerdictcountVerdicts *observed.Counts
	// ConnectorVerdictcountDuplicates is the number of verdict spans not
	// counted again: counted already.
	ConnectorVerdictcountDuplicates *observed.Counts
}

// NewTelemetryBuilder makes the component's instruments.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	b := TelemetryBuilder{meter: settings.MeterProvider.Meter(ScopeName)}
	b.observed = observed.NewSet(b.meter)
	var err, errs error
	b.ConnectorVerdictcountVerdicts, err = b.observed.Counter(
		"otelcol_connector_verdictcount_verdicts", "Verdict spans counted. [alpha]", "{verdict}", "")
	errs = errors.Join(errs, err)
	b.ConnectorVerdictcountDuplicates, err = b.observed.Counter(
		"otelcol_connector_verdictcount_duplicates", "Verdict spans not counted again: they were counted already. [alpha]", "{verdict}", "")
	errs = errors.Join(errs, err)
	return &b, errs
}

// Shutdown unregisters the observed instruments.
func (b *TelemetryBuilder) Shutdown() {
	_ = b.observed.Shutdown()
}
