package verdictprocessor

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/processors/verdictprocessor/internal/changelog"
	"github.com/percause/percause/verdict"
)

// Defaults. The rule thresholds are the ones docs/domain.md gives, declared
// once in instr/semconv (the dashboards draw the same numbers); the state
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
	DefaultLateLead = semconv.DefaultLateLead
	// DefaultMicOpenLimit: a microphone that took longer than this to open
	// is a wait.
	DefaultMicOpenLimit = semconv.DefaultMicOpenLimit
	// DefaultRisingTurns: a live count that rose on each of this many turns
	// in a row is the process holding something.
	DefaultRisingTurns = semconv.DefaultRisingTurns
	// DefaultDecisionWait is how long the trace of a turn that does not say
	// how many units it read (no pippa.turn.units, as a client in another
	// language may send) must stay quiet before it is decided: its units
	// may still be on their way, one request each, in any order.
	DefaultDecisionWait = time.Second
	// DefaultHistoryWait is how long a turn whose launch's previous turn
	// has not arrived is held for it, once everything of its own trace has
	// come. A phone's spool retries a refused batch after 0.25 s, doubling
	// each time (exporters/spool: DefaultMinBackoff, DefaultMaxBackoff), so
	// a batch refused five times in a row arrives 0.25+0.5+1+2+4 = 7.75 s
	// after its first try: a turn sent behind the next one (a retry, a
	// spool draining after a tunnel) arrives within it.
	DefaultHistoryWait = 7750 * time.Millisecond
	// DefaultEmit passes every span on with the verdicts added.
	DefaultEmit = EmitAll
	// DefaultCounterInstallations is how many installations the counted
	// events name, the most recently seen (the rest count as "other"):
	// a household's phones many times over. Each name is a dozen series
	// the Prometheus exporter holds for a day, scanned by every garbage
	// collection: from 1,000 installations a budget of 1,000 made the
	// default spend more CPU (docs/decisions/0248; docs/performance.md).
	DefaultCounterInstallations = 100
	// DefaultLaunches is how many launches the cross-turn rules remember
	// the recent turns of (the least recently seen forgotten past it): a
	// fleet's launches of a day many times over, at about 2.7 KB each.
	DefaultLaunches = 10000
	// DefaultLaunchIdle is how long a launch unseen is remembered: an app
	// left open overnight is still the same launch in the morning.
	DefaultLaunchIdle = 24 * time.Hour
	// DefaultCounterIdle is how long an installation unseen keeps its name
	// on the counted events: the Prometheus exporter's metric_expiration in
	// the configurations here.
	DefaultCounterIdle = 24 * time.Hour
)

// What the processor sends on (the emit setting).
const (
	// EmitAll passes every span through at once and adds the verdict spans.
	EmitAll = "all"
	// EmitVerdicts sends on only the verdict spans: for a pipeline whose
	// exporters read nothing else (the counters, the verdict file), which
	// then handle one span per turn instead of every span.
	EmitVerdicts = "verdicts"
	// EmitTurns decides nothing: once a turn could be decided (or is
	// forced), its trace's readings go on as spans under the phone's
	// resource (verdict.AppendTrace), for a stage routed by launch to
	// decide with the launch's history: the first stage of a scale-out
	// (docs/decisions/0242-scale-out-by-trace-then-by-launch.md). It keeps
	// no launches: it sees only the traces routed to it.
	EmitTurns = "turns"
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
	ErrDecisionWaitRange       = errors.New("decision_wait must be positive and at most wait")
	ErrHistoryWaitRange        = errors.New("history_wait must be positive and at most max_age")
	ErrEmitUnknown             = fmt.Errorf("emit must be %q, %q or %q", EmitAll, EmitVerdicts, EmitTurns)
	ErrCountersRange           = errors.New("counters.installations must not be negative and counters.idle must be positive")
	ErrLaunchesRange           = errors.New("launches.max must not be negative and launches.idle must be positive")
	ErrPassSpans               = fmt.Errorf("pass_spans names spans sent on with emit: %q, none empty", EmitVerdicts)
	ErrLaunchMetadataKey       = fmt.Errorf("launch_metadata_key is for emit: %q", EmitTurns)
	ErrChangelogNeeds          = errors.New("changelog needs storage")
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
	// DecisionWait is how long the trace of a turn without pippa.turn.units
	// must have been quiet (no reading arrived) before the turn is decided.
	DecisionWait time.Duration `mapstructure:"decision_wait"`
	// HistoryWait is how long a turn whose own trace has come whole is held
	// for its launch's previous turn (the turns its pool and state rules
	// read) before it is decided without it, the evidence saying which
	// turn was not seen.
	HistoryWait time.Duration `mapstructure:"history_wait"`
	// Emit says what goes on to the next consumer: EmitAll (every span, and
	// the verdicts), EmitVerdicts (the verdict spans only) or EmitTurns
	// (no verdict: each turn's readings, joined, for a stage routed by
	// launch).
	Emit string `mapstructure:"emit"`
	// PassSpans names spans that go on beside the verdicts with emit:
	// verdicts (pippa.link.status: the lost-link status changes a page
	// shows with the verdicts).
	PassSpans []string `mapstructure:"pass_spans"`
	// LaunchMetadataKey (emit: turns) sends each launch's joined turns in
	// a delivery of their own, under this client metadata key naming the
	// launch, so that an exporter can key its records by launch: the Kafka
	// exporter's traces.message_key_from_metadata_key puts every turn of a
	// launch on one partition of the turns topic
	// (docs/decisions/0316-turns-keyed-by-launch-through-client-metadata.md).
	// Empty: one delivery a cycle, naming nothing.
	LaunchMetadataKey string `mapstructure:"launch_metadata_key"`
	// Storage names a storage extension (shared_storage, or file_storage)
	// that keeps the pending readings, the decided trace IDs and the
	// launches' recent turns, so a crash or a restart loses no accepted
	// turn. Without it the state lives in memory and the turns held at
	// shutdown are decided then (forced).
	Storage *component.ID `mapstructure:"storage"`
	// Counters bounds the labels of the counted events.
	Counters CountersConfig `mapstructure:"counters"`
	// Launches bounds what is remembered of each launch for the rules that
	// read across turns.
	Launches LaunchesConfig `mapstructure:"launches"`
	// Changelog (a gateway reading its input from Kafka) keeps what the
	// processor holds for a partition in a changelog topic, on the
	// partition number each record came from: the held traces and, when it
	// keeps launches, each launch with which of its turns were decided. A
	// gateway that takes a partition over reads it back before it reads the
	// partition's next record
	// (docs/decisions/0317-what-a-gateway-holds-follows-its-partition.md).
	// Nil: what the processor holds stays with it.
	Changelog *changelog.Config `mapstructure:"changelog"`
	// EndOfInput: the processor reads a finite input (`percause lines`), so
	// at shutdown the input has ended: a turn still held is decided with
	// what came, and its evidence says what the input ended before.
	EndOfInput bool `mapstructure:"end_of_input"`
	// Rules holds the rules' thresholds.
	Rules verdict.Rules `mapstructure:"rules"`
}

