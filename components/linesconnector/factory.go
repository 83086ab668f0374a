package linesconnector

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/percause/percause/components/linesconnector/internal/metadata"
)

// NewFactory returns the factory of the lines connector (type "lines"): logs
// in, the voice.turn / voice.unit / tts.take traces of their lines out.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		createDefaultConfig,
		connector.WithLogsToTraces(createLogsToTraces, metadata.LogsToTracesStability),
	)
}

func createLogsToTraces(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Traces) (connector.Logs, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("lines connector: config is a %T, want *linesconnector.Config", cfg)
	}
	return newConnector(set, c, next)
}
