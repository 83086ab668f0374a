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
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/linkstatus"
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

// Lanes is the phone's client.
func (p *Phone) Lanes() *lanes.Client { return p.lanes }

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

// unit is one unit of the reply in flight.
type unit struct {
	index  int
	text   string
	take   string
	queued float64
	rec    *player.Recorder
	err    error
	done   chan struct{}
}

// Turn runs one voice turn and reports it.
func (p *Phone) Turn(ctx context.Context, plan Plan) (*Report, error) {
	ctx, turn := p.sdk.StartTurn(ctx)
	p.turnCtx.Store(&ctx)
	defer p.turnCtx.Store(nil)
	clk := clock{t0: time.Now(), scale: p.cfg.Scale}
	rep := &Report{Index: turn.Index(), TraceID: turn.TraceID()}
	live := p.sdk.Live()
	var errMu sync.Mutex
	fail := func(what string, err error) {
		errMu.Lock()
		rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", what, err))
		errMu.Unlock()
	}

	linkType, linkSubtype := p.cfg.LinkType, p.cfg.LinkSubtype
	if plan.LinkType != "" {
		linkType, linkSubtype = plan.LinkType, plan.LinkSubtype
	}
	turn.SetLink(linkType, linkSubtype)
	turn.SetRoute(p.cfg.Route)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	turn.SetHealth(instr.Health{
		DeviceUptime: DefaultDeviceUptime + time.Since(p.launched).Seconds()*p.cfg.Scale,
		AppUptime:    time.Since(p.launched).Seconds() * p.cfg.Scale,
		Activations:  p.activations + 1,
		Memory:       int64(ms.HeapAlloc),
	})

	// The microphone opens; the status line names the stage it waits for.
	live.Add(semconv.LiveMicEngines, 1)
	micHeld := true
	// abort ends a turn cut short by its context (the lab interrupted) so its
	// report still leaves, with what it has.
	abort := func(err error) (*Report, error) {
		if micHeld {
			live.Add(semconv.LiveMicEngines, -1)
		}
		turn.End()
		return rep, fmt.Errorf("phone: turn %d: %w", rep.Index, err)
	}
	listen, err := p.openMic(ctx, clk, plan, fail)
	if err != nil {
		return abort(err)
	}
	rep.ListenTotal = listen.Total
	turn.SetListen(listen)

	// She speaks, the end-of-speech window passes, and what she said is
	// posted.
	speechEnd, err := p.speak(ctx, clk, plan, rep.Index, fail)
	if err != nil {
		return abort(err)
	}
	if plan.Leak != semconv.LiveMicEngines {
		live.Add(semconv.LiveMicEngines, -1)
	}
	micHeld = false
	if err := clk.sleepUntil(ctx, speechEnd+p.cfg.EndOfSpeech); err != nil {
		return abort(err)
	}
	posted, notSent := p.post(ctx, clk, p.speech(plan), fail)
	rep.NotSent, rep.SpeechEndToPost, rep.PostBytes = notSent, -1, posted.bytes
	if posted.at > 0 {
		rep.SpeechEndToPost = posted.at - speechEnd
		turn.SetSpeechEndToPost(rep.SpeechEndToPost)
	}

	// The link's responsiveness under working conditions: the control
	// lane's round trip while the reply streams, and a fresh connection's.
	rpmDone := make(chan struct{})
	go func() {
		defer close(rpmDone)
		if rt, err := p.lanes.Responsiveness(ctx, p.cfg.BaseURL+engine.PathProgress); err == nil {
			turn.SetRPM(rt.Loaded, rt.Fresh)
		}
	}()

	checkCtx, stopChecks := context.WithCancel(ctx)
	checksDone := make(chan []CheckResult, 1)
	go func() { checksDone <- p.runChecks(checkCtx, clk, posted.Turn) }()

	// "Getting her voice ready…" while the first take's audio is late.
	fa := &firstAudio{}
	voice := p.watch(ctx, linkstatus.VoiceLate, func() waitNow { return p.voiceLate(ctx, clk, fa) })

	// The microphone-rate copy rides the bulk lane beside the takes.
	var bg sync.WaitGroup
	if plan.Upload > 0 && posted.Turn != "" {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if _, err := p.call(ctx, http.MethodPost, engine.PathUpload, bytes.Repeat([]byte{0x22}, plan.Upload), lanes.KindUpload, nil); err != nil {
				fail("upload", err)
			}
		}()
	}

	// The reply's units are read aloud as their lines arrive.
	unitsCh := make(chan *unit, 64)
	hooked := make(chan struct{})
	go func() {
		defer close(hooked)
		units := p.readLines(ctx, clk, posted.Turn, live, fail, unitsCh, fa)
		close(unitsCh)
		if p.hooks.TakesArrived == nil {
			return
		}
		for _, u := range units {
			<-u.done
		}
		p.hooks.TakesArrived(rep.Index)
	}()

	p.play(ctx, clk, turn, plan, unitsCh, speechEnd, live, rep, fail)
	<-hooked // a fault the lab injects belongs to this turn
	fa.ended.Store(true)
	voice.end()

	stopChecks()
	rep.Checks = <-checksDone
	p.probes.Wait()
	p.media.Wait()
	<-rpmDone
	for _, c := range rep.Checks {
		if len(rep.Lines) == 0 || rep.Lines[len(rep.Lines)-1] != c.Line {
			if c.Line != "" && (len(rep.Lines) > 0 || c.Line != semconv.LinkStatusOK) {
				rep.Lines = append(rep.Lines, c.Line)
			}
		}
	}
	bg.Wait()

	if plan.Leak != "" && plan.Leak != semconv.LivePlayers && plan.Leak != semconv.LiveMicEngines {
		live.Add(plan.Leak, 1)
	}
	rep.PoolResets = p.lanes.Resets()
	turn.SetPoolResets(rep.PoolResets)
	turn.SetNotSent(rep.NotSent)
	rep.Live = live.Snapshot()
	turn.End()
	return rep, nil
}

