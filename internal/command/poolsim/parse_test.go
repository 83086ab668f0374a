package poolsim

import (
	"strings"
	"testing"
	"time"
)

func TestParseTakes(t *testing.T) {
	got, err := ParseTakes("14, 19,24.5,30")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{14 * time.Second, 19 * time.Second, 24500 * time.Millisecond, 30 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for in, msg := range map[string]string{
		"":         "take 1",
		"14,x":     "take 2",
		"0":        "more than 0 ms",
		"-1":       "outside",
		"NaN":      "not a number",
		"1e9":      "outside",
		"0.0001":   "more than 0 ms",
		"14,,19":   "take 2",
		"Inf,14":   "take 1",
		"14;19":    "not a number",
		"100000,1": "outside",
	} {
		if _, err := ParseTakes(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTakes(%q) = %v, want an error saying %q", in, err, msg)
		}
	}
}

// FuzzParseTakes: any input gives lengths that Run accepts, or an error;
// never a panic, never a length the model cannot play.
func FuzzParseTakes(f *testing.F) {
	for _, s := range []string{"14,19,24,30", "1", "0.4,26", "", ",", "1e3", "-0", "NaN", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		takes, err := ParseTakes(s)
		if err != nil {
			return
		}
		for _, d := range takes {
			if d <= 0 || d > MaxSeconds*time.Second {
				t.Fatalf("ParseTakes(%q) gave %s", s, d)
			}
		}
		if len(takes) > 50 {
			return // the model is quadratic in calls; the bound is checked above
		}
		if _, err := Run(Case{TwoPools: true, Takes: takes, WordsUntil: -1}); err != nil {
			t.Fatalf("Run rejected parsed takes %v: %v", takes, err)
		}
	})
}

func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"40.4", "0", "20", " 3 ", "1e2", "-1", "0x10", "inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseSeconds(s)
		if err == nil && (d < 0 || d > MaxSeconds*time.Second) {
			t.Fatalf("ParseSeconds(%q) = %s", s, d)
		}
	})
}
