package simulation

import (
	"context"
	"flag"
	"testing"
	"time"
)

var (
	seedFlag      = flag.Uint64("seed", 0, "replay this schedule's seed alone (0: explore)")
	stepsFlag     = flag.Int("steps", 0, "with -seed: cut the schedule to this many steps")
	schedulesFlag = flag.Int("schedules", 10000, "how many schedules to explore")
	forFlag       = flag.Duration("for", 0, "explore for this long instead of -schedules")
	firstFlag     = flag.Uint64("first", 1, "the first seed explored")
)

// TestSimulation explores schedules from -first on (CI: 10,000), or
// replays one (-seed N [-steps K]). A failure prints its seed and the
// shortest cut of its schedule that still fails.
func TestSimulation(t *testing.T) {
	ctx := context.Background()
	if *seedFlag != 0 {
		if _, f := Run(ctx, *seedFlag, *stepsFlag); f != nil {
			t.Fatal(f)
		}
		return
	}
	n, schedules := 0, *schedulesFlag
	if testing.Short() {
		schedules = min(schedules, 500)
	}
	began := time.Now()
	var total Stats
	for seed := *firstFlag; ; seed++ {
		if *forFlag > 0 && time.Since(began) >= *forFlag || *forFlag == 0 && n >= schedules {
			break
		}
		st, f := Run(ctx, seed, 0)
		n++
		total.add(st)
		if f != nil {
			t.Fatal(Shrink(ctx, f))
		}
	}
	took := time.Since(began)
	t.Logf("%d schedules held in %s (%.0f a second): %d steps, %d file system calls, %d kills, %d power losses, %d graceful restarts",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), total.Steps, total.FSOps, total.Crashes, total.PowerLosses, total.Restarts)
	if total.Crashes == 0 || total.PowerLosses == 0 {
		t.Fatalf("no kill (%d) or no power loss (%d) in %d schedules: the simulation proved nothing", total.Crashes, total.PowerLosses, n)
	}
}
