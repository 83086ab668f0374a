package linesconnector

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/exporters/textlines"
)

// Simulated is the connector as the fault simulation (internal/simulation)
// drives it: on the simulation's clock, with no sweep of its own. Each
// Sweep is the background sweep's, run when the simulation says; with
// deliveries handed in one at a time, what the connector does is the same
// for the same seed.
type Simulated struct {
	connector.Logs
	c *linesConnector
}

// NewSimulated makes the connector of cfg, sending on to next, reading the
// time from now.
func NewSimulated(set connector.Settings, cfg *Config, next consumer.Traces, now func() time.Time) (*Simulated, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("lines connector: %w", err)
	}
	c, err := newConnector(set, cfg, next, withClock(now))
	if err != nil {
		return nil, err
	}
	return &Simulated{Logs: c, c: c}, nil
}

// Sweep lets go the lines whose wait is over, as the background sweep
// would at this time, and returns once the next consumer answered.
func (s *Simulated) Sweep(ctx context.Context) { s.c.sweep(ctx) }

// Waiting is how many deliveries wait for another delivery still carrying
// some of their lines (MessageWaitsForDelivery): the simulation hands in a
// second delivery of the same logs and answers the first only once the
// second waits, or has returned.
//
// A delivery that holds the connector's lock answers 0: it may be one a
// death parked inside the store (a Pebble write calls Fatalf while the
// lock is held), and the simulation, polling, must still see the death.
func (s *Simulated) Waiting() int {
	if !s.c.mu.TryLock() {
		return 0
	}
	defer s.c.mu.Unlock()
	return s.c.waiting
}

// Held is how many lines the connector holds (turns waiting for their
// takes, takes waiting for their turn).
func (s *Simulated) Held() int {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.c.st.held
}

// TurnTrace is the trace the connector gives the turn of a [voice-turn]
// line read from a log record of resource that carries no trace ID: the
// line's own (trace=), else the one derived from the line (the same line
// read again gives the same), unless the turn joins a take line that
// carries one. ok is false for a line that is no turn line.
func TurnTrace(resource pcommon.Resource, text string) (trace pcommon.TraceID, ok bool) {
	text = strings.TrimRight(text, "\r\n")
	rec, err := textlines.Read(text)
	if err != nil || rec.Kind != textlines.KindTurn {
		return trace, false
	}
	if rec.TraceID != "" {
		return traceIDOf(rec.TraceID), true
	}
	return derivedTrace(&line{rec: rec, text: text, resource: resource}), true
}