// CountersConfig bounds the installations named on the counted events
// (percause.verdict and percause.implicated, as app.installation.id).
type CountersConfig struct {
	// Installations is how many installations, the most recently seen, are
	// named; the turns of others count as "other". 0 names none (the fleet
	// setting: the counters then carry cause, link and version only).
	Installations int `mapstructure:"installations"`
	// Idle is how long an installation unseen keeps its name.
	Idle time.Duration `mapstructure:"idle"`
}

// LaunchesConfig bounds the launches whose recent turns the processor
// remembers: the pool and state rules read a launch's previous turns, and
// a turn that carries no history of its own is read against these
// (docs/decisions/0226-the-collector-remembers-each-launch.md).
type LaunchesConfig struct {
	// Max is how many launches are remembered; past it the least recently
	// seen is forgotten (counted). 0 remembers none: a turn is then read
	// against the history it carries only.
	Max int `mapstructure:"max"`
	// Idle is how long a launch unseen is remembered.
	Idle time.Duration `mapstructure:"idle"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Wait:             DefaultWait,
		MaxAge:           DefaultMaxAge,
		MaxPending:       DefaultMaxPending,
		DecidedCacheSize: DefaultDecidedCacheSize,
		DecisionWait:     DefaultDecisionWait,
		HistoryWait:      DefaultHistoryWait,
		Emit:             DefaultEmit,
		Counters:         CountersConfig{Installations: DefaultCounterInstallations, Idle: DefaultCounterIdle},
		Launches:         LaunchesConfig{Max: DefaultLaunches, Idle: DefaultLaunchIdle},
		Rules:            verdict.DefaultRules(),
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
	if c.DecisionWait <= 0 || c.DecisionWait > c.Wait {
		bad(ErrDecisionWaitRange, "decision_wait %s, wait %s", c.DecisionWait, c.Wait)
	}
	if c.HistoryWait <= 0 || c.HistoryWait > c.MaxAge {
		bad(ErrHistoryWaitRange, "history_wait %s, max_age %s", c.HistoryWait, c.MaxAge)
	}
	if c.Emit != EmitAll && c.Emit != EmitVerdicts && c.Emit != EmitTurns {
		bad(ErrEmitUnknown, "emit is %q", c.Emit)
	}
	if len(c.PassSpans) > 0 && c.Emit != EmitVerdicts {
		bad(ErrPassSpans, "pass_spans %v with emit %q (every span passes already)", c.PassSpans, c.Emit)
	}
	if c.Changelog != nil && c.Storage == nil {
		bad(ErrChangelogNeeds, "changelog %s without storage", c.Changelog.Topic)
	}
	if c.LaunchMetadataKey != "" && c.Emit != EmitTurns {
		bad(ErrLaunchMetadataKey, "launch_metadata_key %q with emit %q", c.LaunchMetadataKey, c.Emit)
	}
	for _, n := range c.PassSpans {
		if n == "" {
			bad(ErrPassSpans, "an empty span name")
		}
	}
	if c.Counters.Installations < 0 || c.Counters.Idle <= 0 {
		bad(ErrCountersRange, "installations %d, idle %s", c.Counters.Installations, c.Counters.Idle)
	}
	if c.Launches.Max < 0 || c.Launches.Idle <= 0 {
		bad(ErrLaunchesRange, "max %d, idle %s", c.Launches.Max, c.Launches.Idle)
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
