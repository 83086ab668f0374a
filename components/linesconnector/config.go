package linesconnector

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Defaults.
const (
	// DefaultWait is how long a line is held for the lines it joins: a turn
	// for the takes its underrunning units name, a take for its turn. The
	// phone's and the engine's files are tailed apart; this covers one
	// running late behind the other. A turn whose takes have not come by
	// then is emitted without them (the verdict processor then waits for
	// them itself), a take with a trace ID alone, a take without one is
	// dropped and counted.
	DefaultWait = 10 * time.Second
	// DefaultTakeWindow bounds how far apart in time (the lines' own times:
	// a timestamp in the prefix, the log record's, or when it was read) a
	// take without a trace ID and the turn naming it may be and still
	// join. A take is made during its turn, so minutes are ample, and take
	// IDs reused over a day do not join the wrong turn.
	DefaultTakeWindow = 5 * time.Minute
	// DefaultMaxPending bounds the lines held at once (turns and takes).
	DefaultMaxPending = 10000
	// DefaultEmittedCacheSize is how many emitted turns are remembered, so
	// a take arriving after its turn was emitted still joins its trace; and
	// how many turn lines' launches, so the next lines find theirs.
	DefaultEmittedCacheSize = 10000
)

// Configuration errors, one per way a Config can be wrong.
var (
	ErrWaitNotPositive         = errors.New("wait must be positive")
	ErrTakeWindowNotPositive   = errors.New("take_window must be positive")
	ErrMaxPendingNotPositive   = errors.New("max_pending must be positive")
	ErrEmittedCacheNotPositive = errors.New("emitted_cache_size must be positive")
)

// Config is the lines connector's configuration.
type Config struct {
	// Wait is how long a line is held for the lines it joins.
	Wait time.Duration `mapstructure:"wait"`
	// TakeWindow bounds the time between a take line without a trace ID
	// and the turn line naming its take.
	TakeWindow time.Duration `mapstructure:"take_window"`
	// MaxPending bounds the lines held at once; past it the oldest is let
	// go as if its wait were over.
	MaxPending int `mapstructure:"max_pending"`
	// EmittedCacheSize is how many emitted turns are remembered for takes
	// that arrive after them, and how many turn lines' launches for the
	// lines that follow.
	EmittedCacheSize int `mapstructure:"emitted_cache_size"`
	// Storage names a storage extension that keeps the held lines, so a
	// line acknowledged to its sender and held for the lines it joins
	// outlives a kill or a refused shutdown (nil: in memory only).
	Storage *component.ID `mapstructure:"storage"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Wait:             DefaultWait,
		TakeWindow:       DefaultTakeWindow,
		MaxPending:       DefaultMaxPending,
		EmittedCacheSize: DefaultEmittedCacheSize,
	}
}

// Validate checks the configuration; each problem has its own error.
func (c *Config) Validate() error {
	var errs error
	if c.Wait <= 0 {
		errs = errors.Join(errs, ErrWaitNotPositive)
	}
	if c.TakeWindow <= 0 {
		errs = errors.Join(errs, ErrTakeWindowNotPositive)
	}
	if c.MaxPending <= 0 {
		errs = errors.Join(errs, ErrMaxPendingNotPositive)
	}
	if c.EmittedCacheSize <= 0 {
		errs = errors.Join(errs, ErrEmittedCacheNotPositive)
	}
	return errs
}
