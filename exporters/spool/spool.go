package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Defaults.
const (
	// DefaultLimit bounds the spool's bytes on disk (a day offline of a
	// phone's turns fits many times over).
	DefaultLimit int64 = 64 << 20
	// DefaultNearFull is the fraction of the limit from which the spool sends
	// even while the app reports its voice lane busy.
	DefaultNearFull = 0.8
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait after a failed
	// send; it doubles per failure in between.
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// DefaultBusyPoll is how often a deferred spool asks again whether the
	// voice lane is still busy.
	DefaultBusyPoll = 200 * time.Millisecond
	// DefaultSendTimeout bounds one send.
	DefaultSendTimeout = 15 * time.Second
)

// Sender delivers one payload of kind. A nil error means the collector
// accepted it and the file may go. An error with a Permanent() bool method
// returning true means retrying cannot help: the batch is dropped (counted as
// rejected). An error with RetryAfter() time.Duration sets the next wait.
type Sender func(ctx context.Context, kind string, payload []byte) error

// Errors.
var (
	ErrClosed   = errors.New("spool: closed")
	ErrTooLarge = errors.New("spool: batch larger than the spool limit")
	ErrBadKind  = errors.New("spool: kind must be 1-32 of [a-z0-9_]")
	ErrInUse    = errors.New("spool: folder in use by another spool")
)

// testHookBeforeWrite, when set by a test, runs in Put between its closed
// check and its write.
var testHookBeforeWrite func()

// lockName is the lock file inside the spool folder.
const lockName = ".lock"

// Stats is the spool's self-telemetry. Counts are since Open, except Queued
// and QueuedBytes which are what is on disk now (including what a previous
// launch left).
type Stats struct {
	Queued      int    // batches on disk, not yet accepted
	QueuedBytes int64  // their size on disk
	Spooled     uint64 // batches written by Put
	Sent        uint64 // batches the collector accepted
	Dropped     uint64 // batches dropped by the size bound (oldest first)
	Torn        uint64 // files skipped as torn or corrupt
	Rejected    uint64 // batches the collector refused permanently
	Failures    uint64 // failed send attempts (retried later)
	Deferred    uint64 // times sending waited because the voice lane was busy
	Superseded  uint64 // batches replaced by a newer one of a latest-only kind (not lost data)
}

type entry struct {
	seq        uint64
	kind       string
	name       string
	size       int64
	inFly      bool
	thisLaunch bool // written by this Spool (this launch), not left by an earlier one
}

