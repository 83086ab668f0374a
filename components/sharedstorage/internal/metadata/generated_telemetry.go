// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/percause/percause/internal/leaf/observed"
)

// AttributeTrigger is the attribute naming what made a transaction.
const AttributeTrigger = "trigger"

// Values of AttributeTrigger.
const (
	// TriggerBatch: a client's Batch, Get, Set or Delete.
	TriggerBatch = "batch"
	// TriggerStageFlush: staged operations no client's batch carried
	// within stage_flush.
	TriggerStageFlush = "stage_flush"
	// TriggerWalk: a client's Walk (and the commit of what was staged
	// before it).
	TriggerWalk = "walk"
	// TriggerClose: a client's Close or the extension's shutdown committing
	// what is staged.
	TriggerClose = "close"
	// TriggerImport: a client's first use, reading in what file_storage
	// kept for it.
	TriggerImport = "import"
)

// TelemetryBuilder holds the component's own instruments, as defined in
// metadata.yaml.
//
// The commits and the staged operations change on a request's way: they
// are observed (internal/leaf/observed), kept in atomics and read when the
// collector's metrics are.
type TelemetryBuilder struct {
	meter    metric.Meter
	observed *observed.Set
	// ExtensionSharedStorageCommits is the number of transactions of the
	// shared database, by trigger.
	ExtensionSharedStorageCommits *observed.Counts
	// ExtensionSharedStorageCommitErrors is the number of those that
	// failed, by trigger.
	ExtensionSharedStorageCommitErrors metric.Int64Counter
	// ExtensionSharedStorageStaged is the number of staged operations, by
	// the trigger of the transaction that carried them.
	ExtensionSharedStorageStaged *observed.Counts
	// ExtensionSharedStorageImported is the number of keys read in from
	// file_storage's databases.
	ExtensionSharedStorageImported metric.Int64Counter
}

// NewTelemetryBuilder makes the component's instruments.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	b := TelemetryBuilder{meter: settings.MeterProvider.Meter(ScopeName)}
	b.observed = observed.NewSet(b.meter)
	var err, errs error
	b.ExtensionSharedStorageCommits, err = b.observed.Counter("otelcol_extension_shared_storage_commits", "Transactions of the shared database, by what made them. [alpha]", "{transaction}", AttributeTrigger)
	errs = errors.Join(errs, err)
	b.ExtensionSharedStorageStaged, err = b.observed.Counter("otelcol_extension_shared_storage_staged", "Staged operations, by the transaction that carried them (a client's batch, or the extension's own after stage_flush). [alpha]", "{operation}", AttributeTrigger)
	errs = errors.Join(errs, err)
	for _, c := range []struct {
		to         *metric.Int64Counter
		name, desc string
		unit       string
	}{
		{&b.ExtensionSharedStorageCommitErrors, "otelcol_extension_shared_storage_commit_errors", "Transactions of the shared database that failed (every operation in them, staged ones included, is not stored). [alpha]", "{transaction}"},
		{&b.ExtensionSharedStorageImported, "otelcol_extension_shared_storage_imported", "Keys read in from the database file_storage kept for a client, once, at the client's first use. [alpha]", "{key}"},
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
