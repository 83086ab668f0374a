package player

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Defaults of the phone's player.
const (
	// DefaultCushion is the audio buffered ahead before playback starts or
	// resumes, in seconds.
	DefaultCushion = 1.5
	// DefaultBytesPerSecond is the take's audio byte rate: 64 kbit/s, the
	// order of a compressed speech stream.
	DefaultBytesPerSecond = 8000
	// DefaultName names the player in the unit's report (pippa.unit.player).
	DefaultName = "stream"
)

// Config describes a player.
type Config struct {
	// Cushion is the seconds of audio buffered ahead of the play head before
	// playback starts, and again before it resumes after an underrun.
	Cushion float64
	// BytesPerSecond converts received bytes to seconds of audio.
	BytesPerSecond float64
}

// DefaultConfig is the phone's player.
func DefaultConfig() Config {
	return Config{Cushion: DefaultCushion, BytesPerSecond: DefaultBytesPerSecond}
}

// Validate reports the first field that cannot describe a player.
func (c Config) Validate() error {
	switch {
	case math.IsNaN(c.Cushion) || math.IsInf(c.Cushion, 0) || c.Cushion < 0:
		return fmt.Errorf("player: cushion must be a finite number of seconds >= 0, got %v", c.Cushion)
	case math.IsNaN(c.BytesPerSecond) || math.IsInf(c.BytesPerSecond, 0) || c.BytesPerSecond <= 0:
		return fmt.Errorf("player: bytes per second must be finite and > 0, got %v", c.BytesPerSecond)
	}
	return nil
}

// Arrival is n bytes of the take received at At.
type Arrival struct {
	At float64
	N  int
}

// Result is what the listener heard of one take.
type Result struct {
	Start     float64 // playback started (the cushion was full, or the stream ended first)
	End       float64 // the last byte was played
	Audio     float64 // seconds of audio received and played
	Underruns int     // times the play head caught up with the bytes received before the stream ended
	Silent    float64 // seconds of silence those underruns caused
	Longest   float64 // the longest of those silences
}

// Errors of Play.
var (
	ErrTimeOrder  = errors.New("player: arrivals must be in time order")
	ErrBadArrival = errors.New("player: bad arrival")
	ErrNotClosed  = errors.New("player: stream closed before its last arrival")
)

type state int

const (
	waiting state = iota // not started: filling the first cushion
	playing
	stalled // underrun: refilling the cushion
)

// Play replays a take's arrivals through the player. notBefore is the
// earliest time playback may start (the unit's turn to play); closed is when
// the stream ended. Arrivals must be in time order and not after closed.
func Play(cfg Config, notBefore float64, arrivals []Arrival, closed float64) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if !finite(notBefore) || !finite(closed) {
		return Result{}, fmt.Errorf("%w: times must be finite (not before %v, closed %v)", ErrBadArrival, notBefore, closed)
	}
	m := model{cfg: cfg, notBefore: notBefore, t: notBefore}
	last := math.Inf(-1)
	for i, a := range arrivals {
		switch {
		case !finite(a.At) || a.N < 0:
			return Result{}, fmt.Errorf("%w %d: %d bytes at %v", ErrBadArrival, i, a.N, a.At)
		case a.At < last:
			return Result{}, fmt.Errorf("%w: arrival %d at %v after one at %v", ErrTimeOrder, i, a.At, last)
		case a.At > closed:
			return Result{}, fmt.Errorf("%w: arrival %d at %v, closed at %v", ErrNotClosed, i, a.At, closed)
		}
		last = a.At
		m.arrive(a.At, float64(a.N)/cfg.BytesPerSecond)
	}
	return m.close(closed), nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// model is the player's state between events. Times before notBefore do not
// move the play head: bytes arriving then only fill the buffer.
type model struct {
	cfg       Config
	notBefore float64

	st         state
	t          float64 // time of the last event processed (>= notBefore)
	head, recv float64 // audio seconds played, received
	start      float64
	stallStart float64
	res        Result
}

// advance moves the clock to `to`, playing what is buffered and counting an
// underrun if the play head catches up with the bytes received.
func (m *model) advance(to float64) {
	if to <= m.t {
		return
	}
	if m.st == playing {
		if catch := m.t + (m.recv - m.head); catch < to {
			m.head = m.recv
			m.st = stalled
			m.stallStart = catch
			m.res.Underruns++
		} else {
			m.head += to - m.t
		}
	}
	m.t = to
}

// settle starts or resumes playback when the cushion is full at m.t.
func (m *model) settle() {
	full := m.recv-m.head >= m.cfg.Cushion-1e-12
	switch {
	case m.st == waiting && full:
		m.st, m.start = playing, m.t
	case m.st == stalled && full:
		m.resume()
	}
}

func (m *model) resume() {
	silence := m.t - m.stallStart
	m.res.Silent += silence
	m.res.Longest = math.Max(m.res.Longest, silence)
	m.st = playing
}

func (m *model) arrive(at, audio float64) {
	m.advance(math.Max(at, m.notBefore))
	m.recv += audio
	m.settle()
}

func (m *model) close(at float64) Result {
	m.advance(math.Max(at, m.notBefore))
	switch m.st {
	case waiting:
		m.start = m.t
	case stalled:
		m.resume()
	}
	// From here the rest of the buffer plays out without a gap.
	m.res.Start = m.start
	m.res.End = m.t + (m.recv - m.head)
	m.res.Audio = m.recv
	return m.res
}

// Recorder collects a take's arrivals as they come off a socket. It is safe
// for concurrent use: the stream's reader writes while the turn reads.
type Recorder struct {
	mu       sync.Mutex
	clock    func() float64
	arrivals []Arrival
	bytes    int64
	closed   float64
	done     bool
}

// NewRecorder records arrivals timed by clock (person-seconds).
func NewRecorder(clock func() float64) *Recorder { return &Recorder{clock: clock} }

// Write records len(p) bytes arriving now. It never fails, so a Recorder can
// sit at the end of an io.Copy.
func (r *Recorder) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	now := r.clock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.arrivals = append(r.arrivals, Arrival{At: now, N: len(p)})
		r.bytes += int64(len(p))
	}
	return len(p), nil
}

// Close marks the end of the stream now. Later writes are ignored.
func (r *Recorder) Close() error {
	now := r.clock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.done, r.closed = true, now
	}
	return nil
}

// Bytes is how many bytes arrived so far.
func (r *Recorder) Bytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}

// Play replays the recorded stream through a player; the stream must be
// closed.
func (r *Recorder) Play(cfg Config, notBefore float64) (Result, error) {
	r.mu.Lock()
	arrivals, closed, done := append([]Arrival(nil), r.arrivals...), r.closed, r.done
	r.mu.Unlock()
	if !done {
		return Result{}, errors.New("player: the stream is still open")
	}
	return Play(cfg, notBefore, arrivals, closed)
}
