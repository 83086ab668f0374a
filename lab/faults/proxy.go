package faults

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the proxy.
const (
	// DefaultAddr is where the proxy listens: loopback, a free port.
	DefaultAddr = "127.0.0.1:0"
	// DefaultTimeScale is person-seconds per wall second.
	DefaultTimeScale = 1.0
	// chunkSize is the least of one read under a bandwidth limit (one paced
	// write), so shaping is smooth at the lab's audio rates; a faster limit
	// reads about chunkWall of its bytes at once, so the pacing does not
	// hang on one timer per kilobyte (a 2 MB upload at 1.5 MB/s is 2,000
	// of them). bigChunk bounds a read either way.
	chunkSize = 1024
	bigChunk  = 32 << 10
	chunkWall = 5 * time.Millisecond
	// queueDepth is how many chunks may wait in one direction before the
	// proxy stops reading (TCP backpressure then reaches the sender).
	queueDepth = 64
)

// Shape is the link's steady character. Zero values mean no limit.
type Shape struct {
	// Bandwidth bounds the bytes per person-second from the engine to the
	// phone (the direction audio travels), shared by every connection as on
	// one link.
	Bandwidth float64
	// Uplink bounds the bytes per person-second from the phone to the
	// engine (uploads), shared likewise.
	Uplink float64
	// Latency delays every byte in each direction, in person-seconds.
	Latency float64
}

// Validate reports a shape that cannot be applied.
func (s Shape) Validate() error {
	switch {
	case math.IsNaN(s.Bandwidth) || math.IsInf(s.Bandwidth, 0) || s.Bandwidth < 0:
		return fmt.Errorf("faults: bandwidth must be finite and >= 0 bytes/s, got %v", s.Bandwidth)
	case math.IsNaN(s.Uplink) || math.IsInf(s.Uplink, 0) || s.Uplink < 0:
		return fmt.Errorf("faults: uplink must be finite and >= 0 bytes/s, got %v", s.Uplink)
	case math.IsNaN(s.Latency) || math.IsInf(s.Latency, 0) || s.Latency < 0:
		return fmt.Errorf("faults: latency must be finite and >= 0 s, got %v", s.Latency)
	}
	return nil
}

// Stats counts what the proxy did; every byte it swallowed is counted.
type Stats struct {
	Accepted  int64 // connections accepted
	Refused   int64 // connections cut at once because the device was offline
	Held      int64 // connections held silently, never reaching the engine
	Staled    int64 // open connections made stale
	BytesDown int64 // engine → phone, delivered
	BytesUp   int64 // phone → engine, delivered
	Swallowed int64 // bytes read from a stale or held connection and dropped
}

type config struct {
	addr  string
	scale float64
	shape Shape
}

// Option configures a Proxy.
type Option func(*config)

// WithTimeScale sets person-seconds per wall second for every duration and
// rate the proxy is given.
func WithTimeScale(f float64) Option { return func(c *config) { c.scale = f } }

// WithShape sets the initial shape.
func WithShape(s Shape) Option { return func(c *config) { c.shape = s } }

// Proxy forwards loopback TCP connections to one upstream address, with
// faults.
type Proxy struct {
	ln       net.Listener
	upstream string
	scale    float64

	mu         sync.Mutex
	shape      Shape
	stallUntil time.Time
	offline    bool
	hold       bool
	conns      map[*link]struct{}
	closed     bool
	wake       chan struct{} // closed and replaced whenever the faults change
	// nextDown, nextUp: when the link's bandwidth lets the next byte leave
	// in each direction (shared by all connections).
	nextDown, nextUp time.Time

	accepted, refused, held, staled atomic.Int64
	down, up, swallowed             atomic.Int64
	wg                              sync.WaitGroup
}

