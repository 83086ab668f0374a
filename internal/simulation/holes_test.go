package simulation

import (
	"context"
	"testing"
)

// scripted is a schedule a test drives step by step, on a disk that
// works until the test says otherwise.
func scripted(t *testing.T, p Params) *schedule {
	t.Helper()
	p.Seed = 7
	if p.CompactAfter == 0 {
		p.CompactAfter = 1 << 20
	}
	s := newSchedule(p)
	s.active = len(s.turns)
	if err := s.startAgain(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.c != nil {
			_ = s.c.stop(context.Background())
		}
	})
	return s
}

// sendNow sends turn i's phone or engine request, records its answer and
// commits what is staged, as a step does.
func (s *schedule) sendNow(t *testing.T, i int, engine bool) error {
	t.Helper()
	r := s.reqs[2*i]
	if engine {
		r = s.reqs[2*i+1]
	}
	r.tries++
	err := s.c.proc.ConsumeTraces(context.Background(), s.body(r))
	s.answered(0, r, err)
	if err := s.afterStep(context.Background()); err != nil {
		t.Fatal(err)
	}
	return err
}

// TestFailedCommitRefusesTheRequest: the request that completes a turn
// decides it, its verdict is accepted downstream (the verdict file
// written, the count connector's IDs staged), and the commit that would
// store all of it fails (the disk is full). The request must be refused:
// answered 200, its sender would never send it again, and the count, never
// made, would be lost.
func TestFailedCommitRefusesTheRequest(t *testing.T) {
	s := scripted(t, Params{Turns: 1, Installations: 1, MaxPending: 8})
	if err := s.sendNow(t, 0, true); err != nil {
		t.Fatalf("the engine's half: %v", err)
	}
	// The verdict file's line goes in (the file system's next call), the
	// shared log's commit after it finds the disk full.
	fs := s.w.fs
	fs.faults.full = append(fs.faults.full, [2]int{fs.ops + 1, fs.ops + 1000})
	err := s.sendNow(t, 0, false)
	if refused := fs.ops > fs.faults.full[0][0]; !refused {
		t.Fatal("the full disk refused nothing: the test proves nothing")
	}
	if file, _ := fs.ReadFile(verdictFile()); len(file) == 0 {
		t.Fatal("the verdict file holds nothing: the commit, not the file, was to fail")
	}
	if err == nil {
		t.Error("the deciding request was answered 200 although the commit of its verdict's count failed")
	}
	if err := s.recover(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedEvictionKeepsTheTurn: at max_pending a held, acknowledged
// turn is evicted and decided (forced: pending_limit) while the downstream
// refuses. Refused once, it must stay stored and be decided again, not be
// let go: its sender was answered 200 long ago.
func TestRefusedEvictionKeepsTheTurn(t *testing.T) {
	s := scripted(t, Params{Turns: 3, Installations: 3, MaxPending: 2})
	for i := range 2 {
		if err := s.sendNow(t, i, false); err != nil {
			t.Fatalf("turn %d's phone half: %v", i, err)
		}
	}
	s.w.refuse.next = 1
	if err := s.sendNow(t, 2, false); err == nil {
		t.Error("the request whose eviction's verdict was refused was answered 200")
	}
	if s.w.refuse.seen != 1 {
		t.Fatalf("the downstream refused %d deliveries, want 1: the test proves nothing", s.w.refuse.seen)
	}
	if err := s.recover(context.Background()); err != nil {
		t.Fatal(err)
	}
}
