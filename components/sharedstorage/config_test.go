package sharedstorage

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	filestorage "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := componenttest.CheckConfigStruct(cfg); err != nil {
		t.Fatal(err)
	}
	// file_storage's defaults, setting for setting.
	fs := filestorage.NewFactory().CreateDefaultConfig().(*filestorage.Config)
	if cfg.Directory != fs.Directory || cfg.CreateDirectory != fs.CreateDirectory || cfg.DirectoryPermissions != fs.DirectoryPermissions ||
		cfg.FSync != fs.FSync || cfg.Timeout != fs.Timeout || cfg.MaxSize != fs.MaxSize || !reflect.DeepEqual(cfg.Compaction, fs.Compaction) {
		t.Errorf("defaults %+v differ from file_storage's %+v", cfg, fs)
	}
	if cfg.StageFlush != DefaultStageFlush || cfg.Engine != EngineLog || cfg.CompactAfter != DefaultCompactAfter {
		t.Errorf("stage_flush %s, engine %q, compact_after %d; want %s, %q, %d", cfg.StageFlush, cfg.Engine, cfg.CompactAfter, DefaultStageFlush, EngineLog, DefaultCompactAfter)
	}
	cfg.Directory = t.TempDir()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tuned := createDefaultConfig().(*Config)
	tuned.Directory, tuned.CreateDirectory, tuned.DirectoryPermissions = "/var/lib/percause", true, "0700"
	tuned.FSync, tuned.Timeout, tuned.MaxSize, tuned.StageFlush = true, 2*time.Second, 100<<20, 5*time.Millisecond
	compaction := *tuned.Compaction
	compaction.OnRebound, compaction.Directory, compaction.CheckInterval = true, "/var/lib/percause", 10*time.Second
	tuned.Compaction = &compaction
	tuned.Engine = EngineBbolt
	log := createDefaultConfig().(*Config)
	log.CompactAfter = 8 << 20
	for id, want := range map[string]*Config{
		"shared_storage":       createDefaultConfig().(*Config),
		"shared_storage/tuned": tuned,
		"shared_storage/log":   log,
	} {
		var cid component.ID
		if err := cid.UnmarshalText([]byte(id)); err != nil {
			t.Fatal(err)
		}
		sub, err := cm.Sub(cid.String())
		if err != nil {
			t.Fatal(err)
		}
		cfg := createDefaultConfig().(*Config)
		if err := sub.Unmarshal(cfg); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("%s: %+v (compaction %+v), want %+v (compaction %+v)", id, cfg, cfg.Compaction, want, want.Compaction)
		}
	}
}

// TestValidateNamesEachProblem: stage_flush, engine and compact_after
// are ours; the rest is checked the way file_storage checks it.
func TestValidateNamesEachProblem(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		mut  func(*Config)
		want string
	}{
		"stage_flush zero":     {func(c *Config) { c.StageFlush = 0 }, ErrStageFlushNotPositive.Error()},
		"stage_flush negative": {func(c *Config) { c.StageFlush = -time.Millisecond }, ErrStageFlushNotPositive.Error()},
		"no directory":         {func(c *Config) { c.Directory = filepath.Join(dir, "absent") }, "directory must exist"},
		"bad permissions":      {func(c *Config) { c.CreateDirectory, c.DirectoryPermissions = true, "rwx" }, "directory_permissions"},
		"negative max_size":    {func(c *Config) { c.MaxSize = -1 }, "max size cannot be less than 0"},
		"unknown engine":       {func(c *Config) { c.Engine = "sqlite" }, ErrEngine.Error()},
		"compact_after small":  {func(c *Config) { c.CompactAfter = 4096 }, ErrCompactAfterTooSmall.Error()},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Directory = dir
			tc.mut(cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
			if tc.want == ErrStageFlushNotPositive.Error() && !errors.Is(err, ErrStageFlushNotPositive) {
				t.Fatalf("Validate: %v is not ErrStageFlushNotPositive", err)
			}
		})
	}
	// Created where it is missing, with create_directory.
	cfg := createDefaultConfig().(*Config)
	cfg.Directory, cfg.CreateDirectory = filepath.Join(dir, "made"), true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}
