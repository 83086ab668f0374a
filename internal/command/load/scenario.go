package load

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Settle is how long after the last request a collector's CPU is read:
// the batch processor's timeout (200 ms here), the exporters' flushes and
// the count connector's flush_interval in the embedded default (500 ms:
// the counts of a round's last verdicts go on within it) end within it, so a
// round's CPU holds all the work its turns caused. A settle shorter than
// the flush_interval put the counts' hand-on after the reading, and made
// a longer interval look cheaper than it is (TestLoadSettlesPastTheCountsFlush
// holds the two together).
const Settle = 1500 * time.Millisecond

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
	// Warmup is how many turns a side-by-side run sends each collector
	// before its first round, not measured: the senders' connections, the
	// collector's heap and its storage files grow to their size in them.
	Warmup int
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
	Profiles      []string           `json:"profiles,omitempty"` // the pprof files written, when profiled
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
		time.Sleep(Settle)
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

// Comparison is a side-by-side run: each collector's figures, and the
// first collector's ratio to each of the others.
type Comparison struct {
	Turns       int      `json:"turns"` // sent to each, measured
	Spans       int64    `json:"spans_each"`
	Warmup      int      `json:"warmup_turns"` // sent to each before, not measured
	Concurrency int      `json:"concurrency"`  // turns in flight at once: the senders
	Rounds      int      `json:"rounds"`
	Sides       []Side   `json:"sides"`
	Ratios      []Ratio  `json:"ratios"`
	Machine     Machine  `json:"machine"`
	Profiles    []string `json:"profiles,omitempty"` // the pprof files written, when profiled
	// Breakdowns, when profiled, are where each collector's CPU went, from
	// its CPU profile (Breakdown).
	Breakdowns []SideBreakdown `json:"breakdowns,omitempty"`
}

// SideBreakdown is one collector's CPU profile broken down by part.
type SideBreakdown struct {
	Name   string  `json:"name"`
	Shares []Share `json:"shares"`
}

// SpansSent is how many spans each collector was sent over the whole run,
// the warmup's included: what a profile of the whole run covers.
func (c Comparison) SpansSent() float64 {
	return c.overWholeRun(float64(c.Spans))
}

// RequestsSent is how many requests the first collector accepted over the
// whole run, the warmup's included: what a profile of the whole run covers.
func (c Comparison) RequestsSent() float64 {
	if len(c.Sides) == 0 {
		return 0
	}
	return c.overWholeRun(float64(c.Sides[0].Requests))
}

// overWholeRun scales n, counted over the rounds' turns, to the whole run's
// (the warmup's turns are alike and were not counted).
func (c Comparison) overWholeRun(n float64) float64 {
	if c.Turns == 0 {
		return 0
	}
	return n * float64(c.Turns+c.Warmup) / float64(c.Turns)
}

// Compare runs SideBySide and gives the first collector's ratio to each
// of the others.
func Compare(ctx context.Context, cs []*Collector, o Options, rounds int) (Comparison, error) {
	cmp := Comparison{Concurrency: o.Concurrency, Rounds: max(rounds, 1), Warmup: o.Warmup}
	cmp.Machine.CPUs, cmp.Machine.LoadBefore = runtime.NumCPU(), loadAverage()
	sides, turns, err := SideBySide(ctx, cs, o, rounds)
	cmp.Machine.LoadAfter = loadAverage()
	cmp.Sides, cmp.Turns = sides, turns
	if len(sides) > 0 {
		cmp.Spans = sides[0].Spans
		for _, to := range sides[1:] {
			cmp.Ratios = append(cmp.Ratios, NewRatio(sides[0], to))
		}
	}
	return cmp, err
}

// Exact reports whether every collector whose counts were checked counted
// every turn exactly.
func (c Comparison) Exact() bool {
	for _, s := range c.Sides {
		if s.Checked && !s.Exact {
			return false
		}
	}
	return true
}

// Machine is what the run's machine was doing: the collectors' CPU is
// their own, but they share the cores and caches with whatever else runs.
type Machine struct {
	CPUs       int     `json:"cpus"`
	LoadBefore float64 `json:"load_average_before"` // 1-minute load average before the first round
	LoadAfter  float64 `json:"load_average_after"`  // and after the last (the run's own load in it)
}

