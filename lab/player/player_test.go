package player

import (
	"errors"
	"math"
	"testing"
)

// steady returns arrivals of chunk seconds of audio every every seconds from
// t0 until total seconds of audio have arrived (at the default byte rate).
func steady(t0, every, chunk, total float64) (arr []Arrival, last float64) {
	bps := float64(DefaultBytesPerSecond)
	t := t0
	for got := 0.0; got < total-1e-9; got += chunk {
		arr = append(arr, Arrival{At: t, N: int(math.Round(chunk * bps))})
		last = t
		t += every
	}
	return arr, last
}

func secs(s float64) int { return int(math.Round(s * DefaultBytesPerSecond)) }

func TestPlay(t *testing.T) {
	cfg := DefaultConfig()
	realTime, realLast := steady(0, 0.5, 0.5, 4) // made exactly as fast as it plays
	fast, fastLast := steady(0.3, 0.25, 1, 6)    // 4x real time after 0.3 s
	slow, slowLast := steady(0.2, 0.5, 0.25, 3)  // half real time: needs more than the cushion
	tests := []struct {
		name      string
		notBefore float64
		arrivals  []Arrival
		closed    float64
		want      Result
	}{
		{
			name:     "whole take at once",
			arrivals: []Arrival{{At: 0, N: secs(4)}},
			want:     Result{Start: 0, End: 4, Audio: 4},
		},
		{
			name:     "real time: starts when the cushion is full, never runs dry",
			arrivals: realTime, closed: realLast,
			want: Result{Start: 1, End: 5, Audio: 4},
		},
		{
			name:     "faster than real time",
			arrivals: fast, closed: fastLast,
			want: Result{Start: 0.55, End: 6.55, Audio: 6},
		},
		{
			name:     "a stall longer than the buffer: one underrun, silent until the cushion refills",
			arrivals: []Arrival{{At: 0, N: secs(2)}, {At: 4, N: secs(2)}},
			closed:   4,
			want:     Result{Start: 0, End: 6, Audio: 4, Underruns: 1, Silent: 2, Longest: 2},
		},
		{
			name:     "refill below the cushion does not resume until the cushion is full",
			arrivals: []Arrival{{At: 0, N: secs(2)}, {At: 3, N: secs(1)}, {At: 3.5, N: secs(1)}},
			closed:   3.5,
			want:     Result{Start: 0, End: 5.5, Audio: 4, Underruns: 1, Silent: 1.5, Longest: 1.5},
		},
		{
			name:     "two stalls",
			arrivals: []Arrival{{At: 0, N: secs(2)}, {At: 3, N: secs(2)}, {At: 8, N: secs(1)}},
			closed:   8,
			want:     Result{Start: 0, End: 9, Audio: 5, Underruns: 2, Silent: 4, Longest: 3},
		},
		{
			name:     "half real time: underruns",
			arrivals: slow, closed: slowLast,
			want: Result{Start: 2.7, End: 5.95, Audio: 3, Underruns: 1, Silent: 0.25, Longest: 0.25},
		},
		{
			name:      "waits for its turn: bytes buffered before the previous unit ended",
			notBefore: 5,
			arrivals:  []Arrival{{At: 0, N: secs(1)}, {At: 1, N: secs(2)}},
			closed:    1,
			want:      Result{Start: 5, End: 8, Audio: 3},
		},
		{
			name:     "shorter than the cushion: starts when the stream ends",
			arrivals: []Arrival{{At: 0, N: secs(1)}},
			closed:   0.2,
			want:     Result{Start: 0.2, End: 1.2, Audio: 1},
		},
		{
			name:   "no bytes at all",
			closed: 2,
			want:   Result{Start: 2, End: 2},
		},
		{
			name:     "a stall inside the buffer is not heard",
			arrivals: []Arrival{{At: 0, N: secs(3)}, {At: 2.5, N: secs(1)}},
			closed:   2.5,
			want:     Result{Start: 0, End: 4, Audio: 4},
		},
		{
			name:     "stream ends while stalled: silence until the end, then the rest plays",
			arrivals: []Arrival{{At: 0, N: secs(1.5)}, {At: 3, N: secs(0.5)}},
			closed:   3.2,
			want:     Result{Start: 0, End: 3.7, Audio: 2, Underruns: 1, Silent: 1.7, Longest: 1.7},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Play(cfg, tt.notBefore, tt.arrivals, tt.closed)
			if err != nil {
				t.Fatal(err)
			}
			if !near(got, tt.want) {
				t.Errorf("Play =\n %+v, want\n %+v", got, tt.want)
			}
			checkInvariants(t, got)
		})
	}
}

