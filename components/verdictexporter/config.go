package verdictexporter

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// Defaults.
const (
	// DefaultMaxMegabytes is the size at which the file is rotated.
	DefaultMaxMegabytes = 100
	// DefaultMaxBackups is how many rotated files are kept.
	DefaultMaxBackups = 3
	// DefaultRecent is how many recently written verdict span IDs are
	// remembered, so a verdict sent again is not written twice.
	DefaultRecent = 10000
	// tailRead is how much of the file's end is read at start to remember
	// the verdicts written last: a verdict is sent again after a crash only
	// if it was written in the moment before the crash.
	tailRead = 4 << 20
)

// Configuration errors.
var (
	ErrNoPath            = errors.New("path must name the verdict file")
	ErrRotationNegative  = errors.New("rotation.max_megabytes and rotation.max_backups must not be negative")
	ErrRecentNotPositive = errors.New("recent must be positive")
)

// Config is the verdict exporter's configuration.
type Config struct {
	// Path is the verdict file: OTLP/JSON lines, one per batch of verdicts.
	Path string `mapstructure:"path"`
	// Rotation bounds the file's size.
	Rotation RotationConfig `mapstructure:"rotation"`
	// Recent is how many recently written verdict span IDs are remembered
	// so a verdict delivered again is written once.
	Recent int `mapstructure:"recent"`
}

// RotationConfig bounds the verdict file.
type RotationConfig struct {
	// MaxMegabytes: once the file reaches this size it is renamed to
	// PATH.1 (PATH.1 to PATH.2, …) and a new one is started; 0 never rotates.
	MaxMegabytes int `mapstructure:"max_megabytes"`
	// MaxBackups is how many rotated files are kept; older ones are removed.
	MaxBackups int `mapstructure:"max_backups"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Rotation: RotationConfig{MaxMegabytes: DefaultMaxMegabytes, MaxBackups: DefaultMaxBackups},
		Recent:   DefaultRecent,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs error
	if c.Path == "" {
		errs = errors.Join(errs, ErrNoPath)
	}
	if c.Rotation.MaxMegabytes < 0 || c.Rotation.MaxBackups < 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: max_megabytes %d, max_backups %d", ErrRotationNegative, c.Rotation.MaxMegabytes, c.Rotation.MaxBackups))
	}
	if c.Recent <= 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: recent is %d", ErrRecentNotPositive, c.Recent))
	}
	return errs
}
