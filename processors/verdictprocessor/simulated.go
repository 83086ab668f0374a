package verdictprocessor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
)

// Simulated is the processor as the fault simulation (internal/simulation)
// drives it: on the simulation's clock, with no sweep of its own. Each
// Sweep is the background sweep's, run when the simulation says; together
// with requests sent one at a time, what the processor does is the same
// for the same seed.
type Simulated struct {
	processor.Traces
	p *verdictProcessor
}

// NewSimulated makes the processor of cfg, sending on to next, reading
// the time from now.
func NewSimulated(set processor.Settings, cfg *Config, next consumer.Traces, now func() time.Time) (*Simulated, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("verdict processor: %w", err)
	}
	p, err := newVerdictProcessor(set, cfg, next, withClock(now))
	if err != nil {
		return nil, err
	}
	p.simulated = true
	return &Simulated{Traces: p, p: p}, nil
}

// ConsumeTraces is the processor's, and returns once no cycle is left to
// run: nothing it started goes on behind the simulation's back.
func (s *Simulated) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	err := s.p.ConsumeTraces(ctx, td)
	s.idle(ctx)
	return err
}

// Sweep runs one sweep, as the background one would at this time, and
// returns once the verdicts it decided were answered and what changed was
// stored (or failed to be).
func (s *Simulated) Sweep(ctx context.Context) {
	s.p.sweep(ctx)
	s.idle(ctx)
}

// idle runs the gathering cycle, which stores whatever is marked (a
// failed commit's changes, a poke's), and waits for it.
func (s *Simulated) idle(ctx context.Context) {
	p := s.p
	p.mu.Lock()
	cy := p.cycles.cur
	p.mu.Unlock()
	_ = p.cycles.await(ctx, cy)
}

// Waiting is how many requests wait for the next cycle: the simulation
// hands in a second delivery and lets the first go on only once it waits.
func (s *Simulated) Waiting() int {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.p.cycles.cur.waiters
}

// Held is how many traces the processor holds in memory.
func (s *Simulated) Held() int {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.p.held.Len()
}
