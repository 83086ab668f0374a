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

// LinkProbes gathers the readings linkstatus.Diagnose chooses the lost-link
// message from, for the lane whose calls are failing: how full that lane is,
// whether the engine was heard anywhere within the quiet window (streamed
// words, bulk bytes, any answer), and — when the device is online — what the
// engine's front answers on a fresh connection. deviceOnline comes from the
// platform (a usable network path).
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
	if deviceOnline {
		p.FrontStatus, _ = c.FreshProbe(ctx, frontURL)
	}
	return p
}
