package linesconnector

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := componenttest.CheckConfigStruct(cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Wait != DefaultWait || cfg.TakeWindow != DefaultTakeWindow || cfg.MaxPending != DefaultMaxPending || cfg.EmittedCacheSize != DefaultEmittedCacheSize {
		t.Errorf("defaults %+v", cfg)
	}
}

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]*Config{
		"lines":       createDefaultConfig().(*Config),
		"lines/tight": {Wait: 2 * time.Second, TakeWindow: 30 * time.Second, MaxPending: 100, EmittedCacheSize: 50},
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
		if *cfg != *want {
			t.Errorf("%s: %+v, want %+v", id, cfg, want)
		}
	}
}

func TestValidateNamesEachProblem(t *testing.T) {
	for name, tc := range map[string]struct {
		mut  func(*Config)
		want error
	}{
		"wait":        {func(c *Config) { c.Wait = 0 }, ErrWaitNotPositive},
		"take window": {func(c *Config) { c.TakeWindow = -time.Second }, ErrTakeWindowNotPositive},
		"max pending": {func(c *Config) { c.MaxPending = 0 }, ErrMaxPendingNotPositive},
		"cache":       {func(c *Config) { c.EmittedCacheSize = -1 }, ErrEmittedCacheNotPositive},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tc.mut(cfg)
			if err := cfg.Validate(); !errors.Is(err, tc.want) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
		})
	}
}
