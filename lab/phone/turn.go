package phone

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/linkstatus"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/engine"
)

// One turn, stage by stage: her half (the microphone, her words, the post)
// and the engine's (the reply read aloud, with what runs beside it).

// Turn runs one voice turn and reports it.
func (p *Phone) Turn(ctx context.Context, plan Plan) (*Report, error) {
	ctx, turn := p.sdk.StartTurn(ctx)
	p.turnCtx.Store(&ctx)
	defer p.turnCtx.Store(nil)
	r := p.begin(ctx, turn, plan)
	speechEnd, posted, err := p.listenAndPost(r, plan)
	if err != nil {
		return r.rep, err
	}
	p.reply(r, plan, posted, speechEnd)
	p.finish(r, plan)
	return r.rep, nil
}

// turnRun is one turn under way: what its stages share.
type turnRun struct {
	ctx   context.Context
	turn  *instr.Turn
	clk   clock
	rep   *Report
	live  *instr.Live
	errMu sync.Mutex
}

// fail notes what went wrong in the report (from any of the turn's
// goroutines).
func (r *turnRun) fail(what string, err error) {
	r.errMu.Lock()
	r.rep.Errors = append(r.rep.Errors, fmt.Sprintf("%s: %v", what, err))
	r.errMu.Unlock()
}

// begin starts the turn's report and records what the turn starts with:
// its link, its route and the phone's health.
func (p *Phone) begin(ctx context.Context, turn *instr.Turn, plan Plan) *turnRun {
	r := &turnRun{ctx: ctx, turn: turn, clk: clock{t0: time.Now(), scale: p.cfg.Scale},
		rep: &Report{Index: turn.Index(), TraceID: turn.TraceID()}, live: p.sdk.Live()}
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
	return r
}

// listenAndPost is her half of the turn: the microphone opens, she
// speaks, the end-of-speech window passes, and what she said is posted.
// A turn cut short by its context (the lab interrupted) ends here, and
// its report still leaves, with what it has.
func (p *Phone) listenAndPost(r *turnRun, plan Plan) (float64, posted, error) {
	ctx, clk, turn, rep, live := r.ctx, r.clk, r.turn, r.rep, r.live
	// The microphone opens; the status line names the stage it waits for.
	live.Add(semconv.LiveMicEngines, 1)
	micHeld := true
	abort := func(err error) (float64, posted, error) {
		if micHeld {
			live.Add(semconv.LiveMicEngines, -1)
		}
		turn.End()
		return 0, posted{}, fmt.Errorf("phone: turn %d: %w", rep.Index, err)
	}
	listen, err := p.openMic(ctx, clk, plan, r.fail)
	if err != nil {
		return abort(err)
	}
	rep.ListenTotal = listen.Total
	turn.SetListen(listen)

	speechEnd, err := p.speak(ctx, clk, plan, rep.Index, r.fail)
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
	posted, notSent := p.post(ctx, clk, p.speech(plan), r.fail)
	rep.NotSent, rep.SpeechEndToPost, rep.PostBytes = notSent, -1, posted.bytes
	if posted.at > 0 {
		rep.SpeechEndToPost = posted.at - speechEnd
		turn.SetSpeechEndToPost(rep.SpeechEndToPost)
	}
	return speechEnd, posted, nil
}

// reply is the engine's half: the reply's units read aloud as their lines
// arrive, with what runs beside them (the link's responsiveness, the
// status line's checks, the voice-late watch, the upload), all of which
// end with the turn.
func (p *Phone) reply(r *turnRun, plan Plan, posted posted, speechEnd float64) {
	side := p.startBeside(r, posted)

	// "Getting her voice ready…" while the first take's audio is late.
	fa := &firstAudio{}
	voice := p.watch(r.ctx, linkstatus.VoiceLate, func() waitNow { return p.voiceLate(r.ctx, r.clk, fa) })

	upload := p.startUpload(r, plan, posted)

	// The reply's units are read aloud as their lines arrive.
	unitsCh := make(chan *unit, 64)
	hooked := p.startReading(r, posted, unitsCh, fa)

	p.play(r.ctx, r.clk, r.turn, plan, unitsCh, speechEnd, r.live, r.rep, r.fail)
	<-hooked // a fault the lab injects belongs to this turn
	fa.ended.Store(true)
	voice.end()

	p.collect(r, side)
	upload.Wait()
}

