package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// collector records what a sender delivered; down makes it fail like an
// unreachable collector.
type collector struct {
	mu   sync.Mutex
	got  []string
	down atomic.Bool
}

func (c *collector) send(_ context.Context, kind string, payload []byte) error {
	if c.down.Load() {
		return errors.New("connection refused")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, kind+":"+string(payload))
	return nil
}

func (c *collector) delivered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

func fastOpts(extra ...Option) []Option {
	return append([]Option{WithBackoff(5*time.Millisecond, 20*time.Millisecond), WithBusyPoll(5 * time.Millisecond)}, extra...)
}

func flush(t *testing.T, s *Spool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestDeliversInOrderAndRemovesAfterAccept(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	s, err := Open(dir, c.send, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 5 {
		if err := s.Put("traces", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, s)
	if got, want := strings.Join(c.delivered(), " "), "traces:0 traces:1 traces:2 traces:3 traces:4"; got != want {
		t.Errorf("delivered %q, want %q", got, want)
	}
	if st := s.Stats(); st.Sent != 5 || st.Queued != 0 || st.QueuedBytes != 0 {
		t.Errorf("stats %+v", st)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.batch")); len(files) != 0 {
		t.Errorf("%d files left after every batch was accepted", len(files))
	}
}

func TestKeepsBatchesWhileCollectorDownAndResendsOnReopen(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	c.down.Store(true)
	s, err := Open(dir, c.send, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Put("metrics", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err = s.Flush(ctx)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "3 batches still queued") {
		t.Fatalf("flush with the collector down: %v, want 3 batches still queued", err)
	}
	if st := s.Stats(); st.Failures == 0 || st.Queued != 3 {
		t.Errorf("stats %+v, want failures and 3 queued", st)
	}
	s.Close()

	c.down.Store(false)
	s2, err := Open(dir, c.send, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	flush(t, s2)
	if got := strings.Join(c.delivered(), " "); got != "metrics:0 metrics:1 metrics:2" {
		t.Errorf("after reopen delivered %q", got)
	}
	// New batches continue the sequence after what was left.
	if err := s2.Put("metrics", []byte("3")); err != nil {
		t.Fatal(err)
	}
	flush(t, s2)
	if got := c.delivered(); got[len(got)-1] != "metrics:3" {
		t.Errorf("last delivered %q", got[len(got)-1])
	}
}

func TestTornFilesAreSkippedWithAReason(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	c.down.Store(true)
	s, err := Open(dir, c.send, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Put("traces", []byte(fmt.Sprintf("batch-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.batch"))
	if len(files) != 3 {
		t.Fatalf("%d batch files, want 3", len(files))
	}
	// A torn tail on the middle batch, a flipped byte in the last, and a
	// temporary file a crash left mid-write.
	b, _ := os.ReadFile(files[1])
	if err := os.WriteFile(files[1], b[:len(b)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(files[2])
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(files[2], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tmpPrefix+"123"), []byte("PCS1\x00"), 0o600); err != nil {
		t.Fatal(err)
	}

	var log bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &log, mu: &mu}, nil))
	c.down.Store(false)
	s2, err := Open(dir, c.send, fastOpts(WithLogger(logger))...)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	flush(t, s2)
	if got := strings.Join(c.delivered(), " "); got != "traces:batch-0" {
		t.Errorf("delivered %q, want only the intact batch", got)
	}
	st := s2.Stats()
	if st.Torn != 3 || st.Sent != 1 {
		t.Errorf("stats %+v, want 3 torn (two corrupt, one temporary) and 1 sent", st)
	}
	mu.Lock()
	out := log.String()
	mu.Unlock()
	for _, want := range []string{"header says 7 payload bytes, file has 4", "checksum mismatch", "torn write left by a crash"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.batch")); len(files) != 0 {
		t.Errorf("%d files left", len(files))
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestFullSpoolDropsOldestFirstAndCounts(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	c.down.Store(true)
	payload := func(i int) []byte { return []byte(fmt.Sprintf("%04d", i)) } // 4 bytes + 12 header = 16 on disk
	var log bytes.Buffer
	var mu sync.Mutex
	s, err := Open(dir, c.send, fastOpts(WithLimit(5*16), WithLogger(slog.New(slog.NewTextHandler(&lockedWriter{&log, &mu}, nil))))...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 12 {
		if err := s.Put("traces", payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	// One batch may be in flight (held back from dropping), so 5 or 6 stay.
	if st.Dropped+uint64(st.Queued) != 12 || st.Queued < 5 || st.QueuedBytes > 6*16 {
		t.Fatalf("stats %+v: want 12 = dropped + queued, at most the limit (plus one in flight) kept", st)
	}
	c.down.Store(false)
	flush(t, s)
	got := c.delivered()
	// The newest five always survive, in order.
	tail := strings.Join(got[len(got)-5:], " ")
	if tail != "traces:0007 traces:0008 traces:0009 traces:0010 traces:0011" {
		t.Errorf("delivered %v, want the newest five last", got)
	}
	if big := s.Put("traces", make([]byte, 100)); !errors.Is(big, ErrTooLarge) {
		t.Errorf("oversized batch: %v, want ErrTooLarge", big)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(log.String(), "dropped the oldest batches") {
		t.Errorf("no drop logged:\n%s", log.String())
	}
}

func TestBusyDefersUnlessNearFull(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	var busy atomic.Bool
	busy.Store(true)
	s, err := Open(dir, c.send, fastOpts(WithBusy(busy.Load), WithLimit(10*16), WithNearFull(0.5))...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 {
		_ = s.Put("traces", []byte(fmt.Sprintf("%04d", i)))
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(c.delivered()); n != 0 {
		t.Fatalf("%d batches sent while the voice lane was busy and the spool far from full", n)
	}
	if s.Stats().Deferred == 0 {
		t.Error("deferrals not counted")
	}
	// Near full (5 of 10 batches' bytes): sending goes ahead although busy.
	for i := 3; i < 6; i++ {
		_ = s.Put("traces", []byte(fmt.Sprintf("%04d", i)))
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(c.delivered()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(c.delivered()) == 0 {
		t.Fatal("a near-full spool still deferred to the busy lane")
	}
	busy.Store(false)
	flush(t, s)
	if n := len(c.delivered()); n != 6 {
		t.Errorf("delivered %d, want 6", n)
	}
}

type permanent struct{}

func (permanent) Error() string   { return "HTTP 400" }
func (permanent) Permanent() bool { return true }

func TestPermanentRefusalDropsAndCounts(t *testing.T) {
	s, err := Open(t.TempDir(), func(context.Context, string, []byte) error { return permanent{} }, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = s.Put("traces", []byte("x"))
	flush(t, s)
	if st := s.Stats(); st.Rejected != 1 || st.Queued != 0 {
		t.Errorf("stats %+v, want 1 rejected", st)
	}
}

func TestOpenValidates(t *testing.T) {
	send := func(context.Context, string, []byte) error { return nil }
	for name, tc := range map[string]struct {
		dir  string
		send Sender
		opts []Option
		want string
	}{
		"no dir":      {"", send, nil, "no folder"},
		"no sender":   {t.TempDir(), nil, nil, "no sender"},
		"tiny limit":  {t.TempDir(), send, []Option{WithLimit(3)}, "too small"},
		"near full":   {t.TempDir(), send, []Option{WithNearFull(1.5)}, "near-full"},
		"backoff":     {t.TempDir(), send, []Option{WithBackoff(time.Second, time.Millisecond)}, "backoff"},
		"send budget": {t.TempDir(), send, []Option{WithSendTimeout(0)}, "send timeout"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(tc.dir, tc.send, tc.opts...)
			if err == nil {
				s.Close()
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
	s, _ := Open(t.TempDir(), send)
	defer s.Close()
	if err := s.Put("Bad Kind", nil); !errors.Is(err, ErrBadKind) {
		t.Errorf("bad kind: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(append(encodeHeader([]byte("hello")), "hello"...))
	f.Add([]byte("PCS1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decode(b)
		if err == nil {
			// Whatever decodes re-encodes to the same bytes.
			if !bytes.Equal(append(encodeHeader(p), p...), b) {
				t.Fatalf("decode/encode round trip differs")
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
	})
}

func FuzzParseName(f *testing.F) {
	f.Add(fileName(42, "traces"))
	f.Add("00000000000000000001.x.batch")
	f.Fuzz(func(t *testing.T, name string) {
		seq, kind, ok := parseName(name)
		if ok && fileName(seq, kind) != name {
			t.Fatalf("%q parsed to %d %q", name, seq, kind)
		}
	})
}

func TestLatestOnlyKeepsTheNewestOfThisLaunch(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	c.down.Store(true)
	s, err := Open(dir, c.send, fastOpts(WithLatestOnly("metrics"))...)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Put("metrics", []byte("launch1-a"))
	_ = s.Put("traces", []byte("turn1"))
	_ = s.Put("metrics", []byte("launch1-b"))
	s.Close()
	// A relaunch keeps what the earlier launch left and supersedes only its own.
	s2, err := Open(dir, c.send, fastOpts(WithLatestOnly("metrics"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	_ = s2.Put("metrics", []byte("launch2-a"))
	_ = s2.Put("traces", []byte("turn2"))
	_ = s2.Put("metrics", []byte("launch2-b"))
	c.down.Store(false)
	flush(t, s2)
	got := strings.Join(c.delivered(), " ")
	// launch1-a may have been in flight (and so kept) when launch1-b came.
	got = strings.Replace(got, "metrics:launch1-a ", "", 1)
	if want := "traces:turn1 metrics:launch1-b traces:turn2 metrics:launch2-b"; got != want {
		t.Errorf("delivered %q, want %q", got, want)
	}
	if st := s2.Stats(); st.Superseded != 1 || st.Dropped != 0 {
		t.Errorf("stats %+v, want 1 superseded in this launch, none dropped", st)
	}
}

func TestOneSpoolPerFolder(t *testing.T) {
	dir := t.TempDir()
	send := func(context.Context, string, []byte) error { return nil }
	s, err := Open(dir, send)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, send); !errors.Is(err, ErrInUse) {
		t.Fatalf("second spool on the same folder: %v, want ErrInUse", err)
	}
	s.Close()
	s2, err := Open(dir, send)
	if err != nil {
		t.Fatalf("after Close the folder is free again: %v", err)
	}
	s2.Close()
}

// TestBackoffHoldsUnderFrequentPuts: while the collector is down, a Put
// every few milliseconds does not cut the retry wait short; attempts follow
// the backoff, doubling to its maximum, and Flush still sends at once.
func TestBackoffHoldsUnderFrequentPuts(t *testing.T) {
	const minB, maxB = 40 * time.Millisecond, 160 * time.Millisecond
	var mu sync.Mutex
	var attempts []time.Time
	down := atomic.Bool{}
	down.Store(true)
	send := func(context.Context, string, []byte) error {
		mu.Lock()
		attempts = append(attempts, time.Now())
		mu.Unlock()
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	}
	s, err := Open(t.TempDir(), send, WithBackoff(minB, maxB))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Put a batch every 2 ms until 8 attempts were made.
	for i := 0; ; i++ {
		if err := s.Put("traces", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := len(attempts)
		mu.Unlock()
		if n >= 8 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	mu.Lock()
	got := append([]time.Time(nil), attempts[:8]...)
	mu.Unlock()
	want := minB
	for i := 1; i < len(got); i++ {
		if gap := got[i].Sub(got[i-1]); gap < want {
			t.Errorf("attempt %d came %s after the one before; the backoff is %s (cut short by a Put)", i+1, gap, want)
		}
		want = min(want*2, maxB)
	}
	if st := s.Stats(); st.Failures < 7 {
		t.Errorf("stats count %d failures, want the %d attempts", st.Failures, len(got))
	}
	// Flush ends the backoff: once the collector is back, it sends now.
	down.Store(false)
	flush(t, s)
	if st := s.Stats(); st.Queued != 0 {
		t.Errorf("%d batches still queued after Flush", st.Queued)
	}
}

// TestPutRacingClose: a Put that passed its closed check finishes its write
// before Close returns, and no Put writes into the folder after it: every
// Put either returned ErrClosed or left its batch on disk for the next Open,
// and a spool opened after Close finds exactly those.
func TestPutRacingClose(t *testing.T) {
	for round := 0; round < 20; round++ {
		dir := t.TempDir()
		c := &collector{}
		c.down.Store(true)
		s, err := Open(dir, c.send, fastOpts()...)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var accepted atomic.Int64
		start := make(chan struct{})
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				<-start
				for i := 0; ; i++ {
					err := s.Put("traces", []byte(fmt.Sprintf("%d-%d", w, i)))
					if errors.Is(err, ErrClosed) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					accepted.Add(1)
				}
			}(w)
		}
		close(start)
		time.Sleep(time.Millisecond)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		after := batchFiles(t, dir)
		wg.Wait()
		if later := batchFiles(t, dir); later != after {
			t.Fatalf("round %d: %d batch files when Close returned, %d once the Puts ended: a Put wrote after Close", round, after, later)
		}
		if int64(after) != accepted.Load() {
			t.Fatalf("round %d: %d Puts accepted, %d batch files on disk", round, accepted.Load(), after)
		}
		s2, err := Open(dir, c.send, fastOpts()...)
		if err != nil {
			t.Fatalf("round %d: reopen after Close: %v", round, err)
		}
		if st := s2.Stats(); int64(st.Queued) != accepted.Load() {
			t.Errorf("round %d: reopened spool holds %d batches, %d were accepted", round, st.Queued, accepted.Load())
		}
		s2.Close()
	}
}

// TestCloseWaitsForAWritingPut: Close does not return while a Put that
// passed its closed check is still writing.
func TestCloseWaitsForAWritingPut(t *testing.T) {
	dir := t.TempDir()
	c := &collector{}
	c.down.Store(true)
	s, err := Open(dir, c.send, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	inPut, release := make(chan struct{}), make(chan struct{})
	testHookBeforeWrite = func() { close(inPut); <-release }
	defer func() { testHookBeforeWrite = nil }()
	putDone := make(chan error, 1)
	go func() { putDone <- s.Put("traces", []byte("late")) }()
	<-inPut
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a Put was between its closed check and its write")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-closed
	if err := <-putDone; err != nil {
		t.Fatalf("the Put that began before Close: %v", err)
	}
	if n := batchFiles(t, dir); n != 1 {
		t.Fatalf("%d batch files, want the Put's one", n)
	}
}

// batchFiles counts the spool's batch files in dir (not the lock file).
func batchFiles(t *testing.T, dir string) int {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, de := range des {
		if _, _, ok := parseName(de.Name()); ok {
			n++
		}
	}
	return n
}
