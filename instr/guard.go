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

// lock takes the lock, or counts the call and returns ErrEnded once ended.
func (g *guard) lock(call string) error {
	g.mu.Lock()
	if g.ended {
		g.mu.Unlock()
		g.inst.reject(call)
		return endedError(call)
	}
	return nil
}

// refuse releases the lock taken by lock, counts the call and returns err.
func (g *guard) refuse(call string, err error) error {
	g.mu.Unlock()
	g.inst.reject(call)
	return err
}
