package load

import (
	"context"
	"fmt"
	"time"
)

// settle is how long after the last request a collector's CPU is read: the
// batch processor's timeout (200 ms here) and the exporters' flushes end
// within it.
const settle = 500 * time.Millisecond

// Options are one load run's settings.
type Options struct {
	Installations int
	Turns         int
	RelaunchEvery int
	Concurrency   int
	Rate          float64 // turns per second; 0: as fast as accepted
	Seed          uint64
	Probe         int           // turns sent after the run and timed until counted
	Timeout       time.Duration // how long the counts may take to be exact
}

// Target is the collector a run sends to.
type Target struct {
	TracesURL string
	PromURL   string // "" skips the count check
	Pid       int    // 0 skips CPU and memory
	Token     string
}

// Report is what a run measured.
type Report struct {
	Turns         int                `json:"turns"`
	Spans         int64              `json:"spans"`
	Installations int                `json:"installations"`
	Launches      int                `json:"launches"`
	Seconds       float64            `json:"seconds"`
	TurnsPerSec   float64            `json:"turns_per_second"`
	Requests      int64              `json:"requests"`
	Refused       int64              `json:"refused"`
	Failed        int64              `json:"failed"`
	Sent          Tally              `json:"sent_by_cause"`
	Counted       map[string]float64 `json:"counted_by_cause,omitempty"`
	Exact         bool               `json:"counted_exactly"`
	Differences   []string           `json:"differences,omitempty"`
	Series        int                `json:"turns_series"`
	CPUPerSpan    float64            `json:"cpu_us_per_span,omitempty"`
	RequestP50Ms  float64            `json:"request_p50_ms"`
	RequestP99Ms  float64            `json:"request_p99_ms"`
	RSS           int64              `json:"rss_bytes,omitempty"`
	PeakRSS       int64              `json:"peak_rss_bytes,omitempty"`
	ProbeTurns    int                `json:"probe_turns,omitempty"`
	ProbeSeconds  float64            `json:"probe_seconds_to_count,omitempty"`
	ProbeExact    bool               `json:"probe_counted_exactly,omitempty"`
}

// Drive sends o.Turns turns of a fleet to the target, checks that the
// collector counted each exactly once by cause, and, with o.Probe, sends
// that many more and times how long they take to be counted.
func Drive(ctx context.Context, t Target, o Options) (Report, error) {
	r := Report{Installations: o.Installations}
	f := NewFleet(o.Installations, o.RelaunchEvery, o.Seed)
	s := NewSender(t.TracesURL, o.Concurrency)
	s.Token = t.Token
	var base Counts
	if t.PromURL != "" {
		var err error
		if base, err = Turns(ctx, t.PromURL); err != nil {
			return r, fmt.Errorf("load: reading the counts before the run: %w", err)
		}
	}
	var u0 Usage
	if t.Pid > 0 {
		u0, _ = ProcUsage(t.Pid)
	}
	start := time.Now()
	sent, err := Run(ctx, s, f, o.Turns, o.Concurrency, o.Rate, nil)
	elapsed := time.Since(start)
	r.Sent, r.Turns = sent, sent.Total()
	r.Seconds, r.TurnsPerSec = elapsed.Seconds(), float64(r.Turns)/elapsed.Seconds()
	r.Requests, r.Refused, r.Failed, r.Spans = s.Requests.Load(), s.Refused.Load(), s.Failed.Load(), s.Spans.Load()
	for i := range f.launches {
		r.Launches += f.launches[i] + 1
	}
	lat := s.Latencies()
	r.RequestP50Ms, r.RequestP99Ms = ms(Percentile(lat, 50)), ms(Percentile(lat, 99))
	if err != nil {
		return r, err
	}
	if t.Pid > 0 {
		// The CPU of the turns, read before the counts are scraped (a
		// scrape costs the collector CPU of its own).
		time.Sleep(settle)
		u1, err := ProcUsage(t.Pid)
		if err == nil {
			r.CPUPerSpan = float64((u1.CPU - u0.CPU).Microseconds()) / float64(max(r.Spans, 1))
			r.RSS, r.PeakRSS = u1.RSS, u1.HWM
		}
	}
	if t.PromURL != "" {
		c, diff, err := WaitCounted(ctx, t.PromURL, base.By, sent, o.Timeout)
		if err != nil {
			return r, err
		}
		r.Counted, r.Differences, r.Exact, r.Series = minus(c.By, base.By), diff, len(diff) == 0, c.Series
	}
	if o.Probe > 0 && t.PromURL != "" {
		c0, err := Turns(ctx, t.PromURL)
		if err != nil {
			return r, err
		}
		p0 := time.Now()
		probe, err := Run(ctx, s, f, o.Probe, o.Concurrency, 0, nil)
		if err != nil {
			return r, err
		}
		_, diff, exact, err := waitCounted(ctx, t.PromURL, c0.By, probe, o.Timeout)
		if err != nil {
			return r, err
		}
		r.ProbeTurns, r.ProbeExact = probe.Total(), len(diff) == 0
		if !exact.IsZero() {
			r.ProbeSeconds = exact.Sub(p0).Seconds() // from the first turn sent to its count
		}
		if t.Pid > 0 {
			if u, err := ProcUsage(t.Pid); err == nil {
				r.RSS, r.PeakRSS = u.RSS, u.HWM
			}
		}
	}
	return r, nil
}