// openMic opens the microphone: the audio session, the engine's listening
// grant, the listening socket. While it opens, the status line says which
// of them it waits for (linkstatus.MicOpening, after the wait rule's 1.5 s).
func (p *Phone) openMic(ctx context.Context, clk clock, plan Plan, fail func(string, error)) (instr.Listen, error) {
	stages := &micStages{clk: clk}
	stages.enter(semconv.StageSession)
	line := p.watch(ctx, linkstatus.MicOpening, stages.now)
	defer line.end()
	session := p.cfg.Session
	if plan.Session > 0 {
		session = plan.Session
	}
	start := clk.now()
	if err := clk.sleepUntil(ctx, start+session); err != nil {
		return instr.Listen{}, err
	}
	p.activations++
	sessionEnd := clk.now()
	stages.enter(semconv.StageGrant)
	if _, err := p.call(ctx, http.MethodPost, engine.PathListen, nil, lanes.KindGrant, nil); err != nil {
		fail("grant", err)
	}
	grantEnd := clk.now()
	stages.enter(semconv.StageSocket)
	if err := p.openSocket(ctx); err != nil {
		fail("socket", err)
	}
	end := clk.now()
	return instr.Listen{Session: sessionEnd - start, Grant: grantEnd - sessionEnd, Total: end - start}, nil
}

// speech is how long she speaks this turn.
func (p *Phone) speech(plan Plan) float64 {
	if plan.Speech > 0 {
		return plan.Speech
	}
	return p.cfg.Speech
}

// speak is her speech: the phone records while she talks, and runs its own
// traffic meanwhile (plan.Media downloads on the bulk lane). It returns when
// her last word ends.
func (p *Phone) speak(ctx context.Context, clk clock, plan Plan, turn int, fail func(string, error)) (float64, error) {
	start := clk.now()
	for range plan.Media {
		p.media.Add(1)
		go func() {
			defer p.media.Done()
			p.download(ctx, plan.MediaFor, fail)
		}()
	}
	if err := clk.sleepUntil(ctx, start+p.speech(plan)/2); err != nil {
		return 0, err
	}
	if p.hooks.Speaking != nil {
		go p.hooks.Speaking(turn)
	}
	if err := clk.sleepUntil(ctx, start+p.speech(plan)); err != nil {
		return 0, err
	}
	return clk.now(), nil
}

