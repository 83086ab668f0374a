package simulation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// recover ends a schedule as its senders and a working disk would: the
// faults stop, every request not acknowledged (spans or lines) is sent
// again until it is, time passes until the lines connector holds nothing
// and every turn held is decided, and the collector stops and starts once
// more. Then the invariants are checked.
func (s *schedule) recover(ctx context.Context) error {
	s.event("recovery: the faults stop; every request not acknowledged is sent again")
	s.w.fs.stopFaults()
	if n := s.p.lateDeath; n > 0 {
		s.w.fs.killAt(n - 1)
	}
	s.w.refuse.mu.Lock()
	s.w.refuse.next = 0
	s.w.refuse.mu.Unlock()
	// A fault from before the recovery may still end the process during
	// it: Pebble reports a background write that failed (a flush's
	// manifest that found the disk full) later, by a fatal error on its
	// own goroutine. The process is then started again, on a disk that
	// works, and the recovery starts over.
	for deaths := 0; ; deaths++ {
		err := s.settle(ctx)
		if !errors.Is(err, errNoAnswer) {
			if err != nil {
				return err
			}
			break
		}
		s.event("recovery: the process died (%d)", deaths+1)
		if deaths == maxRecoveryDeaths {
			return fmt.Errorf("with no fault left, the process died %d times in the recovery", deaths+1)
		}
	}
	if err := s.restart(ctx); err != nil {
		return err
	}
	s.c.proc.Sweep(ctx)
	if held := s.c.proc.Held(); held != 0 {
		return fmt.Errorf("after the recovery the processor still holds %d traces", held)
	}
	if err := s.c.stop(ctx); err != nil {
		return fmt.Errorf("the last stop: %w", err)
	}
	s.c = nil
	return s.check()
}

// maxRecoveryDeaths bounds the deaths a recovery sees: only what a fault
// left running in the process that entered it can end a process then, so
// a recovery that keeps dying fails instead of running on.
const maxRecoveryDeaths = 3

// settle sends every request not acknowledged until it is, then lets time
// pass until the lines connector holds nothing. It returns errNoAnswer
// when the process dies meanwhile, after starting another.
func (s *schedule) settle(ctx context.Context) error {
	if s.w.fs.dead() {
		if err := s.restartAfterDeath(ctx); err != nil {
			return err
		}
	}
	s.active = len(s.turns)
	// Each call goes through alive: one into a process that died may
	// never return (see within).
	lines, proc, store := s.c.lines, s.c.proc, s.c.store
	sweep := func() { lines.Sweep(ctx); proc.Sweep(ctx) }
	flush := func() { _, _ = store.Get(ctx, "flush") }
	for round := 0; ; round++ {
		left := 0
		for _, r := range s.reqs {
			if r.acked {
				continue
			}
			left++
			s.send(ctx, -1, r)
		}
		if s.w.fs.dead() {
			return s.diedInRecovery(ctx)
		}
		if left == 0 {
			break
		}
		// A verdict refused is sent again after a backoff of up to 5 s; at
		// max_pending, new traces wait for it.
		if round == 100 {
			return fmt.Errorf("with no fault left, requests are still refused after %d rounds of resends", round)
		}
		s.w.now = s.w.now.Add(time.Second)
		if err := s.alive(ctx, sweep, flush); err != nil {
			return err
		}
	}
	for t := time.Duration(0); t < maxAge+2*waitFor; t += waitFor {
		s.w.now = s.w.now.Add(waitFor)
		if err := s.alive(ctx, sweep); err != nil {
			return err
		}
	}
	held := 0
	if err := s.alive(ctx, flush, func() { held = lines.Held() }); err != nil {
		return err
	}
	if held != 0 {
		return fmt.Errorf("after the recovery the lines connector still holds %d lines", held)
	}
	return nil
}

// alive makes calls into the collector in the recovery, one after
// another, and returns errNoAnswer (once another process started) when
// the process died meanwhile.
func (s *schedule) alive(ctx context.Context, calls ...func()) error {
	for _, call := range calls {
		_ = s.within(func() error { call(); return nil })
		if s.w.fs.dead() {
			return s.diedInRecovery(ctx)
		}
	}
	return nil
}

