package verdictexporter

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"

	"github.com/percause/percause/components/verdictexporter/internal/metadata"
	"github.com/percause/percause/internal/leaf/vfs"
)

// NewFactory returns the factory of the verdict exporter (type "verdicts").
func NewFactory() exporter.Factory { return NewFactoryOn(vfs.OS) }

// NewFactoryOn is NewFactory whose verdict file is kept on fs: the fault
// simulation's (internal/simulation).
func NewFactoryOn(fs vfs.FS) exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithTraces(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
			return createTraces(ctx, set, cfg, fs)
		}, metadata.TracesStability),
	)
}

// createTraces makes the exporter without exporterhelper: it has no queue
// and no retry of its own, so a write that fails is the pipeline's refusal
// and the verdict processor keeps the turn for another attempt
// (docs/decisions/0222-verdict-file-written-before-acceptance.md).
func createTraces(_ context.Context, set exporter.Settings, cfg component.Config, fs vfs.FS) (exporter.Traces, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("verdict exporter: config is a %T, want *verdictexporter.Config", cfg)
	}
	return newExporter(set, c, fs)
}
