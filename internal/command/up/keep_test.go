package up

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
)

// TestRestartPause: 1 s, doubling, at most 30 s.
func TestRestartPause(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := restartPause(i + 1); got != w {
			t.Errorf("restartPause(%d) = %s, want %s", i+1, got, w)
		}
	}
}

// TestDeathsCountInsideTheWindow: a death older than the window is
// forgotten, so a child that dies once a day is never given up on.
func TestDeathsCountInsideTheWindow(t *testing.T) {
	var d deaths
	t0 := time.Unix(1_800_000_000, 0)
	for i, tc := range []struct {
		at   time.Duration
		want int
	}{{0, 1}, {time.Minute, 2}, {2 * time.Minute, 3}, {RestartWindow + time.Minute + time.Second, 2}, {3 * RestartWindow, 1}} {
		if got := d.add(t0.Add(tc.at)); got != tc.want {
			t.Errorf("death %d at +%s: %d inside the window, want %d", i, tc.at, got, tc.want)
		}
	}
}

// TestHeartbeatSchedulesAndReplaces: each beat posts the silence message
// with ntfy's X-Delay of the bound and one sequence ID (so each replaces
// the last); a beat whose check fails is skipped and logged.
func TestHeartbeatSchedulesAndReplaces(t *testing.T) {
	tg := newTarget(t)
	r, log := newTestRelay(t, tg.URL+"/topic", FormatNtfy, verdictsFile)
	c := testConfig(t, map[string]string{EnvNotifyURL: tg.URL + "/topic", EnvHeartbeat: "10s"})
	if c.Heartbeat != 10*time.Second {
		t.Fatalf("heartbeat %s", c.Heartbeat)
	}
	c.Heartbeat = 2 * time.Second // beats every second
	failing := make(chan bool, 1)
	failing <- false
	check := func() error {
		f := <-failing
		failing <- f
		if f {
			return errors.New("prometheus does not answer")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.heartbeat(ctx, c, check); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(tg.received()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	<-failing
	failing <- true
	n := len(tg.received())
	for !strings.Contains(log.String(), "heartbeat skipped") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	got := tg.received()
	if n < 2 || len(got) > n+1 { // one beat may have been on its way
		t.Fatalf("%d beats, then %d while the check failed", n, len(got)-n)
	}
	for _, p := range got {
		if p.header.Get("X-Delay") != "2s" || p.header.Get("X-Sequence-ID") != upSequence(c, "heartbeat") || !strings.Contains(p.header.Get("Title"), "has gone silent") {
			t.Errorf("a beat:\n%s", render(p))
		}
	}
	if !strings.Contains(log.String(), "prometheus does not answer") {
		t.Errorf("the skipped beat is not logged:\n%s", log)
	}
}

// TestHeartbeatSettings: ntfy beats by default, json only when asked; the
// bound is at least ntfy's 10 s, or off.
func TestHeartbeatSettings(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want time.Duration
		err  string
	}{
		{map[string]string{}, DefaultHeartbeat, ""},
		{map[string]string{EnvNotifyFormat: FormatJSON}, 0, ""},
		{map[string]string{EnvNotifyFormat: FormatJSON, EnvHeartbeat: "5m"}, 5 * time.Minute, ""},
		{map[string]string{EnvHeartbeat: "off"}, 0, ""},
		{map[string]string{EnvHeartbeat: "5s"}, 5 * time.Second, "at least 10s"},
		{map[string]string{EnvRestartLimit: "-1"}, 0, "want a whole number"},
	} {
		env := map[string]string{EnvNotifyURL: "https://ntfy.sh/t", collectorconfig.EnvDataDir: "/tmp/d", collectorconfig.EnvVerdictFile: "/tmp/d/v.jsonl"}
		for k, v := range tc.env {
			env[k] = v
		}
		c, err := FromEnv(envOf(env), "/")
		if err == nil {
			err = c.Validate()
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || c.Heartbeat != tc.want {
			t.Errorf("%v: heartbeat %s, %v; want %s", tc.env, c.Heartbeat, err, tc.want)
		}
	}
}
