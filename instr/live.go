package instr

import (
	"sync/atomic"

	"github.com/percause/percause/instr/semconv"
)

// numKinds is how many live-object kinds there are: the registry indexes
// them by their position in semconv.LiveKinds.
const numKinds = semconv.NumLiveKinds

// kindIndex is kind's position in semconv.LiveKinds, or -1.
func kindIndex(kind string) int {
	for i, k := range semconv.LiveKinds {
		if k == kind {
			return i
		}
	}
	return -1
}

// Live is the live-object registry: code adds 1 when it makes a player, a
// microphone engine, an audio queue, a take, a byte stream or a reply in
// flight, and -1 when it lets it go. Every turn report reads it, and it is
// exported as the gauge pippa.live.objects{pippa.live.kind}. Safe for
// concurrent use; Add is a single atomic operation.
type Live struct {
	counts   [numKinds]atomic.Int64
	rejected atomic.Int64
	onReject func(error) // counts the refusal in percause.sdk.rejected and reports it
}

// Add changes kind's count by delta. kind must be one of semconv.LiveKinds;
// anything else is refused (the kind is a metric attribute and must stay a
// bounded set): counted and handed to the error handler.
func (l *Live) Add(kind string, delta int) {
	i := kindIndex(kind)
	if i < 0 {
		l.rejected.Add(1)
		if l.onReject != nil {
			l.onReject(&InputError{"Live.Add", "kind", kind, "not one of semconv.LiveKinds"})
		}
		return
	}
	l.counts[i].Add(int64(delta))
}

// Get is kind's count now (0 for an unknown kind).
func (l *Live) Get(kind string) int {
	if i := kindIndex(kind); i >= 0 {
		return int(l.counts[i].Load())
	}
	return 0
}

// Snapshot returns every kind's count now.
func (l *Live) Snapshot() map[string]int {
	m := make(map[string]int, numKinds)
	for i, k := range semconv.LiveKinds {
		m[k] = int(l.counts[i].Load())
	}
	return m
}

// Rejected is how many Add calls named an unknown kind.
func (l *Live) Rejected() int { return int(l.rejected.Load()) }

func (l *Live) snapshot() (s [numKinds]int64) {
	for i := range s {
		s[i] = l.counts[i].Load()
	}
	return s
}
