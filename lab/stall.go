package lab

import (
	"sync"
	"time"
)

// Host stalls. The lab runs a person-second in a fraction of a wall second,
// so a pause of its own process (another program holding the machine's
// cores) reads as seconds of a person's time: a take made late, a check
// answered late, a play head that ran dry. The watchdog measures those
// pauses so a turn they disturbed says so, and the lab can tell its host's
// hiccup from a rule's mistake.
const (
	// watchTick is the watchdog's period.
	watchTick = 5 * time.Millisecond
	// DefaultStallLimit is the longest host pause a turn tolerates before it
	// counts as disturbed, in person-seconds: a third of the thresholds
	// the rules read (the 1.5 s cushion, the 1.5 s microphone limit).
	DefaultStallLimit = 0.5
)

// watchdog records every pause of the process longer than a few ticks.
type watchdog struct {
	mu     sync.Mutex
	pauses []pause
	stop   chan struct{}
	done   chan struct{}
}

type pause struct {
	at  time.Time // when it ended
	dur time.Duration
}

// startWatchdog returns once the watchdog is watching: a pause from then
// on is recorded (a goroutine not yet scheduled on a busy machine would
// start its clock after it).
func startWatchdog() *watchdog {
	w := &watchdog{stop: make(chan struct{}), done: make(chan struct{})}
	watching := make(chan struct{})
	go w.run(watching)
	<-watching
	return w
}

func (w *watchdog) run(watching chan<- struct{}) {
	defer close(w.done)
	t := time.NewTicker(watchTick)
	defer t.Stop()
	last := time.Now()
	close(watching)
	for {
		select {
		case <-w.stop:
			return
		case now := <-t.C:
			if late := now.Sub(last) - watchTick; late > 4*watchTick {
				w.mu.Lock()
				w.pauses = append(w.pauses, pause{at: now, dur: late})
				w.mu.Unlock()
			}
			last = now
		}
	}
}

func (w *watchdog) close() {
	close(w.stop)
	<-w.done
}

// longest is the longest pause that overlapped [from, to].
func (w *watchdog) longest(from, to time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var m time.Duration
	for _, p := range w.pauses {
		if p.at.After(from) && p.at.Add(-p.dur).Before(to) && p.dur > m {
			m = p.dur
		}
	}
	return m
}
