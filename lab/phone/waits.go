package phone

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/linkstatus"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/engine"
)

// waitTick is how often (person-seconds) a wait's line is brought up to
// date: its seconds grow, and it appears once it has lasted its time to
// visible.
const waitTick = 0.1

// waitNow is what a wait is at one instant.
type waitNow struct {
	on       bool // the phone waits on it now
	args     linkstatus.Args
	readings []attribute.KeyValue
	waited   float64 // person-seconds waited so far
}

// waitLine keeps one wait's status line current while it may happen: every
// tick it asks now() what the wait is, shows it on the phone's line while it
// is on and clears it when it is not. It remembers the longest the line
// showed this wait.
type waitLine struct {
	p    *Phone
	ctx  context.Context
	w    *linkstatus.Warnable
	now  func() waitNow
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	on      bool
	last    waitNow
	longest float64 // person-seconds, while the line showed w
}

// watch starts keeping w's line current from now() until end.
func (p *Phone) watch(ctx context.Context, w *linkstatus.Warnable, now func() waitNow) *waitLine {
	wl := &waitLine{p: p, ctx: ctx, w: w, now: now, stop: make(chan struct{}), done: make(chan struct{})}
	go wl.run()
	return wl
}

func (wl *waitLine) run() {
	defer close(wl.done)
	tick := time.NewTicker(time.Duration(waitTick / wl.p.cfg.Scale * float64(time.Second)))
	defer tick.Stop()
	for {
		wl.update(wl.now())
		select {
		case <-tick.C:
		case <-wl.stop:
			return
		case <-wl.ctx.Done():
			return
		}
	}
}

func (wl *waitLine) update(n waitNow) {
	m := wl.p.link.monitor
	wl.mu.Lock()
	defer wl.mu.Unlock()
	switch {
	case n.on:
		wl.on, wl.last = true, n
		if m.Show(wl.ctx, wl.w, n.args, n.readings...).Status == wl.w.Status {
			wl.longest = max(wl.longest, n.waited)
		}
	case wl.on:
		wl.on = false
		m.Clear(wl.ctx, wl.w, wl.last.readings...)
	}
}

// end stops the line (clearing the wait, with its last readings) and
// returns the longest the line showed it, in person-seconds (0: never).
func (wl *waitLine) end() float64 {
	close(wl.stop)
	<-wl.done
	wl.update(waitNow{})
	wl.mu.Lock()
	defer wl.mu.Unlock()
	return wl.longest
}

// micStages is the microphone's opening as it goes: the stage it waits
// for and since when.
type micStages struct {
	clk   clock
	mu    sync.Mutex
	start float64 // when the microphone began to open
	stage string
	since float64
}

func (s *micStages) enter(stage string) {
	s.mu.Lock()
	if s.stage == "" {
		s.start = s.clk.now()
	}
	s.stage, s.since = stage, s.clk.now()
	s.mu.Unlock()
}

// now is "Opening the microphone…" with the stage it waits for and, for
// the grant, its seconds.
func (s *micStages) now() waitNow {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stage == "" {
		return waitNow{}
	}
	t := s.clk.now()
	opening := t - s.start
	return waitNow{
		on:   true,
		args: linkstatus.Args{linkstatus.ArgStage: s.stage, linkstatus.ArgFor: linkstatus.Seconds(seconds(t - s.since))},
		readings: []attribute.KeyValue{
			attribute.String(semconv.WaitStage, s.stage),
			attribute.Float64(semconv.WaitFor, opening),
		},
		waited: opening,
	}
}

// postNotSent is the turn's post while it is not sent: how long, and how
// many other calls are open on its lane.
func (p *Phone) postNotSent() waitNow {
	for _, w := range p.lanes.Waiting() { // longest first
		if w.Kind != lanes.KindPost {
			continue
		}
		return waitNow{
			on:   true,
			args: linkstatus.NotSentArgs(w.For, w.Others),
			readings: []attribute.KeyValue{
				attribute.String(semconv.Lane, w.Lane),
				attribute.String(semconv.CallKind, string(w.Kind)),
				attribute.Float64(semconv.WaitFor, w.For.Seconds()),
				attribute.Int(semconv.WaitOthers, w.Others),
			},
			waited: w.For.Seconds(),
		}
	}
	return waitNow{}
}