// loadAverage is the machine's 1-minute load average (0 when unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// Side is what one collector of a side-by-side run measured.
type Side struct {
	Name       string  `json:"name"`
	Spans      int64   `json:"spans"`
	CPUPerSpan float64 `json:"cpu_us_per_span"`
	// RoundCPUPerSpan is each round's CPU per span, in the order run.
	RoundCPUPerSpan []float64 `json:"rounds_cpu_us_per_span"`
	// OutsideCPUPerSpan is the CPU the collector spent outside its rounds
	// (while the others were measured), per span it was sent: its
	// background work, and work a round left unfinished when its CPU was
	// read (a settle too short shows here).
	OutsideCPUPerSpan float64 `json:"outside_cpu_us_per_span"`
	// AllocPerSpan is the heap allocated per span over the run, from the
	// collector's own telemetry: what its garbage collector has to collect.
	AllocPerSpan float64 `json:"alloc_bytes_per_span,omitempty"`
	// Requests is how many requests it accepted in its rounds.
	Requests int64 `json:"requests"`
	// CommitsPerRequest is the shared store's transactions in its rounds
	// per request accepted, from the collector's own telemetry (absent for
	// a collector without shared_storage): what durability cost each
	// request in commits, at most one when its components share them.
	CommitsPerRequest float64  `json:"storage_commits_per_request,omitempty"`
	RequestP50Ms      float64  `json:"request_p50_ms"`
	RequestP99Ms      float64  `json:"request_p99_ms"`
	TurnsPerSec       float64  `json:"turns_per_second"` // over the time its rounds took to send
	Refused           int64    `json:"refused"`
	Checked           bool     `json:"counts_checked"`  // it has a PromURL
	Exact             bool     `json:"counted_exactly"` // when checked
	Differences       []string `json:"differences,omitempty"`
}

// Ratio is one collector's figures over another's, from one side-by-side
// run.
type Ratio struct {
	Of         string  `json:"of"`
	To         string  `json:"to"`
	CPUPerSpan float64 `json:"cpu_us_per_span"`
	// The least and the greatest ratio of one round's CPU per span: how far
	// a round strays from the run's ratio.
	RoundsMin    float64 `json:"cpu_rounds_min"`
	RoundsMax    float64 `json:"cpu_rounds_max"`
	RequestP50Ms float64 `json:"request_p50_ms"`
	RequestP99Ms float64 `json:"request_p99_ms"`
	TurnsPerSec  float64 `json:"turns_per_second"`
}

// NewRatio is of's figures over to's (0 where to's is 0).
func NewRatio(of, to Side) Ratio {
	r := Ratio{Of: of.Name, To: to.Name,
		CPUPerSpan:   div(of.CPUPerSpan, to.CPUPerSpan),
		RequestP50Ms: div(of.RequestP50Ms, to.RequestP50Ms),
		RequestP99Ms: div(of.RequestP99Ms, to.RequestP99Ms),
		TurnsPerSec:  div(of.TurnsPerSec, to.TurnsPerSec)}
	rounds := make([]float64, min(len(of.RoundCPUPerSpan), len(to.RoundCPUPerSpan)))
	for i := range rounds {
		rounds[i] = div(of.RoundCPUPerSpan[i], to.RoundCPUPerSpan[i])
	}
	r.RoundsMin, r.RoundsMax = MinMax(rounds)
	return r
}

