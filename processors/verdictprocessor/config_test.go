package verdictprocessor

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/percause/percause/exporters/spool"
	"github.com/percause/percause/processors/verdictprocessor/internal/metadata"
	"github.com/percause/percause/verdict"
)

func TestLoadConfig(t *testing.T) {
	storageID := component.MustNewIDWithName("file_storage", "verdict")
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
			DecisionWait: 500 * time.Millisecond, HistoryWait: 4 * time.Second, Emit: EmitVerdicts, Storage: &storageID,
			Counters: CountersConfig{Installations: 0, Idle: time.Hour},
			Launches: LaunchesConfig{Max: 50, Idle: 2 * time.Hour},
			Rules:    verdict.Rules{LateLead: 250 * time.Millisecond, MicOpenLimit: 2 * time.Second, RisingTurns: 2},
		}},
		{id: "join", want: func() *Config { c := createDefaultConfig().(*Config); c.Emit = EmitTurns; return c }()},
		{id: "join_by_launch", want: func() *Config {
			c := createDefaultConfig().(*Config)
			c.Emit, c.LaunchMetadataKey = EmitTurns, "percause.launch"
			return c
		}()},
		{id: "bad_wait", wantErr: ErrWaitNotPositive},
		{id: "bad_age", wantErr: ErrMaxAgeBelowWait},
		{id: "bad_pending", wantErr: ErrMaxPendingNotPositive},
		{id: "bad_cache", wantErr: ErrDecidedCacheNotPositive},
		{id: "bad_lead", wantErr: ErrLateLeadNegative},
		{id: "bad_mic", wantErr: ErrMicOpenLimitNotPositive},
		{id: "bad_rising", wantErr: ErrRisingTurnsRange},
		{id: "bad_decision_wait", wantErr: ErrDecisionWaitRange},
		{id: "bad_history_wait", wantErr: ErrHistoryWaitRange},
		{id: "bad_emit", wantErr: ErrEmitUnknown},
		{id: "bad_counters", wantErr: ErrCountersRange},
		{id: "bad_pass_spans", wantErr: ErrPassSpans},
		{id: "bad_launches", wantErr: ErrLaunchesRange},
		{id: "bad_launch_metadata_key", wantErr: ErrLaunchMetadataKey},
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
			if !reflect.DeepEqual(cfg, tt.want) {
				t.Fatalf("config %+v, want %+v", *cfg, *tt.want)
			}
		})
	}
}

// TestDefaultThresholds: the thresholds docs/domain.md gives.
func TestDefaultThresholds(t *testing.T) {
	c := createDefaultConfig().(*Config)
	if c.Rules.LateLead != 100*time.Millisecond || c.Rules.MicOpenLimit != 1500*time.Millisecond || c.Rules.RisingTurns != 3 {
		t.Fatalf("rule defaults %+v differ from the architecture (0.10 s lead, 1.5 s microphone, 3 turns)", c.Rules)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestValidateSaysWhat: every error names the configured value, and all
// problems are reported at once.
func TestValidateSaysWhat(t *testing.T) {
	c := createDefaultConfig().(*Config)
	c.Wait, c.MaxAge, c.MaxPending, c.DecidedCacheSize = 10*time.Second, 5*time.Second, -1, 0
	c.Rules = verdict.Rules{LateLead: -time.Millisecond, MicOpenLimit: 0, RisingTurns: 4}
	err := c.Validate()
	for _, want := range []struct {
		err  error
		text string
	}{
		{ErrMaxAgeBelowWait, "max_age 5s < wait 10s"},
		{ErrMaxPendingNotPositive, "max_pending is -1"},
		{ErrDecidedCacheNotPositive, "decided_cache_size is 0"},
		{ErrLateLeadNegative, "late_lead is -1ms"},
		{ErrMicOpenLimitNotPositive, "mic_open_limit is 0s"},
		{ErrRisingTurnsRange, "rising_turns is 4"},
	} {
		if !errors.Is(err, want.err) {
			t.Errorf("Validate() = %v, want it to include %v", err, want.err)
		}
		if err == nil || !strings.Contains(err.Error(), want.text) {
			t.Errorf("Validate() = %v, want it to say %q", err, want.text)
		}
	}
}

// TestHistoryWaitCoversFiveRefusals: history_wait is where the SDK's
// spool sends a batch refused five times in a row (its backoff from
// DefaultMinBackoff, doubling, below DefaultMaxBackoff), so the figure in
// the README follows the spool's constants.
func TestHistoryWaitCoversFiveRefusals(t *testing.T) {
	var at, wait time.Duration = 0, spool.DefaultMinBackoff
	for range 5 {
		at += wait
		wait = min(2*wait, spool.DefaultMaxBackoff)
	}
	if DefaultHistoryWait != at {
		t.Fatalf("DefaultHistoryWait %s, the spool's fifth retry comes %s after the first try", DefaultHistoryWait, at)
	}
}