// Listen starts a proxy to upstream (host:port).
func Listen(upstream string, opts ...Option) (*Proxy, error) {
	c := config{addr: DefaultAddr, scale: DefaultTimeScale}
	for _, o := range opts {
		o(&c)
	}
	if math.IsNaN(c.scale) || math.IsInf(c.scale, 0) || c.scale <= 0 {
		return nil, fmt.Errorf("faults: time scale must be finite and > 0, got %v", c.scale)
	}
	if err := c.shape.Validate(); err != nil {
		return nil, err
	}
	if upstream == "" {
		return nil, errors.New("faults: no upstream address")
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return nil, fmt.Errorf("faults: listen: %w", err)
	}
	p := &Proxy{ln: ln, upstream: upstream, scale: c.scale, shape: c.shape,
		conns: map[*link]struct{}{}, wake: make(chan struct{})}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port; the phone dials it instead of the engine.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// SetShape changes the link's bandwidth and latency from now on.
func (p *Proxy) SetShape(s Shape) error {
	if err := s.Validate(); err != nil {
		return err
	}
	p.mu.Lock()
	p.shape = s
	p.mu.Unlock()
	p.notify()
	return nil
}

// Stall stops every byte in both directions on every connection for d
// person-seconds from now. Connections stay open; nothing is lost.
func (p *Proxy) Stall(d float64) {
	until := time.Now().Add(p.wall(d))
	p.mu.Lock()
	if until.After(p.stallUntil) {
		p.stallUntil = until
	}
	p.mu.Unlock()
	p.notify()
}

// StaleOpen makes every connection open now stale: its engine side is closed,
// its phone side stays open and swallows whatever is written to it, and
// nothing ever comes back. New connections are not affected. It returns how
// many connections went stale.
func (p *Proxy) StaleOpen() int {
	p.mu.Lock()
	var ls []*link
	for l := range p.conns {
		ls = append(ls, l)
	}
	p.mu.Unlock()
	n := 0
	for _, l := range ls {
		if l.makeStale() {
			n++
			p.staled.Add(1)
		}
	}
	p.notify()
	return n
}

// SetOffline takes the device off the network (true) or back on (false).
// Offline, open connections are cut and new ones are closed as soon as they
// are accepted.
func (p *Proxy) SetOffline(off bool) {
	p.mu.Lock()
	p.offline = off
	var ls []*link
	if off {
		for l := range p.conns {
			ls = append(ls, l)
		}
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.cut()
	}
	p.notify()
}

// SetHold makes new connections (true) be accepted and held silently: they
// never reach the engine and nothing comes back, an engine that cannot be
// reached from this device.
func (p *Proxy) SetHold(hold bool) {
	p.mu.Lock()
	p.hold = hold
	p.mu.Unlock()
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	return Stats{
		Accepted: p.accepted.Load(), Refused: p.refused.Load(), Held: p.held.Load(),
		Staled: p.staled.Load(), BytesDown: p.down.Load(), BytesUp: p.up.Load(),
		Swallowed: p.swallowed.Load(),
	}
}

// Close stops listening and cuts every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var ls []*link
	for l := range p.conns {
		ls = append(ls, l)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	for _, l := range ls {
		l.cut()
	}
	p.notify()
	p.wg.Wait()
	return err
}

func (p *Proxy) wall(personSeconds float64) time.Duration {
	return time.Duration(personSeconds / p.scale * float64(time.Second))
}

// readSize is how many bytes one read takes in the direction now: bigChunk
// without a bandwidth limit, else about chunkWall of the limit's bytes
// (at least chunkSize).
func (p *Proxy) readSize(down bool) int {
	p.mu.Lock()
	bw := p.shape.Uplink
	if down {
		bw = p.shape.Bandwidth
	}
	p.mu.Unlock()
	if bw <= 0 {
		return bigChunk
	}
	n := int(bw * p.scale * chunkWall.Seconds())
	return min(max(n, chunkSize), bigChunk)
}

// notify wakes every direction waiting on a fault so it re-reads them.
func (p *Proxy) notify() {
	p.mu.Lock()
	close(p.wake)
	p.wake = make(chan struct{})
	p.mu.Unlock()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.mu.Lock()
		offline, hold, closed := p.offline, p.hold, p.closed
		p.mu.Unlock()
		switch {
		case closed || offline:
			p.refused.Add(1)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, as a dead interface gives
			}
			_ = c.Close()
		case hold:
			p.held.Add(1)
			l := &link{p: p, phone: c, stale: true}
			p.track(l)
			p.wg.Add(1)
			go func() { defer p.wg.Done(); l.swallow(c); p.untrack(l) }()
		default:
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.connect(c) }()
		}
	}
}

func (p *Proxy) track(l *link) {
	p.mu.Lock()
	p.conns[l] = struct{}{}
	p.mu.Unlock()
}

func (p *Proxy) untrack(l *link) {
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
}