// beside is what runs beside the reply and is collected when it ends.
type beside struct {
	rpmDone    chan struct{}
	stopChecks context.CancelFunc
	checksDone chan []CheckResult
}

// startBeside starts the link's responsiveness under working conditions
// (the control lane's round trip while the reply streams, and a fresh
// connection's) and the status line's checks.
func (p *Phone) startBeside(r *turnRun, posted posted) *beside {
	b := &beside{rpmDone: make(chan struct{}), checksDone: make(chan []CheckResult, 1)}
	go func() {
		defer close(b.rpmDone)
		if rt, err := p.lanes.Responsiveness(r.ctx, p.cfg.BaseURL+engine.PathProgress); err == nil {
			r.turn.SetRPM(rt.Loaded, rt.Fresh)
		}
	}()

	var checkCtx context.Context
	checkCtx, b.stopChecks = context.WithCancel(r.ctx)
	go func() { b.checksDone <- p.runChecks(checkCtx, r.clk, posted.Turn) }()
	return b
}

// startUpload sends the microphone-rate copy, on the bulk lane beside the
// takes.
func (p *Phone) startUpload(r *turnRun, plan Plan, posted posted) *sync.WaitGroup {
	var bg sync.WaitGroup
	if plan.Upload > 0 && posted.Turn != "" {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if _, err := p.call(r.ctx, http.MethodPost, engine.PathUpload, bytes.Repeat([]byte{0x22}, plan.Upload), lanes.KindUpload, nil); err != nil {
				r.fail("upload", err)
			}
		}()
	}
	return &bg
}

// startReading reads the reply's lines into units (closing units when
// they end); the channel it returns closes once the lab's hook has heard
// that every take arrived.
func (p *Phone) startReading(r *turnRun, posted posted, unitsCh chan *unit, fa *firstAudio) <-chan struct{} {
	hooked := make(chan struct{})
	go func() {
		defer close(hooked)
		units := p.readLines(r.ctx, r.clk, posted.Turn, r.live, r.fail, unitsCh, fa)
		close(unitsCh)
		if p.hooks.TakesArrived == nil {
			return
		}
		for _, u := range units {
			<-u.done
		}
		p.hooks.TakesArrived(r.rep.Index)
	}()
	return hooked
}

// collect waits for what ran beside the reply and puts the status lines
// its checks saw in the report.
func (p *Phone) collect(r *turnRun, b *beside) {
	rep := r.rep
	b.stopChecks()
	rep.Checks = <-b.checksDone
	p.probes.Wait()
	p.media.Wait()
	<-b.rpmDone
	for _, c := range rep.Checks {
		if len(rep.Lines) == 0 || rep.Lines[len(rep.Lines)-1] != c.Line {
			if c.Line != "" && (len(rep.Lines) > 0 || c.Line != semconv.LinkStatusOK) {
				rep.Lines = append(rep.Lines, c.Line)
			}
		}
	}
}

// finish records what the turn ends with (a leak the plan asks for, the
// pool's resets, the longest "not sent" wait, the live counts) and ends it.
func (p *Phone) finish(r *turnRun, plan Plan) {
	rep, turn, live := r.rep, r.turn, r.live
	if plan.Leak != "" && plan.Leak != semconv.LivePlayers && plan.Leak != semconv.LiveMicEngines {
		live.Add(plan.Leak, 1)
	}
	rep.PoolResets = p.lanes.Resets()
	turn.SetPoolResets(rep.PoolResets)
	turn.SetNotSent(rep.NotSent)
	rep.Live = live.Snapshot()
	turn.End()
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
