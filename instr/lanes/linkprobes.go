package lanes

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/percause/percause/instr/linkstatus"
)

// DefaultHeardWithin is how recently (person-time) the engine must have been
// heard for it to count as answering: the Reconnecting rule's quiet window.
const DefaultHeardWithin = linkstatus.DefaultQuiet

// FreshProbe asks url on a fresh connection of its own, outside every pool,
// and returns the status the engine's front answered with: it tells a front
// answering 502/503/504 for an engine that is down from a pool that is merely
// full or stale.
func (c *Client) FreshProbe(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("lanes: fresh probe: %w", err)
	}
	resp, err := c.fresh.do(req, KindRTT, c.cfg.policies[KindRTT])
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, err
}

// PoolProbe asks url on the named lane's own pool, with the quiet probe's
// timeout, and returns the status it answered with: a kept-alive connection
// of that lane, where FreshProbe opens one of its own. A fresh connection
// answering while this one does not is a stale connection. Its timeout
// counts toward the lane's heal like any buffered reply's: the probe found
// the failure the heal exists for.
func (c *Client) PoolProbe(ctx context.Context, lane, url string) (int, error) {
	l, err := c.Lane(lane)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("lanes: pool probe: %w", err)
	}
	resp, err := l.Do(req, KindProbe)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, err
}

// LinkProbes gathers the readings linkstatus.Diagnose chooses the lost-link
// message from, for the lane whose calls are failing: how full that lane is,
// whether the engine was heard anywhere within the quiet window (streamed
// words, bulk bytes, any answer), and — when the device is online — what the
// engine's front answers on a fresh connection, then, when that answered and
// the lane has room, what the lane's own pool answers (a stale connection
// when it does not). deviceOnline comes from the platform (a usable network
// path).
func (c *Client) LinkProbes(ctx context.Context, frontURL, lane string, deviceOnline bool) linkstatus.Probes {
	p := linkstatus.Probes{
		Probed:       true,
		DeviceOnline: deviceOnline,
		Lane:         lane,
		InFlight:     c.RepliesInFlight(lane),
		Limit:        c.cfg.connsPerHost,
	}
	if h := c.LastHeard(); !h.IsZero() && time.Since(h) <= c.cfg.wall(DefaultHeardWithin) {
		p.OtherAnswered = true
	}
	if !deviceOnline {
		return p
	}
	p.FrontStatus, _ = c.FreshProbe(ctx, frontURL)
	if PoolProbeTells(p) {
		p.PoolProbed = true
		p.PoolStatus, _ = c.PoolProbe(ctx, lane, frontURL)
	}
	return p
}

// PoolProbeTells reports whether probing the failing lane's own pool can
// tell anything more: only when a fresh connection answered (not with a
// restarting front) and the lane has room. On a full lane the probe would
// only queue behind the calls it is meant to explain.
func PoolProbeTells(p linkstatus.Probes) bool {
	return p.FrontStatus != 0 && !linkstatus.Restarting(p.FrontStatus) && !p.Saturated()
}