// download is one media download of the phone's own, on the bulk lane.
func (p *Phone) download(ctx context.Context, seconds float64, fail func(string, error)) {
	url := fmt.Sprintf("%s%s?%s=%g", p.cfg.BaseURL, engine.PathMedia, engine.MediaQuery, seconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fail("media", err)
		return
	}
	resp, err := p.lanes.Do(req, lanes.KindDownload)
	if err != nil {
		fail("media", err)
		return
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		fail("media", err)
	}
}

// postAttempts is how many times the phone posts a turn before it gives
// up: an app keeps what she said and posts it again.
const postAttempts = 2

// posted is the turn's post as it ended.
type posted struct {
	engine.Posted
	// at is when the post had left the phone, person-seconds into the turn
	// (0: it never did); bytes the recording's size.
	at    float64
	bytes int
}

// post posts the recording of her speech (speech person-seconds at the
// microphone's rate), again once if it fails. While the post is not sent
// the status line says for how long and beside how many other calls
// (linkstatus.NotSent); post returns the longest it said so.
//
// The post has left the phone when the engine answers it: the engine
// answers once the last byte has reached it, which the phone cannot see
// sooner (its socket takes the bytes whether or not they get through, as a
// stale connection shows).
func (p *Phone) post(ctx context.Context, clk clock, speech float64, fail func(string, error)) (posted, float64) {
	line := p.watch(ctx, linkstatus.NotSent, p.postNotSent)
	recording := bytes.Repeat([]byte{0x11}, int(speech*DefaultRecordingRate))
	out := posted{bytes: len(recording)}
	for range postAttempts {
		if _, err := p.call(ctx, http.MethodPost, engine.PathTurn, recording, lanes.KindPost, &out.Posted); err != nil {
			fail("post", err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		out.at = clk.now()
		break
	}
	return out, line.end()
}

// readLines reads the turn's line stream; every line becomes a unit whose
// take is prepared and streamed at once, handed to out as it comes. It
// returns the units when the stream ends.
func (p *Phone) readLines(ctx context.Context, clk clock, turnID string, live *instr.Live, fail func(string, error), out chan<- *unit, fa *firstAudio) []*unit {
	if turnID == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.BaseURL+"/api/turn/"+turnID+"/lines", nil)
	if err != nil {
		fail("lines", err)
		return nil
	}
	ls, err := p.lanes.Stream(req)
	if err != nil {
		fail("lines", err)
		return nil
	}
	defer ls.Close()
	if ls.Response().StatusCode != http.StatusOK {
		fail("lines", fmt.Errorf("status %d", ls.Response().StatusCode))
		return nil
	}
	var units []*unit
	for {
		line, err := ls.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fail("lines", err)
			}
			return units
		}
		if len(line) > maxLine {
			fail("lines", errors.New("line too long"))
			return units
		}
		var msg engine.LineMsg
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			fail("lines", fmt.Errorf("bad line %q: %w", line, err))
			continue
		}
		if msg.Done {
			return units
		}
		u := &unit{index: len(units) + 1, text: msg.Text, rec: player.NewRecorder(clk.now), done: make(chan struct{})}
		units = append(units, u)
		var first *firstAudio
		if u.index == 1 {
			first = fa
		}
		go p.fetchTake(ctx, clk, u, live, first)
		out <- u
	}
}

