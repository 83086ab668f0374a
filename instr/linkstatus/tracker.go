package linkstatus

import (
	"sync"
	"time"
)

// Tracker is the state that feeds the Reconnecting verdict: the check's
// failures in a row, since when it has been failing, and when the engine was
// last heard from. It is safe for concurrent use.
type Tracker struct {
	cfg config

	mu           sync.Mutex
	start        time.Time
	failures     int
	failingSince time.Time
	lastHeard    time.Time
}

// NewTracker starts tracking at the clock's now (nothing heard before it).
func NewTracker(opts ...Option) (*Tracker, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Tracker{cfg: cfg, start: cfg.now()}, nil
}

// Failed records a failed check (its timeout or error) at at.
func (t *Tracker) Failed(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failures == 0 {
		t.failingSince = at
	}
	t.failures++
}

// Answered records an answered check at at: the failures start over and the
// answer is hearing from the engine.
func (t *Tracker) Answered(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = 0
	if at.After(t.lastHeard) {
		t.lastHeard = at
	}
}

// Heard records hearing from the engine at at (streamed words, any answer).
func (t *Tracker) Heard(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at.After(t.lastHeard) {
		t.lastHeard = at
	}
}

// Readings returns what the verdict reads at now, in person-time.
func (t *Tracker) Readings(now time.Time) Readings {
	t.mu.Lock()
	defer t.mu.Unlock()
	heard := t.start
	if t.lastHeard.After(heard) {
		heard = t.lastHeard
	}
	if t.cfg.heard != nil {
		if h := t.cfg.heard(); h.After(heard) {
			heard = h
		}
	}
	r := Readings{Check: t.cfg.check, Failures: t.failures, QuietFor: t.cfg.person(max(now.Sub(heard), 0))}
	if t.failures > 0 {
		r.FailingFor = t.cfg.person(max(now.Sub(t.failingSince), 0))
	}
	return r
}

// Verdict applies the Reconnecting rule at now.
func (t *Tracker) Verdict(now time.Time) Verdict {
	return Reconnecting(t.Readings(now), t.cfg.th)
}
