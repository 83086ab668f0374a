package load

import (
	"testing"
	"time"
)

// TestPercentile: nearest rank, the ⌈pct·n/100⌉-th smallest, whatever the
// order the latencies come in.
func TestPercentile(t *testing.T) {
	ms := func(n int) []time.Duration { // n, n-1, …, 1 ms: sorting matters
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(n-i) * time.Millisecond
		}
		return out
	}
	for _, c := range []struct {
		n    int
		pct  float64
		want time.Duration
	}{
		{20, 95, 19 * time.Millisecond},
		{20, 50, 10 * time.Millisecond},
		{30, 95, 29 * time.Millisecond}, // ⌈28.5⌉: not the 28th
		{200, 99, 198 * time.Millisecond},
		{150, 99, 149 * time.Millisecond}, // ⌈148.5⌉
		{10, 99, 10 * time.Millisecond},
		{1, 99, time.Millisecond},
		{1, 0, time.Millisecond},
		{5, 100, 5 * time.Millisecond},
		{0, 99, 0},
	} {
		if got := Percentile(ms(c.n), c.pct); got != c.want {
			t.Errorf("p%v of 1…%d ms = %v, want %v", c.pct, c.n, got, c.want)
		}
	}
	in := ms(3)
	Percentile(in, 50)
	if in[0] != 3*time.Millisecond {
		t.Error("Percentile sorted its argument in place")
	}
}