// fetchTake prepares a unit's take and streams its bytes into the unit's
// recorder; fa, when not nil, follows the turn's first audio.
func (p *Phone) fetchTake(ctx context.Context, clk clock, u *unit, live *instr.Live, fa *firstAudio) {
	defer close(u.done)
	defer u.rec.Close()
	if fa != nil {
		fa.asked.Store(max(int64(clk.now()*1000), 1))
		defer fa.ended.Store(true)
	}
	body, _ := json.Marshal(engine.TakeRequest{Text: u.text})
	var tk engine.Ticket
	if _, err := p.call(ctx, http.MethodPost, engine.PathPrepare, body, lanes.KindPrepare, &tk); err != nil {
		u.err = fmt.Errorf("prepare: %w", err)
		u.queued = clk.now()
		return
	}
	u.take, u.queued = tk.Take, clk.now()
	live.Add(semconv.LiveTakes, 1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.BaseURL+"/api/tts/take/"+tk.Take, nil)
	if err != nil {
		u.err = err
		return
	}
	resp, err := p.lanes.Do(req, lanes.KindTake)
	if err != nil {
		u.err = fmt.Errorf("take stream: %w", err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		u.err = fmt.Errorf("take stream: status %d", resp.StatusCode)
		return
	}
	live.Add(semconv.LiveByteStreams, 1)
	defer live.Add(semconv.LiveByteStreams, -1)
	if _, err := io.Copy(firstByteWriter{u.rec, fa}, resp.Body); err != nil {
		u.err = fmt.Errorf("take stream: %w", err)
	}
}

// play reads the units aloud in order, in real time: each unit's bytes go
// through the player model, no earlier than the end of the previous unit,
// and the phone waits out the unit before the next.
func (p *Phone) play(ctx context.Context, clk clock, turn *instr.Turn, plan Plan, units <-chan *unit, speechEnd float64, live *instr.Live, rep *Report, fail func(string, error)) {
	prevEnd := speechEnd
	readingStart := -1.0
	const btUnit = 2 // the route flaps during the second unit
	for u := range units {
		select {
		case <-u.done:
		case <-ctx.Done():
			return
		}
		ur := UnitReport{Index: u.index, Take: u.take, Queued: u.queued, Cushion: p.cfg.Player.Cushion}
		if u.err != nil {
			ur.Err = u.err.Error()
			fail(fmt.Sprintf("unit %d", u.index), u.err)
		}
		if u.take == "" {
			rep.Units = append(rep.Units, ur)
			continue
		}
		res, err := u.rec.Play(p.cfg.Player, math.Max(prevEnd, u.queued))
		if err != nil {
			ur.Err = err.Error()
			rep.Units = append(rep.Units, ur)
			continue
		}
		ur.Result = res
		ur.Gap = math.Max(0, res.Start-prevEnd)
		if u.index > 1 {
			ur.Lead = prevEnd - u.queued
		}
		if readingStart < 0 {
			readingStart = res.Start
		}
		// The player exists while the unit plays.
		_ = clk.sleepUntil(ctx, res.Start)
		live.Add(semconv.LivePlayers, 1)
		if plan.Bluetooth && u.index == btUnit {
			p.routeFlap(ctx, clk, turn, res, readingStart, rep)
		}
		_ = clk.sleepUntil(ctx, res.End)
		if plan.Leak != semconv.LivePlayers || u.index != 1 {
			live.Add(semconv.LivePlayers, -1)
		}
		live.Add(semconv.LiveTakes, -1)
		turn.Unit(instr.Unit{
			Index: u.index, TakeID: u.take, Gap: ur.Gap, Lead: ur.Lead,
			Underruns: res.Underruns, Silent: res.Silent, Longest: res.Longest,
			Cushion: p.cfg.Player.Cushion, Player: player.DefaultName,
			Start: clk.at(res.Start), End: clk.at(res.End),
		})
		rep.Units = append(rep.Units, ur)
		prevEnd = res.End
	}
}

// routeFlap is the scripted Bluetooth fault: a second into the unit the
// earbuds drop out (the route falls back to the speaker), 0.4 s later they
// are back, and the listener marks the stutter she heard.
func (p *Phone) routeFlap(ctx context.Context, clk clock, turn *instr.Turn, res player.Result, readingStart float64, rep *Report) {
	leftEarbuds := res.Start + math.Min(1, (res.End-res.Start)/3)
	backOnEarbuds := leftEarbuds + 0.4
	_ = clk.sleepUntil(ctx, leftEarbuds)
	turn.RouteChange(leftEarbuds-readingStart, semconv.RouteReasonOldDevice, []string{semconv.PortBuiltinSpeaker})
	rep.RouteChanges++
	_ = clk.sleepUntil(ctx, backOnEarbuds)
	turn.RouteChange(backOnEarbuds-readingStart, semconv.RouteReasonNewDevice, p.cfg.Route.Outputs)
	rep.RouteChanges++
	turn.MarkStutter()
	rep.Stutter = true
}

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
