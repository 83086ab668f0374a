package simulation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/components/sharedstorage"
)

// TestARecoveryOutlivesALateDeath: a fault from before the recovery may
// end the process in it (Pebble reports a background write that failed,
// a flush's manifest that found the disk full, by a fatal error on its own
// goroutine, later). The recovery must start another process and go on:
// before, it went on calling the dead one, which on the pebble engine
// never answers (a `make test` hung 25 minutes on seed 74), and on the log
// refuses every resend.
func TestARecoveryOutlivesALateDeath(t *testing.T) {
	for _, engine := range []string{sharedstorage.EngineLog, sharedstorage.EnginePebble} {
		for _, seed := range []uint64{74, 7, 56} {
			for _, at := range []int{1, 2, 5} {
				t.Run(fmt.Sprintf("%s/seed %d/call %d", engine, seed, at), func(t *testing.T) {
					p := ParamsFor(seed).WithEngine(engine)
					p.lateDeath = at
					_, f, events := runWithin(t, p, 2*time.Minute)
					var err error
					if f != nil {
						err = f.Err
					}
					if err != nil {
						t.Fatalf("%v\n%s", err, strings.Join(events, "\n"))
					}
					if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "recovery: the process died") }) {
						t.Fatalf("the process did not die in the recovery (the recovery made fewer than %d file system calls?): the test proves nothing", at)
					}
				})
			}
		}
	}
}

// runWithin runs p's schedule whole, as Run does, and fails the test
// when it has not ended within d: a hang names its seed and what happened
// up to it, instead of ending the test binary at its timeout.
func runWithin(t *testing.T, p Params, d time.Duration) (Stats, *Failure, []string) {
	t.Helper()
	s := newSchedule(p)
	type outcome struct {
		st Stats
		f  *Failure
	}
	done := make(chan outcome, 1)
	go func() {
		st, f := s.runWhole(context.Background(), 0)
		done <- outcome{st, f}
	}()
	select {
	case o := <-done:
		return o.st, o.f, s.events.all()
	case <-time.After(d):
		t.Fatalf("%s: the schedule has not ended after %s (replay: -seed %d -engine %s)\n%s", p, d, p.Seed, p.Engine, strings.Join(s.events.all(), "\n"))
		return Stats{}, nil, nil
	}
}
