package phone

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/engine"
	"github.com/percause/percause/lab/internal/wait"
	"github.com/percause/percause/lab/player"
)

// Defaults of the phone, in person-seconds.
const (
	DefaultSession = 0.12 // activating the audio session
	DefaultSpeech  = 3.0  // what she says
	// DefaultEndOfSpeech is the silence after her last word before the
	// phone takes the turn as spoken and posts it: the end-of-speech window
	// the done reading allows beside the upload.
	DefaultEndOfSpeech = 0.8
	DefaultCheckEvery  = 3.0 // the progress check rests this long after each answer
	// DefaultRecordingRate is the microphone's bytes per second (16 kHz,
	// 16-bit mono PCM): the size of the turn's post is her speech at this
	// rate (a minute of dictation is about 2 MB).
	DefaultRecordingRate = 32000
	// DefaultDeviceUptime is how long the lab's device has been up at launch.
	DefaultDeviceUptime = 3 * 24 * 3600.0
	// DefaultTimeScale is person-seconds per wall second.
	DefaultTimeScale = 1.0
	// maxLine bounds one decoded reply line.
	maxLine = 1 << 16
)

// DefaultRoute is AirPods as microphone and speakers.
func DefaultRoute() instr.Route {
	return instr.Route{
		Inputs:     []string{semconv.PortBluetoothHFP},
		Outputs:    []string{semconv.PortBluetoothA2DP},
		SampleRate: 16000, Category: "playAndRecord", Mode: "voiceChat",
	}
}

// Config is one launch of the phone.
type Config struct {
	// BaseURL is the engine's address as the phone dials it (the fault
	// proxy in the lab).
	BaseURL string
	// Scale is person-seconds per wall second.
	Scale float64
	// Player is the phone's player.
	Player player.Config
	// Link is the network path (network.connection.type, subtype).
	LinkType, LinkSubtype string
	// Route is the audio route while she reads.
	Route instr.Route
	// Session and Speech are the audio session's activation and how long
	// she speaks, in person-seconds (scripted: the lab has no microphone);
	// EndOfSpeech the silence after which her turn is taken as spoken.
	Session, Speech, EndOfSpeech float64
	// CheckEvery is the progress check's rest after each answer.
	CheckEvery float64
}

// DefaultConfig is a phone on hotel Wi-Fi with AirPods.
func DefaultConfig(baseURL string) Config {
	return Config{
		BaseURL: baseURL, Scale: DefaultTimeScale, Player: player.DefaultConfig(),
		LinkType: semconv.LinkWifi, Route: DefaultRoute(),
		Session: DefaultSession, Speech: DefaultSpeech, EndOfSpeech: DefaultEndOfSpeech, CheckEvery: DefaultCheckEvery,
	}
}

// Validate reports the first setting that cannot describe a phone.
func (c Config) Validate() error {
	if c.BaseURL == "" {
		return errors.New("phone: no engine base URL")
	}
	if !(c.Scale > 0) || math.IsInf(c.Scale, 0) {
		return fmt.Errorf("phone: time scale must be finite and > 0, got %v", c.Scale)
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"session", c.Session}, {"speech", c.Speech}, {"end of speech", c.EndOfSpeech}, {"check rest", c.CheckEvery}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 {
			return fmt.Errorf("phone: %s must be finite seconds >= 0, got %v", v.name, v.v)
		}
	}
	return c.Player.Validate()
}

// Hooks let the lab inject a fault at a moment of the turn.
type Hooks struct {
	// Speaking is called (on its own goroutine) once per turn, halfway
	// through her speech.
	Speaking func(turn int)
	// TakesArrived is called (on its own goroutine) once per turn, when
	// every take of the turn has arrived and she is still reading.
	TakesArrived func(turn int)
}

// Plan is one turn's switches on the phone.
type Plan struct {
	// Leak is a live-object kind the phone leaks one of this turn.
	Leak string
	// Bluetooth scripts a route change away from the earbuds and back in
	// the middle of the reply, and the listener's stutter mark.
	Bluetooth bool
	// Upload is the bytes of the microphone-rate copy (0: none).
	Upload int
	// Speech is how long she speaks this turn, person-seconds (0: the
	// launch's Config.Speech); Session the audio session's activation (0:
	// Config.Session).
	Speech, Session float64
	// LinkType and LinkSubtype are the network path this turn ("": the
	// launch's).
	LinkType, LinkSubtype string
	// Media is how many downloads (pictures, video) the phone starts as she
	// begins to speak, each streaming MediaFor person-seconds on the bulk
	// lane: the phone's own traffic.
	Media    int
	MediaFor float64
}

// Phone is one launch of the lab phone.
type Phone struct {
	cfg      Config
	sdk      *instr.SDK
	lanes    *lanes.Client
	hooks    Hooks
	launched time.Time

	activations int
	online      atomic.Bool
	link        *link
	// probes are the quiet probes of the bulk lane in flight, and media
	// the phone's own downloads; a turn ends only after them, so a heal
	// they cause is the turn's.
	probes, media sync.WaitGroup
	// turnCtx is the context of the turn running now (nil between turns):
	// the probes a heal starts are spans of that turn's trace.
	turnCtx atomic.Pointer[context.Context]
}

