package load_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/verdict"
)

// These tests run the real percause binary on the embedded default's file
// (collector-config/local.yaml), send it realistic turns with the load
// tool, and check the delivery guarantees of docs/decisions/0220.

func localYAML() string { return filepath.Join(testenv.RepoRoot(), "collector-config", "local.yaml") }

func startCollector(t *testing.T, name string, configs ...string) *load.Collector {
	t.Helper()
	return startCollectorEnv(t, name, nil, configs...)
}

func startCollectorEnv(t *testing.T, name string, env []string, configs ...string) *load.Collector {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	c, err := load.StartCollector(context.Background(), testenv.PercauseBin(t), name, t.TempDir(), configs, load.WithEnv(env...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(c.DataDir), name+".log")); err == nil {
				t.Logf("--- %s collector log ---\n%s", name, tail(b, 8000))
			}
		}
	})
	return c
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// TestRefusalsCountedOnce: under memory_limiter refusals (a limit low
// enough to bite under load), a client that sends every refused request
// again gets every turn counted exactly once, per cause: nothing refused is
// lost, nothing retried is counted twice. The wait is long here: a take
// refused again and again for longer than the usual 5 s would rightly make
// its turn unknown, which is the wait's business, not delivery's.
//
// Whether the limiter bites within one round depends on when the heap
// crosses the soft limit, which varies from machine to machine (a round has
// ended just before its first refusal). So the rounds go on, each with new
// turns and each checked exactly, until one has been refused; only if none
// of refusalRounds rounds was refused does the test fail as proving nothing.
func TestRefusalsCountedOnce(t *testing.T) {
	const refusalRounds = 5
	c := startCollectorEnv(t, "lowmem", []string{"PERCAUSE_VERDICT_WAIT=60s"}, localYAML(), filepath.Join("testdata", "lowmem.yaml"))
	for round := range refusalRounds {
		r, err := load.Drive(context.Background(),
			load.Target{TracesURL: c.TracesURL, PromURL: c.PromURL, Pid: c.Pid()},
			load.Options{Installations: 200, Turns: 6000, RelaunchEvery: 3, Concurrency: 64, Seed: uint64(7 + round), Timeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d turns, %d requests accepted, %d refused and sent again; counted %v", round+1, r.Turns, r.Requests, r.Refused, r.Counted)
		if !r.Exact {
			t.Fatalf("round %d: counts differ from what was sent: %v", round+1, r.Differences)
		}
		if r.Refused > 0 {
			return
		}
	}
	t.Fatalf("memory_limiter refused nothing in %d rounds: the test's limit no longer bites, so it proves nothing (lower it in testdata/lowmem.yaml)", refusalRounds)
}

// TestCrashLosesNoAcceptedTurn: turns stream in, the collector is killed
// with SIGKILL mid-stream and restarted on the same data folder and ports;
// the client sends again what got no answer. Every turn ends with exactly
// one verdict in the verdict file, the one its cause should get. The
// counters are checked across the restart too: the old process is scraped
// as Prometheus would, and what its last scrape and the new process count
// together is never more than the turns sent of each cause (nothing
// counted twice), and short of it by no more than the verdicts decided
// after that last scrape (the increments a dead process takes with it).
func TestCrashLosesNoAcceptedTurn(t *testing.T) {
	c := startCollector(t, "crash")
	const turns = 15000
	f := load.NewFleet(500, 4, 11)
	s := load.NewSender(c.TracesURL, 32)
	var mu sync.Mutex
	want := map[string]string{}
	var accepted atomic.Int64
	done := make(chan error, 1)
	go func() {
		_, err := load.Run(context.Background(), s, f, turns, 32, 0, func(tr *load.Turn) {
			mu.Lock()
			want[tr.TraceID.String()] = tr.Cause
			mu.Unlock()
			accepted.Add(1)
		})
		done <- err
	}()
	scraper := scrapeUntilKilled(c.PromURL)
	testenv.WaitFor(t, 60*time.Second, "a few thousand turns accepted", func() bool { return accepted.Load() >= 3000 })
	killedAt := time.Now()
	c.Kill()
	beforeKill := accepted.Load()
	old := scraper.stop()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d turns accepted before the kill, %d in all; %d requests sent again after no answer", beforeKill, len(want), s.Failed.Load())

	var got map[string][]string
	var decided map[string]time.Time
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if got, decided = readVerdicts(t, c.Verdicts); len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	checkCountersAcrossTheKill(t, c, want, decided, old, killedAt)
	var missing, twice, wrong int
	for id, cause := range want {
		vs := got[id]
		switch {
		case len(vs) == 0:
			missing++
		case len(vs) > 1:
			twice++
		case vs[0] != cause:
			wrong++
			if wrong <= 3 {
				t.Errorf("trace %s: verdict %s, want %s", id, vs[0], cause)
			}
		}
	}
	dup, _ := load.Scrape(context.Background(), c.TelURL, "otelcol_exporter_verdicts_duplicate_total", "")
	t.Logf("%d turns sent, %d with a verdict; %d without, %d with more than one, %d wrong; %v verdicts decided again after the restart and written once",
		len(want), len(got), missing, twice, wrong, dup.By[""])
	if missing+twice+wrong > 0 {
		t.Fatalf("after the kill: %d turns without a verdict, %d with more than one, %d with the wrong one", missing, twice, wrong)
	}
}

// readVerdicts reads the verdict file: causes by trace ID, in file order,
// and when the first verdict of each was decided.
func readVerdicts(t *testing.T, path string) (map[string][]string, map[string]time.Time) {
	t.Helper()
	out, decided := map[string][]string{}, map[string]time.Time{}
	f, err := os.Open(path)
	if err != nil {
		return out, decided
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		vs, err := verdict.Parse(sc.Bytes())
		if err != nil {
			t.Fatalf("a line of the verdict file is not OTLP/JSON: %v", err)
		}
		for _, v := range vs {
			id := v.TraceID.String()
			out[id] = append(out[id], v.Cause)
			if _, ok := decided[id]; !ok {
				decided[id] = v.Decided.AsTime()
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, decided
}

// scraper reads a Prometheus endpoint every few milliseconds, as a fast
// Prometheus would, and keeps the last scrape that answered.
type scraper struct {
	quit chan struct{}
	done chan struct{}
	last load.Counts
	at   time.Time
}

func scrapeUntilKilled(url string) *scraper {
	s := &scraper{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.quit:
				return
			case <-time.After(20 * time.Millisecond):
			}
			at := time.Now()
			if c, err := load.Turns(context.Background(), url); err == nil {
				s.last, s.at = c, at
			}
		}
	}()
	return s
}

// stop ends the scraping and returns the last scrape.
func (s *scraper) stop() *scraper {
	close(s.quit)
	<-s.done
	return s
}

// countsWait is the count connector's flush_interval in the embedded
// default: how long a stored verdict's counts may wait to be handed on.
const countsWait = 500 * time.Millisecond

// checkCountersAcrossTheKill holds the old process's last scrape and the
// new process's counts to the turns sent, by cause.
func checkCountersAcrossTheKill(t *testing.T, c *load.Collector, want map[string]string, decided map[string]time.Time, old *scraper, killedAt time.Time) {
	t.Helper()
	if old.at.IsZero() {
		t.Fatal("the old process was never scraped: the counters were not checked across the kill")
	}
	sent := map[string]float64{}
	// Decided by the old process after its last scrape (allowing the
	// scrape's own moment, and the count connector's flush_interval, for
	// which stored counts wait to be handed on together): counted there,
	// and gone with it.
	var late float64
	for id, cause := range want {
		sent[cause]++
		if d, ok := decided[id]; ok && d.After(old.at.Add(-50*time.Millisecond-countsWait)) && !d.After(killedAt) {
			late++
		}
	}
	var now load.Counts
	var total, sentTotal float64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		n, err := load.Turns(context.Background(), c.PromURL)
		if err == nil {
			now = n
		}
		total = 0
		for _, v := range now.By {
			total += v
		}
		for _, v := range old.last.By {
			total += v
		}
		if total >= float64(len(want))-late || time.Now().After(deadline) {
			break
		}
	}
	for cause, n := range sent {
		sentTotal += n
		if got := old.last.By[cause] + now.By[cause]; got > n {
			t.Errorf("%s: %v counted across the kill (last scrape %v + after %v), %v sent: counted twice", cause, got, old.last.By[cause], now.By[cause], n)
		}
	}
	t.Logf("counters: %v at the old process's last scrape, %v since the restart, %v sent; %v verdicts decided between the last scrape and the kill", old.last.By, now.By, sentTotal, late)
	if total < sentTotal-late {
		t.Errorf("counters: %v counted across the kill, %v sent, %v decided between the last scrape and the kill: more lost than a dead process takes", total, sentTotal, late)
	}
}

// TestFleetStaysBounded: 100,000 turns from 20,000 installations, each
// relaunching every 2 turns, into the default collector: every turn is
// counted, the collector still accepts and counts new turns afterwards,
// its memory stays under 600 MiB and the verdict counters hold a number of
// series bounded by configuration, not by launches or installations.
func TestFleetStaysBounded(t *testing.T) {
	c := startCollector(t, "fleet")
	r, err := load.Drive(context.Background(),
		load.Target{TracesURL: c.TracesURL, PromURL: c.PromURL, Pid: c.Pid()},
		load.Options{Installations: 20000, Turns: 100000, RelaunchEvery: 2, Concurrency: 64, Seed: 3, Probe: 100, Timeout: 120 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d turns from %d installations in %d launches in %.1f s; %d refused; %d series of %s; RSS %d MiB (peak %d MiB); %d more turns counted in %.2f s",
		r.Turns, r.Installations, r.Launches, r.Seconds, r.Refused, r.Series, semconv.PromTurnsTotal, r.RSS>>20, r.PeakRSS>>20, r.ProbeTurns, r.ProbeSeconds)
	if !r.Exact {
		t.Fatalf("counts differ from what was sent: %v", r.Differences)
	}
	if !r.ProbeExact {
		t.Fatal("turns sent after the fleet were not counted")
	}
	if r.PeakRSS >= 600<<20 {
		t.Errorf("peak RSS %d MiB, over the 600 MiB bound", r.PeakRSS>>20)
	}
	// The processor names at most counters.installations (100) of them,
	// plus "other"; 7 causes, 2 links each.
	if bound := (100 + 1) * len(load.Causes) * 2; r.Series > bound {
		t.Errorf("%d series of %s, over the configured bound %d", r.Series, semconv.PromTurnsTotal, bound)
	}
}