// MinMax is the least and the greatest of vs (0, 0 when empty).
func MinMax(vs []float64) (lo, hi float64) {
	for i, v := range vs {
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// The collector's own counters a side-by-side run reads over its rounds:
// heap bytes allocated, and the shared store's transactions (of every
// trigger: a request's batch, a staged flush, a walk).
const (
	allocMetric   = "otelcol_process_runtime_alloc_bytes_total"
	commitsMetric = "otelcol_extension_shared_storage_commits_total"
)

// SideBySide sends the same turns to each collector, o.Warmup of them
// unmeasured, then the rest in rounds that rotate
// which goes first, one collector at a time, and reports each one's CPU per
// span (its own, read from the kernel, from the round's first request until
// its exporters have settled: a collector with a Sink until the sink has
// every span of the round, then settle), its request latency from the
// client's side, and, for a collector with a PromURL, whether it counted
// every turn exactly (the warm-up's turns too). It returns the sides in
// the order given and the turns each was sent in its rounds.
func SideBySide(ctx context.Context, cs []*Collector, o Options, rounds int) ([]Side, int, error) {
	rounds = max(rounds, 1)
	f := NewFleet(o.Installations, o.RelaunchEvery, o.Seed)
	senders := make([]*Sender, len(cs))
	bases := make([]Counts, len(cs))
	cpu, took := make([]time.Duration, len(cs)), make([]time.Duration, len(cs))
	roundCPU := make([][]float64, len(cs))
	start, alloc0, commits0 := make([]Usage, len(cs)), make([]float64, len(cs)), make([]float64, len(cs))
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
	if o.Warmup > 0 {
		got, err := warmUp(ctx, cs, f, o)
		if err != nil {
			return nil, 0, err
		}
		for k, v := range got {
			sent[k] += v
		}
	}
	for i, c := range cs {
		alloc0[i] = allocated(ctx, c)
		commits0[i], _ = ownTotal(ctx, c, commitsMetric)
	}
	for i, c := range cs {
		var err error
		if start[i], err = ProcUsage(c.Pid()); err != nil {
			return nil, 0, err
		}
	}
	per := max(o.Turns/rounds, 1)
	for r := 0; r < rounds; r++ {
		turns := make([]*Turn, per)
		for i := range turns {
			turns[i] = f.Next()
		}
		for k := range cs {
			i := (r + k) % len(cs)
			s, c := senders[i], cs[i]
			spans0, sunk0 := s.Spans.Load(), int64(0)
			if c.Sink != nil {
				sunk0 = c.Sink.Spans()
			}
			u0, err := ProcUsage(c.Pid())
			if err != nil {
				return nil, 0, err
			}
			t0 := time.Now()
			got, err := sendAll(ctx, s, turns, o.Concurrency)
			if err != nil {
				return nil, 0, err
			}
			took[i] += time.Since(t0)
			spans := s.Spans.Load() - spans0
			if c.Sink != nil {
				// The peer's queue has accepted the round; its work ends
				// when it has exported it.
				if err := c.Sink.WaitSpans(ctx, sunk0+spans, o.Timeout); err != nil {
					return nil, 0, fmt.Errorf("the %s collector's exports: %w", c.Name, err)
				}
			}
			// Let the batch processor's timeout and the exporters finish
			// with this round before its CPU is read.
			time.Sleep(Settle)
			u1, err := ProcUsage(c.Pid())
			if err != nil {
				return nil, 0, err
			}
			cpu[i] += u1.CPU - u0.CPU
			roundCPU[i] = append(roundCPU[i], float64((u1.CPU-u0.CPU).Nanoseconds())/1e3/float64(max(spans, 1)))
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
		end, err := ProcUsage(c.Pid())
		if err != nil {
			return nil, 0, err
		}
		n := float64(max(s.Spans.Load(), 1))
		lat := s.Latencies()
		sides[i] = Side{Name: c.Name, Spans: s.Spans.Load(), Requests: s.Requests.Load(), Refused: s.Refused.Load(),
			CPUPerSpan:        float64(cpu[i].Nanoseconds()) / 1e3 / n,
			RoundCPUPerSpan:   roundCPU[i],
			OutsideCPUPerSpan: float64((end.CPU - start[i].CPU - cpu[i]).Nanoseconds()) / 1e3 / n,
			RequestP50Ms:      ms(Percentile(lat, 50)), RequestP99Ms: ms(Percentile(lat, 99)),
			TurnsPerSec: float64(rounds*per) / max(took[i].Seconds(), 1e-9),
			Checked:     c.PromURL != ""}
	}
	// Read after every collector's CPU: a scrape costs CPU of its own.
	for i, c := range cs {
		if a0, a1 := alloc0[i], allocated(ctx, c); a0 > 0 && a1 > a0 {
			sides[i].AllocPerSpan = (a1 - a0) / float64(max(sides[i].Spans, 1))
		}
		if c1, ok := ownTotal(ctx, c, commitsMetric); ok && sides[i].Requests > 0 {
			sides[i].CommitsPerRequest = (c1 - commits0[i]) / float64(sides[i].Requests)
		}
	}
	for i, c := range cs {
		if c.PromURL == "" {
			continue
		}
		_, diff, err := WaitCounted(ctx, c.PromURL, bases[i].By, sent, o.Timeout)
		if err != nil {
			return sides, rounds * per, err
		}
		sides[i].Exact, sides[i].Differences = len(diff) == 0, diff
	}
	return sides, rounds * per, nil
}

// warmUp sends o.Warmup turns to each collector, with senders of its own
// (what they measure is not kept), and waits until every collector with a
// sink has exported them and settled. It returns what the first accepted.
func warmUp(ctx context.Context, cs []*Collector, f *Fleet, o Options) (Tally, error) {
	turns := make([]*Turn, o.Warmup)
	for i := range turns {
		turns[i] = f.Next()
	}
	var first Tally
	for i, c := range cs {
		s := NewSender(c.TracesURL, o.Concurrency)
		var sunk0 int64
		if c.Sink != nil {
			sunk0 = c.Sink.Spans()
		}
		got, err := sendAll(ctx, s, turns, o.Concurrency)
		if err != nil {
			return nil, fmt.Errorf("warming the %s collector up: %w", c.Name, err)
		}
		if c.Sink != nil {
			if err := c.Sink.WaitSpans(ctx, sunk0+s.Spans.Load(), o.Timeout); err != nil {
				return nil, fmt.Errorf("warming the %s collector up: %w", c.Name, err)
			}
		}
		if i == 0 {
			first = got
		}
	}
	time.Sleep(Settle)
	return first, nil
}

// allocated is the heap bytes the collector has allocated so far, from its
// own telemetry (0 when it cannot be read).
func allocated(ctx context.Context, c *Collector) float64 {
	n, _ := ownTotal(ctx, c, allocMetric)
	return n
}

// ownTotal is the sum of one of the collector's own counters over its
// series; ok is false when the collector has no such counter (or no
// telemetry to read it from).
func ownTotal(ctx context.Context, c *Collector, metric string) (n float64, ok bool) {
	if c.TelURL == "" {
		return 0, false
	}
	got, err := Scrape(ctx, c.TelURL, metric, "")
	if err != nil || got.Series == 0 {
		return 0, false
	}
	return got.By[""], true
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sendAll sends the given turns with concurrency workers.
func sendAll(ctx context.Context, s *Sender, turns []*Turn, concurrency int) (Tally, error) {
	i := 0
	next := func() *Turn { t := turns[i]; i++; return t }
	return run(ctx, s, next, len(turns), concurrency, 0, nil)
}