// firstAudio is the turn's first take as the phone waits for its audio:
// when it was asked for, and whether a byte of it has come.
type firstAudio struct {
	asked   atomic.Int64 // person-milliseconds into the turn (0: not yet)
	arrived atomic.Bool
	ended   atomic.Bool // the take failed or the turn moved on

	probing atomic.Bool
	mu      sync.Mutex
	probe   string  // what the bulk lane's probe found ("": not yet)
	status  int     // its HTTP status (0: none)
	rtt     float64 // its person-seconds
}

// firstByteWriter marks the first audio's arrival on its first byte.
type firstByteWriter struct {
	w  interface{ Write([]byte) (int, error) }
	fa *firstAudio
}

func (f firstByteWriter) Write(b []byte) (int, error) {
	if len(b) > 0 && f.fa != nil {
		f.fa.arrived.Store(true)
	}
	return f.w.Write(b)
}

// voiceLate is "Getting her voice ready…" while the first take's audio is
// late. Once the wait reaches the line's time to visible the bulk lane is
// probed itself, once: the control lane answering says nothing about a
// stale bulk connection, and the line names what the probe found.
func (p *Phone) voiceLate(ctx context.Context, clk clock, fa *firstAudio) waitNow {
	asked := fa.asked.Load()
	if asked == 0 || fa.arrived.Load() || fa.ended.Load() {
		return waitNow{}
	}
	waited := clk.now() - float64(asked)/1000
	if waited >= linkstatus.VoiceLate.TimeToVisible.Seconds() && fa.probing.CompareAndSwap(false, true) {
		p.probes.Add(1)
		go func() {
			defer p.probes.Done()
			p.probeBulk(ctx, fa)
		}()
	}
	fa.mu.Lock()
	defer fa.mu.Unlock()
	n := waitNow{on: true, args: linkstatus.Args{}, waited: waited,
		readings: []attribute.KeyValue{attribute.Float64(semconv.WaitFor, waited)}}
	if fa.probe != "" {
		n.args[linkstatus.ArgProbe] = fa.probe
		n.args[linkstatus.ArgProbeRTT] = linkstatus.ProbeSeconds(seconds(fa.rtt))
		n.readings = append(n.readings,
			attribute.String(semconv.Lane, p.lanes.Bulk().Name()),
			attribute.String(semconv.WaitProbe, fa.probe),
			attribute.Int(semconv.WaitProbeStatus, fa.status),
			attribute.Float64(semconv.WaitProbeRTT, fa.rtt))
	}
	return n
}

// probeBulk finds what the bulk lane is doing: busy (every connection in
// use: a probe would only queue), or what its own kept-alive connection
// answers.
func (p *Phone) probeBulk(ctx context.Context, fa *firstAudio) {
	bulk := p.lanes.Bulk()
	finding, status, rtt := semconv.ProbeBusy, 0, 0.0
	if bulk.RepliesInFlight() < p.lanes.ConnsPerHost() {
		start := time.Now()
		status, _ = p.lanes.Probe(ctx, p.cfg.BaseURL+engine.PathProgress)
		rtt = time.Since(start).Seconds() * p.cfg.Scale
		finding = linkstatus.BulkFinding(status)
	}
	fa.mu.Lock()
	fa.probe, fa.status, fa.rtt = finding, status, rtt
	fa.mu.Unlock()
}

// openSocket opens the microphone's listening socket: a connection of its
// own that the engine answers once its listener is ready.
func (p *Phone) openSocket(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.BaseURL+engine.PathSocket, nil)
	if err != nil {
		return err
	}
	resp, err := p.lanes.Do(req, lanes.KindListen)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &StatusError{Path: engine.PathSocket, Status: resp.StatusCode}
	}
	return nil
}

// seconds turns person-seconds into a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
