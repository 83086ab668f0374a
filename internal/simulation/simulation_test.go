package simulation

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/percause/percause/components/sharedstorage"
)

var (
	seedFlag      = flag.Uint64("seed", 0, "replay this schedule's seed alone (0: explore)")
	stepsFlag     = flag.Int("steps", 0, "with -seed: cut the schedule to this many steps")
	schedulesFlag = flag.Int("schedules", 10000, "how many schedules to explore")
	forFlag       = flag.Duration("for", 0, "explore for this long instead of -schedules")
	firstFlag     = flag.Uint64("first", 1, "the first seed explored")
	engineFlag    = flag.String("engine", sharedstorage.EngineLog, "shared_storage's engine: log or pebble")
	pebbleFlag    = flag.Int("pebble-schedules", 300, "how many schedules TestSimulationPebble explores")
)

// kept are schedules that once failed, each replayed whole in every run:
// what the simulation found, beside the four holes it was built to find
// (holes_test.go has those as tests of their own).
var kept = []struct {
	seed  uint64
	found string
}{
	{3, "a commit that failed after the verdicts of a request were accepted answered 200"},
	{5, "with fsync, the verdict file made and never synced into its folder: a power loss took it whole"},
	{7, "a turn line the lines connector held for its take, acknowledged, was lost with the process when it was killed"},
	{13, "a batch whose new trace found no room was answered 200"},
	{17, "garbage a power loss left at the verdict file's end stayed, lines after it"},
	{56, "a turn line held by the lines connector for its take, acknowledged, was lost when the processor refused the emission that carried it (its take's, or the sweep's)"},
	{81, "a torn record or line stayed when cutting it back failed; the next one was joined to it"},
	{389, "an empty line among what a power loss left was read as the end of the garbage"},
	{446, "with fsync, lines and records a kill left unflushed were relied on after the restart, then lost to a power loss"},
	{2318, "the empty log a failed compaction left was taken for records after a torn one: the store did not open"},
	{9180, "resends gave up before a refused verdict's backoff (5 s) had passed"},
	{29381, "with fsync, records a kill left unflushed in a log before the last (an empty one a failed compaction made) were relied on, then lost to a power loss: the store did not open"},
	{76269, "with fsync, a record whose sync failed and whose cut back failed too stayed in the log; read at the start after a graceful restart, it held counted verdict IDs whose counts were never made"},
}

// TestKeptSchedules replays every kept schedule.
func TestKeptSchedules(t *testing.T) {
	for _, k := range kept {
		if _, f := Run(context.Background(), ParamsFor(k.seed), 0); f != nil {
			t.Errorf("kept schedule (%s): %v", k.found, f)
		}
	}
}

// TestSimulation explores schedules from -first on (CI: 10,000) on
// -engine (the log), or replays one (-seed N [-steps K]). A failure
// prints its seed and the shortest cut of its schedule that still fails.
func TestSimulation(t *testing.T) {
	if *seedFlag != 0 {
		if _, f := Run(context.Background(), ParamsFor(*seedFlag).WithEngine(*engineFlag), *stepsFlag); f != nil {
			t.Fatal(f)
		}
		return
	}
	explore(t, *engineFlag, *schedulesFlag)
}

// TestSimulationPebble explores the same schedules on the pebble engine
// (CI: 300; docs/simulation.md says why fewer).
func TestSimulationPebble(t *testing.T) {
	if *seedFlag != 0 || *engineFlag != sharedstorage.EngineLog {
		t.Skip("a replay or an exploration on one engine: TestSimulation")
	}
	explore(t, sharedstorage.EnginePebble, *pebbleFlag)
}

// hangAfter is how long one schedule may run before exploring calls it a
// hang; the longest take well under a second.
const hangAfter = 2 * time.Minute

func explore(t *testing.T, engine string, schedules int) {
	ctx := context.Background()
	n := 0
	if testing.Short() {
		schedules = min(schedules, 500)
	}
	began := time.Now()
	var total Stats
	for seed := *firstFlag; ; seed++ {
		if *forFlag > 0 && time.Since(began) >= *forFlag || *forFlag == 0 && n >= schedules {
			break
		}
		st, f, _ := runWithin(t, ParamsFor(seed).WithEngine(engine), hangAfter)
		n++
		total.add(st)
		if f != nil {
			t.Fatal(Shrink(ctx, f))
		}
	}
	took := time.Since(began)
	t.Logf("%s engine: %d schedules held in %s (%.0f a second): %d steps, %d file system calls, %d kills, %d power losses, %d graceful restarts",
		engine, n, took.Round(time.Millisecond), float64(n)/took.Seconds(), total.Steps, total.FSOps, total.Crashes, total.PowerLosses, total.Restarts)
	if total.Crashes == 0 || total.PowerLosses == 0 {
		t.Fatalf("no kill (%d) or no power loss (%d) in %d schedules: the simulation proved nothing", total.Crashes, total.PowerLosses, n)
	}
}
