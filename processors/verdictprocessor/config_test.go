package verdictprocessor

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id      string
		want    *Config
		wantErr error
	}{
		{id: "", want: createDefaultConfig().(*Config)},
		{id: "custom", want: &Config{
			Wait: 2 * time.Second, MaxAge: time.Minute, MaxPending: 500, DecidedCacheSize: 1000,
			Rules: RulesConfig{LateLead: 250 * time.Millisecond, MicOpenLimit: 2 * time.Second, RisingTurns: 2},
		}},
		{id: "bad_wait", wantErr: ErrWaitNotPositive},
		{id: "bad_age", wantErr: ErrMaxAgeBelowWait},
		{id: "bad_pending", wantErr: ErrMaxPendingNotPositive},
		{id: "bad_cache", wantErr: ErrDecidedCacheNotPositive},
		{id: "bad_lead", wantErr: ErrLateLeadNegative},
		{id: "bad_mic", wantErr: ErrMicOpenLimitNotPositive},
		{id: "bad_rising", wantErr: ErrRisingTurnsRange},
	}
	for _, tt := range tests {
		name := tt.id
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			id := component.NewID(metadata.Type)
			if tt.id != "" {
				id = component.NewIDWithName(metadata.Type, tt.id)
			}
			sub, err := cm.Sub(id.String())
			if err != nil {
				t.Fatal(err)
			}
			cfg := createDefaultConfig().(*Config)
			if err := sub.Unmarshal(cfg); err != nil {
				t.Fatal(err)
			}
			err = confmap.Validate(cfg)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Validate() = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if *cfg != *tt.want {
				t.Fatalf("config %+v, want %+v", *cfg, *tt.want)
			}
		})
	}
}

// TestDefaultsAreTheArchitecture's: the thresholds ARCHITECTURE.md fixes.
func TestDefaultThresholds(t *testing.T) {
	c := createDefaultConfig().(*Config)
	if c.Rules.LateLead != 100*time.Millisecond || c.Rules.MicOpenLimit != 1500*time.Millisecond || c.Rules.RisingTurns != 3 {
		t.Fatalf("rule defaults %+v differ from the architecture (0.10 s lead, 1.5 s microphone, 3 turns)", c.Rules)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
