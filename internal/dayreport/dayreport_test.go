package dayreport

import (
	"bytes"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }
func n(v int64) *int64     { return &v }

func TestSummarizeTheDoneReading(t *testing.T) {
	ok := Turn{Cause: "none", SpeechEndToPost: f(1.2), NotSent: f(0), PoolResets: n(0)}
	for name, tc := range map[string]struct {
		turns []Turn
		done  bool
		say   string
	}{
		"clean day":        {[]Turn{ok, ok}, true, "yes speech-end-to-post within 3.00 s: 2 of 2 turns, slowest 1.20 s"},
		"slow post":        {[]Turn{ok, {Cause: "wait", SpeechEndToPost: f(3.5), NotSent: f(0), PoolResets: n(0)}}, false, "NO  speech-end-to-post within 3.00 s: 1 of 2 turns, slowest 3.50 s"},
		"post at budget":   {[]Turn{{Cause: "none", SpeechEndToPost: f(3.0), NotSent: f(0), PoolResets: n(0)}}, true, "1 of 1 turns"},
		"post missing":     {[]Turn{ok, {Cause: "none", NotSent: f(0), PoolResets: n(0)}}, false, "1 did not report it"},
		"pool moved":       {[]Turn{ok, {Cause: "pool", SpeechEndToPost: f(1), NotSent: f(0), PoolResets: n(2)}}, false, "NO  pool_reset at 0: highest tally 2"},
		"not sent shown":   {[]Turn{ok, {Cause: "none", SpeechEndToPost: f(1), NotSent: f(4.5), PoolResets: n(0)}}, false, "NO  no \"not sent\" wait: 1 turns, longest 4.50 s"},
		"no turns":         {nil, false, "0 turns by cause: none"},
		"a turn, no cause": {[]Turn{{SpeechEndToPost: f(1)}}, false, "no verdict 1"},
		"nothing reported": {[]Turn{{Cause: "none", SpeechEndToPost: f(1)}}, false, "NO  pool_reset at 0: no turn reported it"},
	} {
		t.Run(name, func(t *testing.T) {
			d := &Day{Turns: tc.turns}
			s := d.Summarize(3.0)
			if s.Done.Done != tc.done {
				t.Errorf("done %v, want %v (%+v)", s.Done.Done, tc.done, s.Done)
			}
			var b bytes.Buffer
			if err := WriteSummary(&b, s); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.say) {
				t.Errorf("summary\n%s\nwant it to say %q", b.String(), tc.say)
			}
		})
	}
}
