package up

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Restarts: a child that dies is started again after a pause that doubles
// with each death inside RestartWindow (1 s, 2 s, 4 s, … at most
// maxRestartPause); after more than Config.RestartLimit deaths of one
// child inside the window `up` gives up, stops everything and says so.
const (
	// DefaultRestartLimit is how many restarts of one child RestartWindow
	// allows.
	DefaultRestartLimit = 5
	// RestartWindow is the window the restarts are counted over.
	RestartWindow   = 10 * time.Minute
	firstPause      = time.Second
	maxRestartPause = 30 * time.Second
)

// restartPause is the pause before the nth restart inside the window
// (n from 1).
func restartPause(n int) time.Duration {
	d := firstPause
	for i := 1; i < n && d < maxRestartPause; i++ {
		d *= 2
	}
	return min(d, maxRestartPause)
}

// deaths keeps when one child died, inside the window.
type deaths []time.Time

// add records a death at now and returns how many fall inside the window.
func (d *deaths) add(now time.Time) int {
	kept := (*d)[:0]
	for _, t := range *d {
		if now.Sub(t) < RestartWindow {
			kept = append(kept, t)
		}
	}
	*d = append(kept, now)
	return len(*d)
}

// Heartbeat: while everything answers, `up` posts to the target, every
// beat (half the bound), a message to be delivered one bound later
// (ntfy's X-Delay) under one sequence ID: each beat replaces the one
// scheduled before it, so the message is delivered only when the beats
// stop: `up` killed, the machine off or offline, or a child not
// answering. A stop asked for replaces it at once with a message saying
// alerts are off. See docs/decisions/0314-silence-is-told-by-the-notification-service.md.
const (
	// DefaultHeartbeat is the bound: told within it of the silence.
	DefaultHeartbeat = 10 * time.Minute
	// MinHeartbeat is ntfy's shortest delay.
	MinHeartbeat = 10 * time.Second
)

// upSequence is the sequence ID of `up`'s own messages about what of
// (the heartbeat, a child), for this target and data folder.
func upSequence(c Config, what string) string {
	h := sha256.Sum256([]byte(c.NotifyURL + "\x00" + c.DataDir))
	return "percause-up-" + hex.EncodeToString(h[:])[:16] + "-" + what
}

// host names the machine in `up`'s own messages.
func host() string {
	h, err := os.Hostname()
	if err != nil || !printable(h) || h == "" {
		return "this machine"
	}
	return h
}

// tell posts one of `up`'s own messages; it logs a failure (there is no
// Alertmanager to retry it).
func (r *relay) tell(ctx context.Context, m message) bool {
	if m.Alert == "" {
		m.Alert = "percause-up"
	}
	if err := r.post(ctx, m); err != nil {
		r.failed.Add(1)
		r.logf("telling %q failed: %v", m.Title, err)
		return false
	}
	r.sent.Add(1)
	return true
}

// answers reports whether every URL answers 200 within a second each.
func answers(urls ...string) error {
	hc := &http.Client{Timeout: time.Second}
	for _, u := range urls {
		resp, err := hc.Get(u)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answered %s", u, resp.Status)
		}
	}
	return nil
}

// heartbeat beats until ctx ends; check says whether everything answers.
func (r *relay) heartbeat(ctx context.Context, c Config, check func() error) {
	every := max(c.Heartbeat/2, time.Second)
	id := upSequence(c, "heartbeat")
	name := host()
	beat := func() {
		if err := check(); err != nil {
			r.logf("heartbeat skipped: %v (without beats the phone is told %s after the last)", err, c.Heartbeat)
			return
		}
		now := r.now()
		r.tell(ctx, message{
			Alert: "percause-up", Status: "silent", SequenceID: id, Delay: c.Heartbeat, Priority: 4,
			Tags:  []string{"skull", "percause"},
			Title: fmt.Sprintf("percause up on %s has gone silent", name),
			Body: fmt.Sprintf("No heartbeat from percause up on %s since %s (it beats every %s while the collector, Prometheus and Alertmanager answer). "+
				"The machine, its network or percause up stopped, or a part of it does not answer: no alert from it can reach you until it is back.",
				name, now.In(r.loc).Format("15:04:05 MST"), every),
			Click: c.PageURL, StartsAt: now,
		})
		r.beats.Add(1)
	}
	beat()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			beat()
		}
	}
}
