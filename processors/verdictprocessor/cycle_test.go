package verdictprocessor

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

// TestRunnableRequestsShareTheIdleRequestsCycle: requests that are
// runnable together (their bodies read, as a burst of senders' are) share
// one cycle, one downstream call and one commit, even though the first of
// them found the processor idle and runs the cycle itself: it lets them
// join before it starts. On one P the first request reaches its cycle
// while the others wait to run; the scheduler's fairness check (every
// 61st pick takes the global queue first) may wake the yielding request
// before all of them joined, so two cycles are allowed. Without the yield
// each request runs a cycle of its own: six.
func TestRunnableRequestsShareTheIdleRequestsCycle(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	h, host := storedHarness(t, t.TempDir(), EmitVerdicts)
	defer h.stop(host)

	const requests = 6
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for n := byte(1); n <= requests; n++ {
		td := sdk(n, take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)) // decided at once
		wg.Go(func() { errs <- h.p.ConsumeTraces(context.Background(), td) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	calls := h.sink.AllTraces()
	h.drainSink()
	if got := len(h.verdicts()); got != requests {
		t.Fatalf("%d verdicts, want %d", got, requests)
	}
	if len(calls) > 2 {
		t.Errorf("the %d verdicts went downstream in %d calls, want 1 or 2 (the requests runnable together share a cycle)", requests, len(calls))
	}
}
