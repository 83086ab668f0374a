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
	"github.com/percause/percause/internal/load"
	"github.com/percause/percause/internal/testenv"
	"github.com/percause/percause/lab/verdicts"
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
	c, err := load.StartCollector(context.Background(), testenv.PercauseBin(t), name, t.TempDir(), configs, env...)
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
func TestRefusalsCountedOnce(t *testing.T) {
	c := startCollectorEnv(t, "lowmem", []string{"PERCAUSE_VERDICT_WAIT=60s"}, localYAML(), filepath.Join("testdata", "lowmem.yaml"))
	r, err := load.Drive(context.Background(),
		load.Target{TracesURL: c.TracesURL, PromURL: c.PromURL, Pid: c.Pid()},
		load.Options{Installations: 200, Turns: 6000, RelaunchEvery: 3, Concurrency: 64, Seed: 7, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d turns, %d requests accepted, %d refused and sent again; counted %v", r.Turns, r.Requests, r.Refused, r.Counted)
	if r.Refused == 0 {
		t.Fatal("memory_limiter refused nothing: the test's limit no longer bites, so it proves nothing (lower it in testdata/lowmem.yaml)")
	}
	if !r.Exact {
		t.Fatalf("counts differ from what was sent: %v", r.Differences)
	}
}

// TestCrashLosesNoAcceptedTurn: turns stream in, the collector is killed
// with SIGKILL mid-stream and restarted on the same data folder and ports;
// the client sends again what got no answer. Every turn ends with exactly
// one verdict in the verdict file, the one its cause should get.
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
	testenv.WaitFor(t, 60*time.Second, "a few thousand turns accepted", func() bool { return accepted.Load() >= 3000 })
	c.Kill()
	beforeKill := accepted.Load()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d turns accepted before the kill, %d in all; %d requests sent again after no answer", beforeKill, len(want), s.Failed.Load())

	var got map[string][]string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if got = readVerdicts(t, c.Verdicts); len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
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

// readVerdicts reads the verdict file: causes by trace ID, in file order.
func readVerdicts(t *testing.T, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		vs, err := verdicts.Parse(sc.Bytes())
		if err != nil {
			t.Fatalf("a line of the verdict file is not OTLP/JSON: %v", err)
		}
		for _, v := range vs {
			out[v.TraceID] = append(out[v.TraceID], v.Cause)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
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
	// The processor names at most counters.installations (1000) of them,
	// plus "other"; 7 causes, 2 links each.
	if bound := (1000 + 1) * len(load.Causes) * 2; r.Series > bound {
		t.Errorf("%d series of %s, over the configured bound %d", r.Series, semconv.PromTurnsTotal, bound)
	}
}