func minus(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Comparison is the default pipeline's CPU per span against the stock
// pass-through's, measured side by side on the same turns.
type Comparison struct {
	Turns           int      `json:"turns"`
	Spans           int64    `json:"spans_each"`
	DefaultCPUPerSp float64  `json:"default_cpu_us_per_span"`
	PassCPUPerSpan  float64  `json:"passthrough_cpu_us_per_span"`
	Ratio           float64  `json:"ratio"`
	DefaultP99Ms    float64  `json:"default_request_p99_ms"`
	PassP99Ms       float64  `json:"passthrough_request_p99_ms"`
	Exact           bool     `json:"default_counted_exactly"`
	Differences     []string `json:"differences,omitempty"`
}

// Compare sends the same turns, in rounds that alternate which goes
// first, to the default collector and to the pass-through, and reports each
// one's CPU per span and their ratio. Only the collectors' CPU is counted,
// read from /proc; the generator's is its own.
func Compare(ctx context.Context, def, pass *Collector, o Options, rounds int) (Comparison, error) {
	var cmp Comparison
	uncounted := *pass
	uncounted.PromURL = "" // the pass-through counts nothing
	sides, turns, err := SideBySide(ctx, []*Collector{def, &uncounted}, o, rounds)
	if err != nil {
		return cmp, err
	}
	d, p := sides[0], sides[1]
	cmp.Turns, cmp.Spans = turns, d.Spans
	cmp.DefaultCPUPerSp, cmp.PassCPUPerSpan = d.CPUPerSpan, p.CPUPerSpan
	if cmp.PassCPUPerSpan > 0 {
		cmp.Ratio = cmp.DefaultCPUPerSp / cmp.PassCPUPerSpan
	}
	cmp.DefaultP99Ms, cmp.PassP99Ms = d.RequestP99Ms, p.RequestP99Ms
	cmp.Exact, cmp.Differences = d.Exact, d.Differences
	return cmp, nil
}

// Side is what one collector of a side-by-side run measured.
type Side struct {
	Name         string   `json:"name"`
	Spans        int64    `json:"spans"`
	CPUPerSpan   float64  `json:"cpu_us_per_span"`
	RequestP50Ms float64  `json:"request_p50_ms"`
	RequestP99Ms float64  `json:"request_p99_ms"`
	TurnsPerSec  float64  `json:"turns_per_second"` // over the time its rounds took to send
	Refused      int64    `json:"refused"`
	Exact        bool     `json:"counted_exactly"` // with a PromURL
	Differences  []string `json:"differences,omitempty"`
}

// SideBySide sends the same turns to each collector, in rounds that rotate
// which goes first, one collector at a time, and reports each one's CPU per
// span (its own, read from /proc, from the round's first request until its
// exporters have settled), its request latency from the client's side, and,
// for a collector with a PromURL, whether it counted every turn exactly. It
// returns the sides in the order given and the turns each was sent.
func SideBySide(ctx context.Context, cs []*Collector, o Options, rounds int) ([]Side, int, error) {
	rounds = max(rounds, 1)
	f := NewFleet(o.Installations, o.RelaunchEvery, o.Seed)
	senders := make([]*Sender, len(cs))
	bases := make([]Counts, len(cs))
	cpu, took := make([]time.Duration, len(cs)), make([]time.Duration, len(cs))
	for i, c := range cs {
		senders[i] = NewSender(c.TracesURL, o.Concurrency)
		if c.PromURL != "" {
			var err error
			if bases[i], err = Turns(ctx, c.PromURL); err != nil {
				return nil, 0, err
			}
		}
	}
	sent := Tally{}
	per := max(o.Turns/rounds, 1)
	for r := 0; r < rounds; r++ {
		turns := make([]*Turn, per)
		for i := range turns {
			turns[i] = f.Next()
		}
		for k := range cs {
			i := (r + k) % len(cs)
			u0, err := ProcUsage(cs[i].Pid())
			if err != nil {
				return nil, 0, err
			}
			start := time.Now()
			got, err := sendAll(ctx, senders[i], turns, o.Concurrency)
			if err != nil {
				return nil, 0, err
			}
			took[i] += time.Since(start)
			// Let the batch processor's timeout and the exporters finish
			// with this round before its CPU is read.
			time.Sleep(settle)
			u1, err := ProcUsage(cs[i].Pid())
			if err != nil {
				return nil, 0, err
			}
			cpu[i] += u1.CPU - u0.CPU
			if i == 0 {
				for k, v := range got {
					sent[k] += v
				}
			}
		}
	}
	sides := make([]Side, len(cs))
	for i, c := range cs {
		s := senders[i]
		lat := s.Latencies()
		sides[i] = Side{Name: c.Name, Spans: s.Spans.Load(), Refused: s.Refused.Load(),
			CPUPerSpan:   float64(cpu[i].Microseconds()) / float64(max(s.Spans.Load(), 1)),
			RequestP50Ms: ms(Percentile(lat, 50)), RequestP99Ms: ms(Percentile(lat, 99)),
			TurnsPerSec: float64(rounds*per) / max(took[i].Seconds(), 1e-9)}
		if c.PromURL == "" {
			continue
		}
		_, diff, err := WaitCounted(ctx, c.PromURL, bases[i].By, sent, o.Timeout)
		if err != nil {
			return sides, sent.Total(), err
		}
		sides[i].Exact, sides[i].Differences = len(diff) == 0, diff
	}
	return sides, sent.Total(), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sendAll sends the given turns with concurrency workers.
func sendAll(ctx context.Context, s *Sender, turns []*Turn, concurrency int) (Tally, error) {
	i := 0
	next := func() *Turn { t := turns[i]; i++; return t }
	return run(ctx, s, next, len(turns), concurrency, 0, nil)
}
