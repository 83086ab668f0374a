package scenario

import (
	"strings"
	"testing"

	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/engine"
	"github.com/percause/percause/lab/phone"
)

func TestTableIsValid(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All {
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if seen[s.Name] {
			t.Errorf("scenario %s twice", s.Name)
		}
		seen[s.Name] = true
	}
}

// Every cause a rule can name has a scenario that expects it, and the
// lost-link messages and the burst are there too.
func TestEveryCauseHasAScenario(t *testing.T) {
	causes, links := map[string]bool{}, map[string]bool{}
	for _, s := range All {
		for _, tu := range s.Turns {
			causes[tu.Expect.Cause] = true
			links[tu.Expect.Link] = true
		}
	}
	for _, c := range semconv.Causes {
		if !causes[c] {
			t.Errorf("no scenario expects %s", c)
		}
	}
	for _, l := range []string{semconv.LinkStatusEngineRestarting, semconv.LinkStatusDeviceOffline} {
		if !links[l] {
			t.Errorf("no scenario expects link status %s", l)
		}
	}
	if _, err := Lookup("burst"); err != nil {
		t.Error(err)
	}
}

// Every line the lab holds both ways (the waits, the stale connection) is
// expected by some turn, the done reading has turns on Wi-Fi and on LTE,
// and some turn dictates a minute (about 2 MB at the microphone's rate).
func TestEveryLineAndLinkHasATurn(t *testing.T) {
	shows, links := map[string]bool{}, map[string]bool{}
	longest := 0.0
	for _, s := range All {
		for _, tu := range s.Turns {
			for _, l := range Strict {
				shows[l] = shows[l] || tu.Expect.Shows(l)
			}
			links[tu.Link] = true
			longest = max(longest, tu.Speech)
		}
	}
	for _, l := range Strict {
		if !shows[l] {
			t.Errorf("no turn expects the line %s", l)
		}
	}
	if !links[LinkWifi] || !links[LinkLTE] {
		t.Errorf("links %v: want turns on Wi-Fi and on LTE", links)
	}
	if mb := longest * phone.DefaultRecordingRate / 1e6; mb < 1.8 {
		t.Errorf("the longest dictation posts %.1f MB; want a minute's (about 2 MB)", mb)
	}
}

// The leak scenario names state from the turn where three rises in a row
// are first visible (the 4th: counts 1→2→3→4), none before.
func TestLeakExpectsStateFromTheFourthTurn(t *testing.T) {
	ss, err := Lookup("leak")
	if err != nil {
		t.Fatal(err)
	}
	for i, tu := range ss[0].Turns {
		want := semconv.CauseNone
		if i+1 >= semconv.LiveHistory+1 {
			want = semconv.CauseState
		}
		if tu.Expect.Cause != want {
			t.Errorf("turn %d expects %s, want %s", i+1, tu.Expect.Cause, want)
		}
	}
}

func TestLookup(t *testing.T) {
	all, err := Lookup("all")
	if err != nil || len(all) != len(All) {
		t.Fatalf("all: %d, %v", len(all), err)
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "healthy") {
		t.Errorf("unknown scenario: %v", err)
	}
}

func TestValidateRejects(t *testing.T) {
	bad := []Scenario{
		{},
		{Name: "x"},
		{Name: "x", Turns: []Turn{{Expect: Expect{Cause: "weather"}}}},
		{Name: "x", Turns: []Turn{{Expect: Expect{Link: "sulking"}}}},
		{Name: "x", Turns: []Turn{{Leak: "socks"}}},
		{Name: "x", Turns: []Turn{{Lanes: "three"}}},
		{Name: "x", Turns: []Turn{{Rate: -1}}},
		{Name: "x", Turns: []Turn{{Reply: []Line{{Text: " "}}}}},
		{Name: "x", Turns: []Turn{{Link: "5g"}}},
		{Name: "x", Turns: []Turn{{Speech: -1}}},
		{Name: "x", Turns: []Turn{{Media: -1}}},
		{Name: "x", Turns: []Turn{{Expect: Expect{Waits: []string{semconv.LinkStatusDeviceOffline}}}}},
	}
	for i, s := range bad {
		if s.Validate() == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

func TestExpectString(t *testing.T) {
	for _, c := range []struct {
		e    Expect
		want string
	}{
		{Expect{}, "-"},
		{Expect{Cause: "none", Missed: MissedNone}, "none, missed checks none"},
		{Expect{Link: "device_offline"}, "link device_offline"},
		{Expect{Cause: "none", Waits: []string{"not_sent", "voice_late"}}, "none, shows not_sent+voice_late"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

// On one shared pool of six the burst's line stream, upload and four take
// streams hold every connection, and they must hold it for longer than a
// whole check cycle (the answer, the rest, the timeout) plus the margin:
// otherwise whether a check starves depends on when it happened to be asked,
// and a loaded machine shifting the asks by a fraction of a second turns the
// miss into an answer.
func TestBurstOutlastsACheckCycle(t *testing.T) {
	ss, err := Lookup("burst")
	if err != nil {
		t.Fatal(err)
	}
	cycle := engine.DefaultCheck + phone.DefaultCheckEvery + lanes.DefaultCheckTimeout.Seconds()
	need := cycle + burstMargin
	shared := 0
	for i, tu := range ss[0].Turns {
		if tu.Lanes != LanesShared {
			continue
		}
		shared++
		if len(tu.Reply) != 4 {
			t.Errorf("turn %d: %d take streams, want 4 beside the line stream and the upload", i+1, len(tu.Reply))
		}
		for j, l := range tu.Reply {
			audio := float64(len(strings.Fields(l.Text))) * engine.DefaultSecondsPerWord
			if hold := tu.FirstByte + audio/tu.Rate; hold < need {
				t.Errorf("turn %d, take %d holds its connection %.1f s; a check cycle and the margin need %.1f s", i+1, j+1, hold, need)
			}
		}
		if up := float64(tu.Upload) / tu.Shape.Uplink; up < need {
			t.Errorf("turn %d: the upload holds its connection %.1f s, want at least %.1f s", i+1, up, need)
		}
		if tu.LinesOpen < need {
			t.Errorf("turn %d: the line stream stays open %.1f s after its last line, want at least %.1f s", i+1, tu.LinesOpen, need)
		}
	}
	if shared == 0 {
		t.Fatal("the burst has no turn on one shared pool")
	}
}
