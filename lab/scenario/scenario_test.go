package scenario

import (
	"strings"
	"testing"

	"github.com/percause/percause/instr/semconv"
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
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}