// diedInRecovery starts another process after one died in the recovery,
// and returns errNoAnswer for the recovery to start over.
func (s *schedule) diedInRecovery(ctx context.Context) error {
	if err := s.restartAfterDeath(ctx); err != nil {
		return err
	}
	return errNoAnswer
}

// written is what the verdict file holds of one trace.
type written struct {
	verdicts int
	cause    string
	forced   string
}

// check holds the invariants over what the schedule left.
func (s *schedule) check() error {
	file, err := s.w.fs.ReadFile(verdictFile())
	if err != nil {
		return fmt.Errorf("reading the verdict file: %w", err)
	}
	got, err := readVerdicts(file)
	if err != nil {
		return err
	}
	var problems []string
	distinct := 0
	for i, t := range s.turns {
		trace := s.traceOf(i)
		w := got[trace]
		delete(got, trace)
		if w.verdicts > 0 {
			distinct++
		}
		sent := ""
		if lt := s.lines[i]; lt != nil {
			sent = fmt.Sprintf(" (sent as lines, the turn's trace ID %s, the takes' %s)", traceWhere[lt.turnAt], traceWhere[lt.takesAt])
		}
		switch {
		case w.verdicts > 1:
			problems = append(problems, fmt.Sprintf("turn %d%s has %d verdicts in the verdict file", i, sent, w.verdicts))
		case w.verdicts == 0 && !s.lossy:
			problems = append(problems, fmt.Sprintf("turn %d%s was acknowledged and has no verdict", i, sent))
		case w.verdicts == 1 && w.forced == "" && w.cause != t.Cause:
			problems = append(problems, fmt.Sprintf("turn %d%s (launch %d, turn %d of it) was decided %s, built to be %s", i, sent, t.Launch, t.Index, w.cause, t.Cause))
		}
	}
	for id, w := range got {
		problems = append(problems, fmt.Sprintf("a verdict for trace %s no turn has (%d)", id, w.verdicts))
	}
	// A count lives in the metrics pipeline's memory until it is scraped:
	// one handed on by a process that dies is lost with it, as every
	// increment not yet scraped is, and so is one whose commit the death
	// interrupted (its IDs may have landed, remembered as counted). So
	// with a death only so many may be missing: one cycle's verdicts at
	// most a death. Without one, every verdict is counted, exactly.
	counted := int64(s.w.counts.Load())
	deaths := s.crashes + s.powerLosses
	perCycle := 2*s.p.MaxPending + 2
	switch {
	case s.lossy:
		// Without fsync a power loss takes what was not yet on the disk:
		// verdict lines, stored turns, counted IDs whose counts were
		// handed on (counted again when decided again).
	case counted > int64(distinct):
		problems = append(problems, fmt.Sprintf("%d turns counted, %d verdicts: counted twice", counted, distinct))
	case deaths == 0 && counted < int64(distinct):
		problems = append(problems, fmt.Sprintf("%d turns counted, %d verdicts, and no process died: verdicts never counted", counted, distinct))
	case int64(distinct)-counted > int64(deaths*perCycle):
		problems = append(problems, fmt.Sprintf("%d turns counted, %d verdicts: more missing than %d deaths can lose", counted, distinct, deaths))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// readVerdicts reads the verdict file's lines, each an OTLP/JSON batch,
// for the verdict spans of every trace.
func readVerdicts(file []byte) (map[pcommon.TraceID]written, error) {
	out := map[pcommon.TraceID]written{}
	var un ptrace.JSONUnmarshaler
	for n, line := range bytes.Split(file, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		td, err := un.UnmarshalTraces(line)
		if err != nil {
			return nil, fmt.Errorf("the verdict file's line %d does not read: %w", n+1, err)
		}
		for _, sp := range verdict.Spans(td) {
			if sp.Name() != semconv.SpanVerdict {
				continue
			}
			w := out[sp.TraceID()]
			w.verdicts++
			if v, ok := sp.Attributes().Get(semconv.VerdictCause); ok {
				w.cause = v.Str()
			}
			if v, ok := sp.Attributes().Get(semconv.VerdictForced); ok {
				w.forced = v.Str()
			}
			out[sp.TraceID()] = w
		}
	}
	return out, nil
}