// OnReset is the lanes' reset hook (lanes.WithResetHook). After the control
// lane heals, the bulk lane is probed quietly: the control lane answering
// again says nothing about a stale bulk connection, and a take must not be
// the call that finds out.
func (p *Phone) OnReset(r lanes.Reset) {
	if r.Lane != semconv.LaneControl {
		return
	}
	p.probes.Add(1)
	go func() {
		defer p.probes.Done()
		bulk := p.lanes.Bulk()
		before := bulk.Resets()
		ctx := context.Background()
		if tc := p.turnCtx.Load(); tc != nil {
			ctx = *tc
		}
		// Enough probes to complete a heal's streak, and no more once the
		// bulk lane answers or has healed.
		for range lanes.DefaultResetAfter {
			status, err := p.lanes.Probe(ctx, p.cfg.BaseURL+engine.PathProgress)
			if (err == nil && status == http.StatusOK) || bulk.Resets() > before {
				return
			}
		}
	}()
}

// New launches a phone on sdk (its telemetry) and client (its lanes).
func New(cfg Config, sdk *instr.SDK, client *lanes.Client, hooks Hooks) (*Phone, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sdk == nil || client == nil {
		return nil, errors.New("phone: needs an SDK and a lanes client")
	}
	p := &Phone{cfg: cfg, sdk: sdk, lanes: client, hooks: hooks, launched: time.Now()}
	p.online.Store(true)
	if err := p.newLink(); err != nil {
		return nil, fmt.Errorf("phone: status line: %w", err)
	}
	return p, nil
}

// Warm is what the app does at launch before the first turn: one read of
// the engine's state on the control lane. It opens the lane's first
// connection, as a launch does, so the first turn's microphone opening is
// not also the launch's first handshake.
func (p *Phone) Warm(ctx context.Context) error {
	_, err := p.call(ctx, http.MethodGet, engine.PathProgress, nil, lanes.KindRead, nil)
	return err
}

// SetOnline tells the phone whether the device has a usable network path
// (the OS's path monitor).
func (p *Phone) SetOnline(on bool) { p.online.Store(on) }

// Online is the device's path as last set.
func (p *Phone) Online() bool { return p.online.Load() }

// UnitReport is what the phone heard of one unit.
type UnitReport struct {
	Index   int
	Take    string
	Gap     float64
	Lead    float64
	Queued  float64 // person-seconds from the turn's start
	Result  player.Result
	Err     string // the take could not be prepared or streamed
	Cushion float64
}

// Report is the phone's own account of a turn.
type Report struct {
	Index   int
	TraceID string
	Units   []UnitReport
	Checks  []CheckResult
	// Lines are the status lines shown during the turn, in order
	// (pippa.link.status values; "ok" when the line cleared).
	Lines      []string
	PoolResets int
	// NotSent is the longest the post's "not sent for …" line showed, in
	// person-seconds (0: never); SpeechEndToPost from her last word to the
	// post having left the phone (-1: it never left).
	NotSent         float64
	SpeechEndToPost float64
	// PostBytes is the size of her recording as posted.
	PostBytes    int
	ListenTotal  float64
	RouteChanges int
	Stutter      bool
	Live         map[string]int
	Errors       []string // calls that failed (the turn goes on, as on the phone)
}

// ChecksFailed counts the turn's checks that did not answer 200 in time.
func (r *Report) ChecksFailed() int {
	n := 0
	for _, c := range r.Checks {
		if !c.OK {
			n++
		}
	}
	return n
}

// Underruns is the turn's underruns over all units.
func (r *Report) Underruns() int {
	n := 0
	for _, u := range r.Units {
		n += u.Result.Underruns
	}
	return n
}

// clock is person-seconds since the turn started.
type clock struct {
	t0    time.Time
	scale float64
}

func (c clock) now() float64 { return time.Since(c.t0).Seconds() * c.scale }

// at is the wall time of person-second s of the turn.
func (c clock) at(s float64) time.Time {
	return c.t0.Add(time.Duration(s / c.scale * float64(time.Second)))
}

func (c clock) sleepUntil(ctx context.Context, s float64) error { return wait.Until(ctx, c.at(s)) }

// call makes one buffered call and decodes its JSON answer into out (when
// not nil). A non-200 answer is an error carrying its status.
func (p *Phone) call(ctx context.Context, method, path string, body []byte, kind lanes.Kind, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.cfg.BaseURL+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	data, resp, err := p.lanes.Fetch(req, kind, 1<<20)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, &StatusError{Path: path, Status: resp.StatusCode}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s: bad answer: %w", path, err)
		}
	}
	return resp.StatusCode, nil
}

// StatusError is an engine (or front) answer other than 200.
type StatusError struct {
	Path   string
	Status int
}

func (e *StatusError) Error() string { return fmt.Sprintf("%s: status %d", e.Path, e.Status) }
