package plural

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{N(0, "turn"), "0 turns"},
		{N(1, "turn"), "1 turn"},
		{N(2, "turn"), "2 turns"},
		{N(int64(-1), "turn"), "-1 turns"},
		{N(uint64(1), "round"), "1 round"},
		{Of(1, "launch", "launches"), "1 launch"},
		{Of(12, "launch", "launches"), "12 launches"},
		{Of(1, "series", "series"), "1 series"},
		{Word(1, "differs", "differ"), "differs"},
		{Word(0, "differs", "differ"), "differ"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
