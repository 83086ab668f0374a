package sharedstorage

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
	"github.com/percause/percause/internal/leaf/vfs"
)

// NewFactory returns the factory of the shared storage extension (type
// "shared_storage").
func NewFactory() extension.Factory { return NewFactoryOn(vfs.OS) }

// NewFactoryOn is NewFactory whose log engine keeps its files on fs: the
// fault simulation's (internal/simulation).
func NewFactoryOn(fs vfs.FS) extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig,
		func(ctx context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
			c, ok := cfg.(*Config)
			if !ok {
				return nil, fmt.Errorf("shared_storage: config is a %T, want *sharedstorage.Config", cfg)
			}
			s, err := newSharedStorage(ctx, set, c)
			if err != nil {
				return nil, err
			}
			s.fs = fs
			return s, nil
		}, metadata.ExtensionStability)
}
