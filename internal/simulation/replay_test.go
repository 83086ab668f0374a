package simulation

import (
	"context"
	"testing"
)

// TestAScheduleReplaysAlike: a seed is all a failure gives to replay it,
// so the same seed must make the same schedule, the same file system
// calls and the same faults, run after run (a map walked in its own
// order where the processor writes a commit made the calls differ).
func TestAScheduleReplaysAlike(t *testing.T) {
	n := uint64(300)
	if testing.Short() {
		n = 60
	}
	for seed := uint64(1); seed <= n; seed++ {
		p := ParamsFor(seed)
		a, fa := Run(context.Background(), p, 0)
		b, fb := Run(context.Background(), p, 0)
		if a != b || (fa == nil) != (fb == nil) {
			t.Fatalf("seed %d ran two ways: %+v (failed: %v), then %+v (failed: %v)", seed, a, fa != nil, b, fb != nil)
		}
	}
}