// Spool is a bounded disk spool with a sending goroutine.
type Spool struct {
	dir  string
	send Sender
	cfg  config

	putMu   sync.Mutex     // serialises writers so sequence numbers follow file order
	writers sync.WaitGroup // Puts past their closed check, still writing

	mu       sync.Mutex
	entries  []*entry // oldest first
	bytes    int64
	nextSeq  uint64
	stats    Stats
	flushing int
	closed   bool
	changed  chan struct{} // closed and replaced whenever entries change

	lock   *os.File
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

type config struct {
	limit       int64
	nearFull    float64
	busy        func() bool
	logger      *slog.Logger
	minBackoff  time.Duration
	maxBackoff  time.Duration
	busyPoll    time.Duration
	sendTimeout time.Duration
	latestOnly  map[string]bool
}

// Option configures a Spool.
type Option func(*config)

// WithLimit bounds the bytes on disk (default DefaultLimit).
func WithLimit(bytes int64) Option { return func(c *config) { c.limit = bytes } }

// WithNearFull sets the fraction of the limit from which sending ignores the
// busy signal (default DefaultNearFull).
func WithNearFull(fraction float64) Option { return func(c *config) { c.nearFull = fraction } }

// WithBusy defers sending while busy reports true (the voice lane is
// streaming), unless the spool is near full.
func WithBusy(busy func() bool) Option { return func(c *config) { c.busy = busy } }

// WithLogger sets where the spool logs drops, torn files and failures.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithBackoff sets the wait after a failed send: min, doubling up to max.
func WithBackoff(min, max time.Duration) Option {
	return func(c *config) { c.minBackoff, c.maxBackoff = min, max }
}

// WithBusyPoll sets how often a deferred spool rechecks the busy signal.
func WithBusyPoll(d time.Duration) Option { return func(c *config) { c.busyPoll = d } }

// WithLatestOnly makes each new batch of kind replace the unsent batches of
// that kind written by this Spool (batches an earlier launch left are kept).
// It is for cumulative metrics: the newest collection holds every count
// since the launch, so while offline the spool keeps one of them instead of
// one per interval, and turns keep the room. Replaced batches are counted as
// superseded, not dropped.
func WithLatestOnly(kind string) Option {
	return func(c *config) {
		if c.latestOnly == nil {
			c.latestOnly = map[string]bool{}
		}
		c.latestOnly[kind] = true
	}
}

// WithSendTimeout bounds one send (default DefaultSendTimeout).
func WithSendTimeout(d time.Duration) Option { return func(c *config) { c.sendTimeout = d } }

func (c *config) validate() error {
	switch {
	case c.limit <= headerSize:
		return fmt.Errorf("spool: limit %d bytes is too small", c.limit)
	case !(c.nearFull > 0 && c.nearFull <= 1):
		return fmt.Errorf("spool: near-full fraction %v must be in (0, 1]", c.nearFull)
	case c.minBackoff <= 0 || c.maxBackoff < c.minBackoff:
		return fmt.Errorf("spool: backoff %v..%v must be positive and ordered", c.minBackoff, c.maxBackoff)
	case c.busyPoll <= 0:
		return fmt.Errorf("spool: busy poll %v must be positive", c.busyPoll)
	case c.sendTimeout <= 0:
		return fmt.Errorf("spool: send timeout %v must be positive", c.sendTimeout)
	}
	return nil
}

// Open opens (creating it if needed) the spool in dir, removes torn temporary
// files a crash left behind, and starts sending what is queued with send.
func Open(dir string, send Sender, opts ...Option) (*Spool, error) {
	cfg := config{
		limit: DefaultLimit, nearFull: DefaultNearFull,
		minBackoff: DefaultMinBackoff, maxBackoff: DefaultMaxBackoff,
		busyPoll: DefaultBusyPoll, sendTimeout: DefaultSendTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if dir == "" {
		return nil, errors.New("spool: no folder given")
	}
	if send == nil {
		return nil, errors.New("spool: no sender given")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Spool{dir: dir, send: send, cfg: cfg, nextSeq: 1, lock: lock,
		changed: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	if err := s.load(); err != nil {
		unlockDir(lock)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(ctx)
	return s, nil
}

// load indexes the files a previous launch left.
func (s *Spool) load() error {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, tmpPrefix) {
			// A write that never reached its rename: the process died mid-batch.
			s.stats.Torn++
			s.cfg.logger.Warn("spool: removing torn write left by a crash", "file", name)
			_ = os.Remove(filepath.Join(s.dir, name))
			continue
		}
		seq, kind, ok := parseName(name)
		if !ok || !de.Type().IsRegular() {
			continue // not ours: leave it alone
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		s.entries = append(s.entries, &entry{seq: seq, kind: kind, name: name, size: info.Size()})
		s.bytes += info.Size()
		if seq >= s.nextSeq {
			s.nextSeq = seq + 1
		}
	}
	sort.Slice(s.entries, func(i, j int) bool { return s.entries[i].seq < s.entries[j].seq })
	if n := len(s.entries); n > 0 {
		s.cfg.logger.Info("spool: resending batches left by an earlier launch", "batches", n, "bytes", s.bytes)
	}
	s.mu.Lock()
	s.enforceLimitLocked()
	s.mu.Unlock()
	return nil
}

// Dir is the spool's folder.
func (s *Spool) Dir() string { return s.dir }

// Put writes one batch durably and returns once it is on disk; sending
// happens later on the spool's own goroutine. If the spool would exceed its
// limit, the oldest batches (never one being sent) are dropped and counted.
func (s *Spool) Put(kind string, payload []byte) error {
	if !validKind(kind) {
		return ErrBadKind
	}
	size := int64(headerSize + len(payload))
	s.putMu.Lock()
	defer s.putMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	// Counted as a writer from the closed check to the end of the write:
	// Close waits for the writers before it gives up the folder's lock.
	s.writers.Add(1)
	defer s.writers.Done()
	if size > s.cfg.limit {
		s.stats.Dropped++
		s.mu.Unlock()
		s.cfg.logger.Warn("spool: dropped a batch larger than the whole spool", "bytes", size, "limit", s.cfg.limit)
		return fmt.Errorf("%w: %d > %d bytes", ErrTooLarge, size, s.cfg.limit)
	}
	seq := s.nextSeq
	s.nextSeq++
	s.mu.Unlock()
	if testHookBeforeWrite != nil {
		testHookBeforeWrite()
	}
	name := fileName(seq, kind)
	if err := writeDurable(s.dir, name, encodeHeader(payload), payload); err != nil {
		return fmt.Errorf("spool: write %s: %w", name, err)
	}
	s.mu.Lock()
	if s.cfg.latestOnly[kind] {
		s.supersedeLocked(kind)
	}
	s.entries = append(s.entries, &entry{seq: seq, kind: kind, name: name, size: size, thisLaunch: true})
	s.bytes += size
	s.stats.Spooled++
	s.enforceLimitLocked()
	s.notifyLocked()
	s.mu.Unlock()
	s.poke()
	return nil
}

// supersedeLocked removes this launch's unsent batches of kind (never one
// being sent).
func (s *Spool) supersedeLocked(kind string) {
	kept := s.entries[:0]
	for _, e := range s.entries {
		if e.thisLaunch && e.kind == kind && !e.inFly {
			_ = os.Remove(filepath.Join(s.dir, e.name))
			s.bytes -= e.size
			s.stats.Superseded++
			continue
		}
		kept = append(kept, e)
	}
	for i := len(kept); i < len(s.entries); i++ {
		s.entries[i] = nil
	}
	s.entries = kept
}

// enforceLimitLocked drops the oldest batches not in flight until the spool
// fits its limit.
func (s *Spool) enforceLimitLocked() {
	dropped := 0
	var freed int64
	for s.bytes > s.cfg.limit {
		i := -1
		for j, e := range s.entries {
			if !e.inFly {
				i = j
				break
			}
		}
		if i < 0 {
			break
		}
		e := s.entries[i]
		_ = os.Remove(filepath.Join(s.dir, e.name))
		s.removeLocked(i)
		dropped++
		freed += e.size
	}
	if dropped > 0 {
		s.stats.Dropped += uint64(dropped)
		s.cfg.logger.Warn("spool: full, dropped the oldest batches", "dropped", dropped, "bytes", freed,
			"dropped_total", s.stats.Dropped, "limit", s.cfg.limit)
	}
}

func (s *Spool) removeLocked(i int) {
	s.bytes -= s.entries[i].size
	copy(s.entries[i:], s.entries[i+1:])
	s.entries[len(s.entries)-1] = nil
	s.entries = s.entries[:len(s.entries)-1]
}

// notifyLocked wakes everyone waiting for the queue to change.
func (s *Spool) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Spool) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Stats returns the spool's counts.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Queued = len(s.entries)
	st.QueuedBytes = s.bytes
	return st
}

// Limit is the spool's bound in bytes.
func (s *Spool) Limit() int64 { return s.cfg.limit }

// Flush sends everything queued now, ignoring the busy signal, and returns
// once the spool is empty, or with an error naming what is left when ctx ends
// first.
func (s *Spool) Flush(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.flushing++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.flushing--
		s.mu.Unlock()
	}()
	s.poke()
	for {
		s.mu.Lock()
		n, ch := len(s.entries), s.changed
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("spool: %d batches still queued: %w", n, ctx.Err())
		}
	}
}

