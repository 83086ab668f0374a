package instr

import "sync"

// guard is what a turn and a take share: one lock over their readings, the
// end after which every call is refused, and the report of every refusal:
// counted in percause.sdk.rejected and handed to the error handler
// (docs/decisions/0105-recording-calls-return-nothing.md).
type guard struct {
	inst  *instruments
	mu    sync.Mutex
	ended bool
}

// do runs f with the lock held, as call, and reports whether f took the
// reading. Once the report has ended f does not run; an error from f is the
// call's refusal. A refusal is reported after the lock is released, so an
// error handler may call back into the report.
func (g *guard) do(call string, f func() error) bool {
	g.mu.Lock()
	var err error
	if g.ended {
		err = endedError(call)
	} else {
		err = f()
	}
	g.mu.Unlock()
	if err != nil {
		g.inst.refuse(call, err)
		return false
	}
	return true
}
