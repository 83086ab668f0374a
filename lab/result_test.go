package lab

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/scenario"
	"github.com/percause/percause/lab/verdicts"
)

func TestJudge(t *testing.T) {
	ok := Readings{Checks: 3}
	tests := []struct {
		name   string
		expect scenario.Expect
		v      *verdicts.Verdict
		r      Readings
		want   string // "" : as expected; else a part of the mismatch
	}{
		{"as expected", scenario.Expect{Cause: semconv.CauseNone}, &verdicts.Verdict{Cause: semconv.CauseNone}, ok, ""},
		{"other cause", scenario.Expect{Cause: semconv.CauseNone}, &verdicts.Verdict{Cause: semconv.CauseWait}, ok, "verdict wait, expected none"},
		{"no verdict", scenario.Expect{Cause: semconv.CauseNone}, nil, ok, "no verdict came back"},
		{"cause not judged", scenario.Expect{}, nil, ok, ""},
		{"status line shown", scenario.Expect{Link: semconv.LinkStatusDeviceOffline}, nil,
			Readings{LinkStatuses: []string{semconv.LinkStatusConnectionLost, semconv.LinkStatusDeviceOffline}}, ""},
		{"status line missing", scenario.Expect{Link: semconv.LinkStatusDeviceOffline}, nil,
			Readings{LinkStatuses: []string{semconv.LinkStatusUnreachable}}, "device_offline never shown (shown: unreachable)"},
		{"checks should fail", scenario.Expect{Missed: scenario.MissedSome}, nil, ok, "all 3 progress checks answered"},
		{"checks should answer", scenario.Expect{Missed: scenario.MissedNone}, nil, Readings{Checks: 3, ChecksFailed: 1}, "1 of 3 progress checks failed"},
		{"one check should fail", scenario.Expect{Missed: scenario.MissedSome}, nil, Readings{Checks: 1}, "1 progress check answered, expected some to fail"},
		{"one check should answer", scenario.Expect{Missed: scenario.MissedNone}, nil, Readings{Checks: 1, ChecksFailed: 1}, "1 of 1 progress check failed"},
		{"a wait shown where injected", scenario.Expect{Waits: []string{semconv.LinkStatusNotSent}}, nil,
			Readings{LinkStatuses: []string{semconv.LinkStatusNotSent, semconv.LinkStatusOK}}, ""},
		{"a wait missing", scenario.Expect{Waits: []string{semconv.LinkStatusMicOpening}}, nil,
			Readings{LinkStatuses: []string{}}, "mic_opening never shown (shown: none)"},
		{"a wait shown without its fault", scenario.Expect{Cause: semconv.CauseNone}, &verdicts.Verdict{Cause: semconv.CauseNone},
			Readings{LinkStatuses: []string{semconv.LinkStatusVoiceLate, semconv.LinkStatusOK}}, "voice_late shown, but its fault was not injected"},
		{"the stale connection shown without its fault", scenario.Expect{Missed: scenario.MissedSome}, nil,
			Readings{Checks: 3, ChecksFailed: 1, LinkStatuses: []string{semconv.LinkStatusStaleConnection}}, "stale_connection shown, but its fault was not injected"},
		{"the stale connection expected as the link", scenario.Expect{Link: semconv.LinkStatusStaleConnection}, nil,
			Readings{LinkStatuses: []string{semconv.LinkStatusConnectionLost, semconv.LinkStatusStaleConnection}}, ""},
		{"a refused reading", scenario.Expect{}, nil, Readings{Refused: []string{"instr: Turn.SetNotSent: seconds = -1: negative duration"}},
			"the SDK refused 1 reading(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := TurnResult{Scenario: "s", Turn: 1, expect: tt.expect, Readings: tt.r, Causes: []string{}}
			if tt.v != nil {
				tr.setVerdict(*tt.v)
			}
			tr.judge()
			if tt.want == "" && !tr.OK {
				t.Errorf("mismatch %q", tr.Mismatch)
			}
			if tt.want != "" && (tr.OK || !strings.Contains(tr.Mismatch, tt.want)) {
				t.Errorf("ok %v, mismatch %q, want it to say %q", tr.OK, tr.Mismatch, tt.want)
			}
			if line := tr.Line(); !strings.HasPrefix(line, "s ") {
				t.Errorf("line %q", line)
			}
		})
	}
}

func TestWriteJSONFields(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, []TurnResult{{Scenario: "healthy", Turn: 1, Expected: "none", Causes: []string{}}}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "turn", "expected", "cause", "causes", "evidence", "ok", "trace_id", "readings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b.String())
		}
	}
	if c, _ := m["causes"].([]any); c == nil {
		t.Errorf("causes is not a list: %s", b.String())
	}
}
