package semconv

import "testing"

// TestRuleDefaults: the defaults make rules that can fire and that the
// turn's history can feed.
func TestRuleDefaults(t *testing.T) {
	if DefaultRisingTurns < 1 || DefaultRisingTurns > LiveHistory {
		t.Errorf("DefaultRisingTurns = %d, want 1..%d (the earlier turns a report carries)", DefaultRisingTurns, LiveHistory)
	}
	for name, d := range map[string]int64{
		"DefaultLateLead": int64(DefaultLateLead), "DefaultMicOpenLimit": int64(DefaultMicOpenLimit),
		"DefaultReconnectFailingFor": int64(DefaultReconnectFailingFor), "DefaultReconnectQuiet": int64(DefaultReconnectQuiet),
		"DefaultPoolResetSpacing": int64(DefaultPoolResetSpacing), "DefaultPostBudget": int64(DefaultPostBudget),
	} {
		if d <= 0 {
			t.Errorf("%s = %d, want positive", name, d)
		}
	}
	if DefaultReconnectFailures < 2 {
		t.Errorf("DefaultReconnectFailures = %d: one missed check must never show Reconnecting", DefaultReconnectFailures)
	}
	if DefaultPoolResetAfter < 1 {
		t.Errorf("DefaultPoolResetAfter = %d, want at least 1", DefaultPoolResetAfter)
	}
}