// Close stops sending. Batches not yet accepted stay on disk for the next
// Open. An in-flight send is cancelled.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	// A Put that passed its closed check finishes its write first.
	s.writers.Wait()
	s.cancel()
	<-s.done
	unlockDir(s.lock)
	return nil
}

// next returns the oldest batch and marks it in flight.
func (s *Spool) next() *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) == 0 {
		return nil
	}
	e := s.entries[0]
	e.inFly = true
	return e
}

func (s *Spool) shouldDefer() bool {
	if s.cfg.busy == nil {
		return false
	}
	s.mu.Lock()
	flushing := s.flushing > 0
	nearFull := float64(s.bytes) >= s.cfg.nearFull*float64(s.cfg.limit)
	s.mu.Unlock()
	if flushing || nearFull {
		return false
	}
	return s.cfg.busy()
}

// finish removes e's file and its index entry after a final outcome and
// counts it (count may be nil: the file was already gone).
func (s *Spool) finish(e *entry, count *uint64) {
	_ = os.Remove(filepath.Join(s.dir, e.name))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.entries {
		if x == e {
			s.removeLocked(i)
			break
		}
	}
	if count != nil {
		*count++
	}
	s.notifyLocked()
}

func (s *Spool) release(e *entry) {
	s.mu.Lock()
	e.inFly = false
	s.mu.Unlock()
}

