package sharedstorage

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
)

// NewFactory returns the factory of the shared storage extension (type
// "shared_storage").
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, createExtension, metadata.ExtensionStability)
}

func createExtension(ctx context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("shared_storage: config is a %T, want *sharedstorage.Config", cfg)
	}
	return newSharedStorage(ctx, set, c)
}
