package sharedstorage

import (
	"errors"
	"fmt"
	"time"

	filestorage "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
)

// Defaults.
const (
	// DefaultStageFlush is how long staged operations wait for a client's
	// Batch to carry them before the extension commits them on its own.
	// Short: a stager's callback, and whatever it holds in memory until
	// then, wait at most this long when no batch comes.
	DefaultStageFlush = 10 * time.Millisecond
	// DefaultEngine keeps the database as a log of its transactions.
	DefaultEngine = EngineLog
	// DefaultCompactAfter is how large the log grows before its keys are
	// written to a snapshot and a new log begins.
	DefaultCompactAfter = 64 << 20
)

// Engines: how the shared database is kept.
const (
	// EngineLog: an append-only log of the transactions and a snapshot,
	// one write a commit (logstore.go).
	EngineLog = "log"
	// EngineBbolt: one file_storage (bbolt) database.
	EngineBbolt = "bbolt"
	// EnginePebble: one Pebble database, an LSM tree (pebblestore.go).
	EnginePebble = "pebble"
)

// ErrEngine is Validate's error for an engine it does not know.
var ErrEngine = fmt.Errorf("engine must be %q, %q or %q", EngineLog, EngineBbolt, EnginePebble)

// ErrCompactAfterTooSmall is Validate's error for a compact_after under
// a megabyte.
var ErrCompactAfterTooSmall = errors.New("compact_after must be at least 1 MiB")

// ErrStageFlushNotPositive is Validate's error for a stage_flush of zero
// or less.
var ErrStageFlushNotPositive = errors.New("stage_flush must be positive")

// Config is the shared storage extension's configuration. Every setting
// but stage_flush is file_storage's, with its name, its default and its
// meaning, applied to the one database every client shares.
type Config struct {
	// Directory holds the shared database (and file_storage's databases
	// the clients' data may be imported from).
	Directory string `mapstructure:"directory"`
	// CreateDirectory creates Directory (and compaction.directory) at
	// start, with DirectoryPermissions.
	CreateDirectory bool `mapstructure:"create_directory"`
	// DirectoryPermissions, octal, for a directory it creates.
	DirectoryPermissions string `mapstructure:"directory_permissions"`
	// FSync flushes each transaction to the disk: a commit then survives
	// the machine losing power, not only the collector being killed.
	FSync bool `mapstructure:"fsync"`
	// Timeout is how long opening the database waits for bbolt's lock.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxSize bounds the database file in bytes (0: unbounded); a
	// transaction that would grow it further fails with
	// storage.ErrStorageFull.
	MaxSize int64 `mapstructure:"max_size"`
	// Compaction is file_storage's compaction of the database, on start
	// or when it has shrunk (on_rebound).
	Compaction *filestorage.CompactionConfig `mapstructure:"compaction"`

	// StageFlush is how long a staged operation waits for the next
	// client's Batch before the extension commits it on its own.
	StageFlush time.Duration `mapstructure:"stage_flush"`
	// Engine is how the database is kept: EngineLog or EnginePebble
	// (timeout, max_size and compaction then do not apply), or
	// EngineBbolt.
	Engine string `mapstructure:"engine"`
	// CompactAfter is the log's size, in bytes, past which it is
	// compacted (the log engine).
	CompactAfter int64 `mapstructure:"compact_after"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	fs := filestorage.NewFactory().CreateDefaultConfig().(*filestorage.Config)
	return &Config{
		Directory:            fs.Directory,
		CreateDirectory:      fs.CreateDirectory,
		DirectoryPermissions: fs.DirectoryPermissions,
		FSync:                fs.FSync,
		Timeout:              fs.Timeout,
		MaxSize:              fs.MaxSize,
		Compaction:           fs.Compaction,
		StageFlush:           DefaultStageFlush,
		Engine:               DefaultEngine,
		CompactAfter:         DefaultCompactAfter,
	}
}

// fileStorageConfig is the configuration of the file_storage the
// extension keeps its database in. It has not been validated.
func (c *Config) fileStorageConfig() *filestorage.Config {
	compaction := c.Compaction
	if compaction == nil {
		compaction = filestorage.NewFactory().CreateDefaultConfig().(*filestorage.Config).Compaction
	}
	copied := *compaction
	return &filestorage.Config{
		Directory:            c.Directory,
		CreateDirectory:      c.CreateDirectory,
		DirectoryPermissions: c.DirectoryPermissions,
		FSync:                c.FSync,
		Timeout:              c.Timeout,
		MaxSize:              c.MaxSize,
		Compaction:           &copied,
	}
}

// Validate checks stage_flush, and the file_storage settings as
// file_storage checks them.
func (c *Config) Validate() error {
	var errs error
	if c.StageFlush <= 0 {
		errs = errors.Join(errs, fmt.Errorf("%w: got %s", ErrStageFlushNotPositive, c.StageFlush))
	}
	if c.Engine != EngineLog && c.Engine != EngineBbolt && c.Engine != EnginePebble {
		errs = errors.Join(errs, fmt.Errorf("%w: got %q", ErrEngine, c.Engine))
	}
	if c.CompactAfter < 1<<20 {
		errs = errors.Join(errs, fmt.Errorf("%w: got %d", ErrCompactAfterTooSmall, c.CompactAfter))
	}
	if err := c.fileStorageConfig().Validate(); err != nil {
		errs = errors.Join(errs, err)
	}
	return errs
}
