package instr

import "sync"

// guard is what a turn and a take share: one lock over their readings, the
// end after which every call is refused, and the count of every refusal in
// percause.sdk.rejected.
type guard struct {
	inst  *instruments
	mu    sync.Mutex
	ended bool
}

// do runs f with the lock held, as call. Once the report has ended it
// returns ErrEnded without running f; an error from f is the call's
// refusal. Either way the refusal is counted.
func (g *guard) do(call string, f func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		g.inst.reject(call)
		return endedError(call)
	}
	if err := f(); err != nil {
		g.inst.reject(call)
		return err
	}
	return nil
}
