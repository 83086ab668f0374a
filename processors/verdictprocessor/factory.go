package verdictprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

// NewFactory returns the factory of the verdict processor (type "verdict").
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("verdict processor: config is a %T, want *verdictprocessor.Config", cfg)
	}
	p, err := newVerdictProcessor(set, c, next)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown),
		// Verdict spans are appended to the batch that completed their turn.
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
	)
}