func (p *Proxy) connect(phone net.Conn) {
	engine, err := net.Dial("tcp", p.upstream)
	if err != nil {
		_ = phone.Close() // the engine's port is closed: so is ours
		return
	}
	l := &link{p: p, phone: phone, engine: engine}
	p.track(l)
	defer p.untrack(l)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); l.pipe(engine, phone, true) }()
	go func() { defer wg.Done(); l.pipe(phone, engine, false) }()
	wg.Wait()
	l.cut()
}

// link is one proxied connection.
type link struct {
	p      *Proxy
	phone  net.Conn
	engine net.Conn // nil while held

	mu    sync.Mutex
	stale bool
	gone  bool
}

func (l *link) isStale() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stale
}

func (l *link) makeStale() bool {
	l.mu.Lock()
	if l.stale || l.gone {
		l.mu.Unlock()
		return false
	}
	l.stale = true
	engine := l.engine
	l.mu.Unlock()
	if engine != nil {
		_ = engine.Close()
	}
	return true
}

func (l *link) cut() {
	l.mu.Lock()
	l.gone = true
	l.mu.Unlock()
	if tc, ok := l.phone.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = l.phone.Close()
	if l.engine != nil {
		_ = l.engine.Close()
	}
}

// swallow reads from c until it closes, dropping everything.
func (l *link) swallow(c net.Conn) {
	buf := make([]byte, chunkSize)
	for {
		n, err := c.Read(buf)
		l.p.swallowed.Add(int64(n))
		if err != nil {
			return
		}
	}
}

type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst through the faults. down is the engine → phone
// direction, the one the bandwidth limit applies to.
func (l *link) pipe(src, dst net.Conn, down bool) {
	q := make(chan chunk, queueDepth)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, l.p.readSize(down))
			n, err := src.Read(buf)
			if n > 0 {
				if l.isStale() {
					l.p.swallowed.Add(int64(n))
				} else {
					q <- chunk{b: buf[:n], at: time.Now()}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if !l.deliver(c, dst, down) {
			break
		}
	}
	// Closing one side ends the other direction too, as on a real link; a
	// stale connection's phone side stays open until the phone drops it.
	if !l.isStale() {
		l.cut()
	}
	for range q {
	}
}

// deliver writes one chunk once latency, stalls and bandwidth allow it.
func (l *link) deliver(c chunk, dst net.Conn, down bool) bool {
	p := l.p
	// slot is the chunk's turn on a shaped link, booked once, when it is
	// ready to leave: chunks leave in the order they became ready, so each
	// connection gets its share of the bandwidth and a small reply waits
	// behind at most one chunk of every other stream, as on a real link.
	// (Racing for the link each time it frees let a busy stream win over
	// and over: a progress check's few bytes waited seconds behind audio.)
	var slot time.Time
	for {
		p.mu.Lock()
		shape, stallUntil, wake := p.shape, p.stallUntil, p.wake
		p.mu.Unlock()
		bw, next := shape.Uplink, &p.nextUp
		if down {
			bw, next = shape.Bandwidth, &p.nextDown
		}
		if l.isStale() {
			p.swallowed.Add(int64(len(c.b)))
			return true
		}
		due := c.at.Add(p.wall(shape.Latency))
		if stallUntil.After(due) {
			due = stallUntil
		}
		if waitUntil(due, wake) {
			continue
		}
		b := c.b
		if bw > 0 {
			// Pace: the chunk leaves when the bytes booked before it on the
			// link have had their share of the bandwidth.
			if slot.IsZero() {
				p.mu.Lock()
				if now := time.Now(); next.Before(now) {
					*next = now
				}
				slot = *next
				perByte := float64(time.Second) / (bw * p.scale)
				*next = next.Add(time.Duration(float64(len(b)) * perByte))
				p.mu.Unlock()
			}
			if waitUntil(slot, wake) {
				continue
			}
		}
		// Counted before the write and corrected after it: the far side can
		// answer as soon as it has the bytes, so counting after Write would
		// let an answer be seen before the bytes that caused it.
		ctr := &p.up
		if down {
			ctr = &p.down
		}
		ctr.Add(int64(len(b)))
		n, err := dst.Write(b)
		if n < len(b) {
			ctr.Add(int64(n - len(b)))
		}
		return err == nil
	}
}

// waitUntil sleeps until at, or until wake says the shaping changed, and
// reports whether it waited at all (the caller then looks again).
func waitUntil(at time.Time, wake <-chan struct{}) bool {
	wait := time.Until(at)
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	}
	return true
}

var _ io.Closer = (*Proxy)(nil)
