package simulation

import "context"

// Shrink cuts a failing schedule to the fewest steps that still fail,
// so what a reader has to follow is as short as it can be.
func Shrink(ctx context.Context, f *Failure) *Failure {
	best := f
	lo, hi := 0, f.Limit // fails at hi; lo does not (or is untried)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if _, g := Run(ctx, f.Params, mid); g != nil {
			best, hi = g, mid
		} else {
			lo = mid
		}
	}
	return best
}

func (s *Stats) add(o Stats) {
	s.Steps += o.Steps
	s.FSOps += o.FSOps
	s.Crashes += o.Crashes
	s.PowerLosses += o.PowerLosses
	s.Restarts += o.Restarts
}