func (s *Spool) run(ctx context.Context) {
	defer close(s.done)
	backoff := s.cfg.minBackoff
	// wait sleeps for d or until ctx ends; a new batch (Put's poke) ends it
	// early only when retrying is not what it waits for. After a failed
	// send only Flush does: a collector that is down is retried on the
	// backoff however often the app records, so a phone offline for a day
	// does not spend its battery and data on a retry per turn.
	wait := func(d time.Duration, retrying bool) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return false
			case <-s.wake:
				if !retrying {
					return true
				}
				s.mu.Lock()
				flushing := s.flushing > 0
				s.mu.Unlock()
				if flushing {
					return true
				}
			case <-t.C:
				return true
			}
		}
	}
	for {
		if ctx.Err() != nil {
			return
		}
		e := s.next()
		if e == nil {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			continue
		}
		if s.shouldDefer() {
			s.release(e)
			s.mu.Lock()
			s.stats.Deferred++
			s.mu.Unlock()
			if !wait(s.cfg.busyPoll, false) {
				return
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.dir, e.name))
		var payload []byte
		if err == nil {
			payload, err = decode(b)
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				s.finish(e, nil) // removed by hand meanwhile
				continue
			}
			s.cfg.logger.Warn("spool: skipping a torn or corrupt batch", "file", e.name, "reason", err.Error())
			s.finish(e, &s.stats.Torn)
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, s.cfg.sendTimeout)
		err = s.send(sctx, e.kind, payload)
		cancel()
		switch {
		case err == nil:
			s.finish(e, &s.stats.Sent)
			backoff = s.cfg.minBackoff
		case isPermanent(err):
			s.cfg.logger.Warn("spool: collector refused a batch; dropping it", "file", e.name, "reason", err.Error())
			s.finish(e, &s.stats.Rejected)
		default:
			s.release(e)
			s.mu.Lock()
			s.stats.Failures++
			flushing := s.flushing > 0
			s.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			s.cfg.logger.Debug("spool: send failed; will retry", "file", e.name, "reason", err.Error(), "wait", backoff)
			d := backoff
			if ra := retryAfter(err); ra > d {
				d = min(ra, s.cfg.maxBackoff)
			}
			if flushing {
				d = s.cfg.minBackoff
			}
			backoff = min(backoff*2, s.cfg.maxBackoff)
			if !wait(d, true) {
				return
			}
		}
	}
}

func isPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

func retryAfter(err error) time.Duration {
	var r interface{ RetryAfter() time.Duration }
	if errors.As(err, &r) {
		return r.RetryAfter()
	}
	return 0
}
