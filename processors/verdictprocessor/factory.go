package verdictprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

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
	// The processor is its own consumer rather than a processorhelper
	// function: it must see the next consumer's answer to settle the turns a
	// batch decided (docs/decisions/0220-at-least-once-through-the-processor.md).
	return newVerdictProcessor(set, c, next)
}
