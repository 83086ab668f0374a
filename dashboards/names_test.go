package dashboards

import (
	"regexp"
	"strings"
	"testing"

	"github.com/percause/percause/instr/semconv"
)

func TestPrometheusNames(t *testing.T) {
	for _, c := range []struct {
		m    instrument
		want string
	}{
		{mUnderruns, "pippa_voice_underruns_total"},
		{mSilence, "pippa_voice_silence_seconds"},
		{mTakeRate, "pippa_tts_take_rate"},
		{mLiveObjects, "pippa_live_objects"},
		{mPoolResets, "pippa_pool_resets_total"},
		{mMemory, "pippa_health_memory_bytes"},
		{mLinkStatus, "pippa_link_status_changes_total"},
		{instrument{"a.ratio", semconv.UnitRatio, kindGauge}, "a_ratio"},
		{instrument{"x.y", semconv.UnitRatio, kindGauge}, "x_y_ratio"},
		{instrument{"up.time_seconds", semconv.UnitSeconds, kindGauge}, "up_time_seconds"},
	} {
		if got := c.m.prom(); got != c.want {
			t.Errorf("%s (%s): got %s, want %s", c.m.otel, c.m.unit, got, c.want)
		}
	}
	if got := label(semconv.AppInstallationID); got != "app_installation_id" {
		t.Errorf("label: %s", got)
	}
}

var promName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// FuzzEscape: any OpenTelemetry name maps to a valid Prometheus name with
// no run of underscores, and names already valid keep their letters.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{semconv.MetricPoolResets, semconv.AppInstallationID, "9lives", "a..b", "é", "", "__x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := escape(s)
		if s == "" {
			if got != "" {
				t.Fatalf("escape(%q) = %q", s, got)
			}
			return
		}
		if !promName.MatchString(got) {
			t.Fatalf("escape(%q) = %q: not a Prometheus name", s, got)
		}
		if strings.Contains(got, "__") {
			t.Fatalf("escape(%q) = %q: a run of underscores", s, got)
		}
		if escape(got) != got {
			t.Fatalf("escape is not idempotent on %q: %q", got, escape(got))
		}
	})
}
