package phone

import (
	"context"
	"net/http"
	"time"

	"github.com/percause/percause/instr/lanes"
	"github.com/percause/percause/instr/linkstatus"
	"github.com/percause/percause/lab/engine"
)

// link is the phone's status line: the Reconnecting verdict over the
// progress checks, and the lost-link message chosen by probes when a check
// fails. Every change of the line is recorded by linkstatus in the turn's
// trace.
type link struct {
	tracker *linkstatus.Tracker
	monitor *linkstatus.Monitor
	// fresh is the probe of the engine's front on a connection of its own,
	// outside every lane: whether the front answers, and with what status.
	fresh *http.Client
	// inQuestion is set from a failed check until one answers: only the
	// first failure of a streak says "Connection lost. Checking why…", so a
	// warning that must persist before it shows (offline) keeps its start.
	inQuestion bool
}

func (p *Phone) newLink() error {
	scale := p.cfg.Scale
	tr, err := linkstatus.NewTracker(linkstatus.WithTimeScale(scale), linkstatus.WithHeardSource(p.lanes.LastHeard))
	if err != nil {
		return err
	}
	m, err := linkstatus.NewMonitor(linkstatus.WithTimeScale(scale),
		linkstatus.WithTracerProvider(p.sdk.TracerProvider()), linkstatus.WithMeterProvider(p.sdk.MeterProvider()))
	if err != nil {
		return err
	}
	timeout := time.Duration(p.checkTimeout().Seconds() / scale * float64(time.Second))
	p.link = &link{tracker: tr, monitor: m, fresh: &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{DisableKeepAlives: true},
	}}
	return nil
}

// observe feeds one check's outcome to the status line and returns the line
// shown after it.
func (p *Phone) observe(ctx context.Context, r CheckResult) linkstatus.Line {
	l := p.link
	now := time.Now()
	if r.OK {
		l.inQuestion = false
		l.tracker.Answered(now)
		return l.monitor.Update(ctx, l.tracker.Verdict(now), nil)
	}
	l.tracker.Failed(now)
	if !l.inQuestion {
		// The link is in question: say so while the probes run, then name why.
		l.inQuestion = true
		l.monitor.Update(ctx, l.tracker.Verdict(now), &linkstatus.Probes{DeviceOnline: p.Online()})
	}
	probes := p.probe(ctx)
	return l.monitor.Update(ctx, l.tracker.Verdict(time.Now()), &probes)
}

// probe gathers the readings that choose the lost-link message: the
// device's path, the control lane's fill, the engine heard elsewhere, the
// front on a fresh connection, then the control lane's own pool.
func (p *Phone) probe(ctx context.Context) linkstatus.Probes {
	ctl := p.lanes.Control()
	pr := linkstatus.Probes{
		Probed: true, DeviceOnline: p.Online(),
		Lane: ctl.Name(), InFlight: ctl.RepliesInFlight(), Limit: p.lanes.ConnsPerHost(),
	}
	// Heard from the engine on another lane within the check's timeout.
	if h := p.lanes.LastHeard(); !h.IsZero() {
		pr.OtherAnswered = time.Since(h).Seconds()*p.cfg.Scale < p.checkTimeout().Seconds()
	}
	if !pr.DeviceOnline {
		return pr // no path: nothing to probe
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.BaseURL+engine.PathProgress, nil)
	if err != nil {
		return pr
	}
	if resp, err := p.link.fresh.Do(req); err == nil {
		pr.FrontStatus = resp.StatusCode
		resp.Body.Close()
	}
	// A fresh connection answered and the lane has room: ask the lane's own
	// pool, whose silence is a stale connection.
	if lanes.PoolProbeTells(pr) {
		pr.PoolProbed = true
		pr.PoolStatus, _ = p.lanes.PoolProbe(ctx, ctl.Name(), p.cfg.BaseURL+engine.PathProgress)
	}
	return pr
}
