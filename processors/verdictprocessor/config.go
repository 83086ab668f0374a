package verdictprocessor

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/percause/percause/instr/semconv"
)

// Defaults. The rule thresholds are the ones ARCHITECTURE.md fixes; the state
// limits are sized for one household's phones with room to spare.
const (
	// DefaultWait is how long a turn whose voice.turn span has arrived waits
	// for the units and takes it names before it is decided anyway. It bounds
	// the freshness of a verdict whose take never comes (p95 target: 5 s).
	DefaultWait = 5 * time.Second
	// DefaultMaxAge bounds how long any trace is held. Engine takes usually
	// arrive before the phone's turn (the phone defers its export while the
	// voice lane is busy), so takes wait for their turn this long.
	DefaultMaxAge = 2 * time.Minute
	// DefaultMaxPending bounds the number of traces held at once.
	DefaultMaxPending = 10000
	// DefaultDecidedCacheSize is how many recently decided trace IDs are
	// remembered so a duplicate delivery of a turn yields no second verdict.
	DefaultDecidedCacheSize = 100000
	// DefaultLateLead: a unit queued more than this after the previous unit
	// had ended (lead below its negative) means her words were late.
	DefaultLateLead = 100 * time.Millisecond
	// DefaultMicOpenLimit: a microphone that took longer than this to open
	// is a wait.
	DefaultMicOpenLimit = 1500 * time.Millisecond
	// DefaultRisingTurns: a live count that rose on each of this many turns
	// in a row is the process holding something.
	DefaultRisingTurns = 3
)

// Configuration errors, one per way a Config can be wrong.
var (
	ErrWaitNotPositive         = errors.New("wait must be positive")
	ErrMaxAgeBelowWait         = errors.New("max_age must be at least wait")
	ErrMaxPendingNotPositive   = errors.New("max_pending must be positive")
	ErrDecidedCacheNotPositive = errors.New("decided_cache_size must be positive")
	ErrLateLeadNegative        = errors.New("rules.late_lead must not be negative (it is the magnitude of a late lead)")
	ErrMicOpenLimitNotPositive = errors.New("rules.mic_open_limit must be positive")
	ErrRisingTurnsRange        = fmt.Errorf("rules.rising_turns must be between 1 and %d (the history a turn carries)", semconv.LiveHistory)
)

// Config is the verdict processor's configuration.
type Config struct {
	// Wait is how long a turn waits, after its voice.turn span arrived, for
	// the units and takes it names before it is decided (and marked forced).
	Wait time.Duration `mapstructure:"wait"`
	// MaxAge bounds how long any trace is held, with or without its turn.
	MaxAge time.Duration `mapstructure:"max_age"`
	// MaxPending bounds how many traces are held at once; past it the oldest
	// is decided (forced) or, without its turn, dropped.
	MaxPending int `mapstructure:"max_pending"`
	// DecidedCacheSize is how many decided trace IDs are remembered for
	// de-duplication.
	DecidedCacheSize int `mapstructure:"decided_cache_size"`
	// Rules holds the rules' thresholds.
	Rules RulesConfig `mapstructure:"rules"`
}

// RulesConfig holds the thresholds of the rules of ARCHITECTURE.md.
type RulesConfig struct {
	// LateLead: a unit lead below -LateLead is a wait (her words were late).
	LateLead time.Duration `mapstructure:"late_lead"`
	// MicOpenLimit: a microphone open longer than this is a wait.
	MicOpenLimit time.Duration `mapstructure:"mic_open_limit"`
	// RisingTurns: a live count rising on each of this many last turns is
	// state held by the process.
	RisingTurns int `mapstructure:"rising_turns"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Wait:             DefaultWait,
		MaxAge:           DefaultMaxAge,
		MaxPending:       DefaultMaxPending,
		DecidedCacheSize: DefaultDecidedCacheSize,
		Rules: RulesConfig{
			LateLead:     DefaultLateLead,
			MicOpenLimit: DefaultMicOpenLimit,
			RisingTurns:  DefaultRisingTurns,
		},
	}
}

// Validate checks the configuration; the collector calls it before start.
// Each error wraps one of the Err… values above (errors.Is) and says what
// was configured.
func (c *Config) Validate() error {
	var errs error
	bad := func(err error, format string, args ...any) {
		errs = errors.Join(errs, fmt.Errorf("%w: "+format, append([]any{err}, args...)...))
	}
	if c.Wait <= 0 {
		bad(ErrWaitNotPositive, "wait is %s", c.Wait)
	}
	if c.MaxAge < c.Wait {
		bad(ErrMaxAgeBelowWait, "max_age %s < wait %s", c.MaxAge, c.Wait)
	}
	if c.MaxPending <= 0 {
		bad(ErrMaxPendingNotPositive, "max_pending is %d", c.MaxPending)
	}
	if c.DecidedCacheSize <= 0 {
		bad(ErrDecidedCacheNotPositive, "decided_cache_size is %d", c.DecidedCacheSize)
	}
	if c.Rules.LateLead < 0 {
		bad(ErrLateLeadNegative, "late_lead is %s", c.Rules.LateLead)
	}
	if c.Rules.MicOpenLimit <= 0 {
		bad(ErrMicOpenLimitNotPositive, "mic_open_limit is %s", c.Rules.MicOpenLimit)
	}
	if c.Rules.RisingTurns < 1 || c.Rules.RisingTurns > semconv.LiveHistory {
		bad(ErrRisingTurnsRange, "rising_turns is %d", c.Rules.RisingTurns)
	}
	return errs
}
