package phone

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/lab/engine"
)

// CheckResult is one progress check.
type CheckResult struct {
	Asked    float64 // person-seconds from the turn's start
	Answered float64 // when it answered or gave up
	OK       bool
	Status   int  // the HTTP status (0: no answer)
	TimedOut bool // no answer within the check's timeout
	Err      string
	// Line is the status line shown after this check (a pippa.link.status value).
	Line string
}

// checkTimeout is the progress check's timeout (person-time).
func (p *Phone) checkTimeout() time.Duration {
	if pol, ok := p.lanes.Policy(lanes.KindCheck); ok {
		return pol.Timeout
	}
	return lanes.DefaultCheckTimeout
}

// runChecks asks the engine whether the turn is alive, resting CheckEvery
// after each answer or timeout, until ctx ends.
func (p *Phone) runChecks(ctx context.Context, clk clock, turnID string) []CheckResult {
	var out []CheckResult
	for ctx.Err() == nil {
		r := CheckResult{Asked: clk.now()}
		status, err := p.call(ctx, http.MethodGet, engine.PathProgress+"?turn="+turnID, nil, lanes.KindCheck, nil)
		if ctx.Err() != nil {
			break // the turn ended while the check was out: not a miss
		}
		r.Answered, r.Status, r.OK = clk.now(), status, err == nil
		if err != nil {
			r.Err = err.Error()
			r.TimedOut = errors.Is(err, lanes.ErrTimeout)
		}
		r.Line = p.observe(ctx, r).Status
		out = append(out, r)
		if clk.sleepUntil(ctx, r.Answered+p.cfg.CheckEvery) != nil {
			break
		}
	}
	return out
}