func near(a, b Result) bool {
	const eps = 1e-9
	return a.Underruns == b.Underruns &&
		math.Abs(a.Start-b.Start) < eps && math.Abs(a.End-b.End) < eps &&
		math.Abs(a.Audio-b.Audio) < eps && math.Abs(a.Silent-b.Silent) < eps &&
		math.Abs(a.Longest-b.Longest) < eps
}

// checkInvariants holds for every result: the time from start to end is the
// audio plus the silence, a silence exists exactly when an underrun does, and
// the longest silence is one of them.
func checkInvariants(t *testing.T, r Result) {
	t.Helper()
	const eps = 1e-6
	if d := r.End - r.Start - r.Audio - r.Silent; math.Abs(d) > eps*(1+r.End-r.Start) {
		t.Errorf("end-start = %v, audio+silent = %v", r.End-r.Start, r.Audio+r.Silent)
	}
	if (r.Underruns == 0) != (r.Silent == 0) {
		t.Errorf("underruns %d with %v s silent", r.Underruns, r.Silent)
	}
	if r.Longest > r.Silent+eps || (r.Underruns > 0 && r.Longest*float64(r.Underruns) < r.Silent-eps) {
		t.Errorf("longest %v of %d silences totalling %v", r.Longest, r.Underruns, r.Silent)
	}
}

func TestPlayErrors(t *testing.T) {
	cfg := DefaultConfig()
	tests := []struct {
		name     string
		cfg      Config
		arrivals []Arrival
		closed   float64
		want     error
	}{
		{"out of order", cfg, []Arrival{{At: 2, N: 1}, {At: 1, N: 1}}, 3, ErrTimeOrder},
		{"after close", cfg, []Arrival{{At: 2, N: 1}}, 1, ErrNotClosed},
		{"negative bytes", cfg, []Arrival{{At: 0, N: -1}}, 1, ErrBadArrival},
		{"NaN time", cfg, []Arrival{{At: math.NaN(), N: 1}}, 1, ErrBadArrival},
		{"infinite close", cfg, nil, math.Inf(1), ErrBadArrival},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Play(tt.cfg, 0, tt.arrivals, tt.closed); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{Cushion: -1, BytesPerSecond: 1},
		{Cushion: math.NaN(), BytesPerSecond: 1},
		{Cushion: 1, BytesPerSecond: 0},
		{Cushion: 1, BytesPerSecond: math.Inf(1)},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
		if _, err := Play(c, 0, nil, 0); err == nil {
			t.Errorf("Play with %+v: no error", c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
}

func TestRecorder(t *testing.T) {
	now := 0.0
	r := NewRecorder(func() float64 { return now })
	if _, err := r.Play(DefaultConfig(), 0); err == nil {
		t.Fatal("Play on an open stream: no error")
	}
	_, _ = r.Write(make([]byte, secs(2)))
	now = 4
	_, _ = r.Write(make([]byte, secs(2)))
	_, _ = r.Write(nil)
	_ = r.Close()
	now = 9
	_, _ = r.Write(make([]byte, 100)) // after the end: ignored
	if got, want := r.Bytes(), int64(secs(4)); got != want {
		t.Errorf("Bytes = %d, want %d", got, want)
	}
	got, err := r.Play(DefaultConfig(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Start: 0, End: 6, Audio: 4, Underruns: 1, Silent: 2, Longest: 2}); !near(got, want) {
		t.Errorf("Play = %+v, want %+v", got, want)
	}
}
