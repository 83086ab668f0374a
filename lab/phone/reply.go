package phone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/engine"
	"github.com/percause/percause/lab/player"
)

// The reply read aloud: its lines read into units, each unit's take
// fetched, and the units played as their audio comes.

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
