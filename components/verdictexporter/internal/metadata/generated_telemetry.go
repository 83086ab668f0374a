// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/internal/leaf/observed"
)

// TelemetryBuilder holds the component's own instruments, as defined in
// metadata.yaml.
//
// The counts a request changes (the written, duplicate, kept and evicted
// ones) are observed (internal/leaf/observed): kept in atomics and read
// when the collector's metrics are.
type TelemetryBuilder struct {
	meter    metric.Meter
	observed *observed.Set
	// ExporterVerdictsWritten is the number of verdict spans appended to the
	// file.
	ExporterVerdictsWritten *observed.Counts
	// ExporterVerdictsLinkChangesWritten is the number of link status
	// spans (pippa.link.status) appended to the file.
	ExporterVerdictsLinkChangesWritten *observed.Counts
	// ExporterVerdictsDuplicate is the number of verdict and link status
	// spans not written because the file already holds them.
	ExporterVerdictsDuplicate *observed.Counts
	// ExporterVerdictsWriteErrors is the number of failed writes (the batch
	// is refused, so the pipeline sends it again).
	ExporterVerdictsWriteErrors metric.Int64Counter
	// ExporterVerdictsPageKept is the number of turns and link status
	// changes the page's store took in.
	ExporterVerdictsPageKept *observed.Counts
	// ExporterVerdictsPageEvicted is the number the store let go (past
	// keep.age, keep.turns or keep.link_changes).
	ExporterVerdictsPageEvicted *observed.Counts
	// ExporterVerdictsFileBrokenLines is the number of lines of the
	// verdict file the start could not read back (skipped).
	ExporterVerdictsFileBrokenLines metric.Int64Counter
	// ExporterVerdictsPageServed is the number of pages rendered.
	ExporterVerdictsPageServed metric.Int64Counter
	// ExporterVerdictsPageRefused is the number of page requests refused
	// by the page (a bad query, an unknown path or method).
	ExporterVerdictsPageRefused metric.Int64Counter
	// ExporterVerdictsPageUnauthorized is the number of page requests the
	// authenticator refused (401: no token, or a wrong one).
	ExporterVerdictsPageUnauthorized metric.Int64Counter
}

// NewTelemetryBuilder makes the component's instruments.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	b := TelemetryBuilder{meter: settings.MeterProvider.Meter(ScopeName)}
	b.observed = observed.NewSet(b.meter)
	var err, errs error
	for _, c := range []struct {
		to         **observed.Counts
		name, desc string
		unit       string
	}{
		{&b.ExporterVerdictsWritten, "otelcol_exporter_verdicts_written", "Verdict spans appended to the verdict file. [alpha]", "{verdict}"},
		{&b.ExporterVerdictsDuplicate, "otelcol_exporter_verdicts_duplicate", "Verdict and link status spans not written again: the file holds them already. [alpha]", "{span}"},
		{&b.ExporterVerdictsLinkChangesWritten, "otelcol_exporter_verdicts_link_changes_written", "Link status spans (pippa.link.status) appended to the verdict file. [alpha]", "{span}"},
		{&b.ExporterVerdictsPageKept, "otelcol_exporter_verdicts_page_kept", "Turns and link status changes the page's store took in. [alpha]", "{span}"},
		{&b.ExporterVerdictsPageEvicted, "otelcol_exporter_verdicts_page_evicted", "Turns and link status changes the page's store let go, past its bounds. [alpha]", "{span}"},
	} {
		*c.to, err = b.observed.Counter(c.name, c.desc, c.unit, "")
		errs = errors.Join(errs, err)
	}
	b.ExporterVerdictsWriteErrors, err = b.meter.Int64Counter(
		"otelcol_exporter_verdicts_write_errors",
		metric.WithDescription("Failed writes of the verdict file; the batch is refused and sent again. [alpha]"),
		metric.WithUnit("{error}"),
	)
	errs = errors.Join(errs, err)
	for _, c := range []struct {
		to         *metric.Int64Counter
		name, desc string
		unit       string
	}{
		{&b.ExporterVerdictsFileBrokenLines, "otelcol_exporter_verdicts_file_broken_lines", "Lines of the verdict file the start could not read back; skipped. [alpha]", "{line}"},
		{&b.ExporterVerdictsPageServed, "otelcol_exporter_verdicts_page_served", "Verdict pages rendered. [alpha]", "{page}"},
		{&b.ExporterVerdictsPageRefused, "otelcol_exporter_verdicts_page_refused", "Page requests refused by the page (bad query, unknown path or method). [alpha]", "{request}"},
		{&b.ExporterVerdictsPageUnauthorized, "otelcol_exporter_verdicts_page_unauthorized", "Page requests the authenticator refused (401: no token, or a wrong one). [alpha]", "{request}"},
	} {
		*c.to, err = b.meter.Int64Counter(c.name, metric.WithDescription(c.desc), metric.WithUnit(c.unit))
		errs = errors.Join(errs, err)
	}
	return &b, errs
}

// Shutdown unregisters the observed instruments.
func (b *TelemetryBuilder) Shutdown() {
	_ = b.observed.Shutdown()
}
