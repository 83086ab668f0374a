package lanes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/command/poolsim"
)

// engine is a healthy engine on loopback, its timings in person-time.
type engine struct {
	scale float64
}

func (e engine) wall(d time.Duration) time.Duration { return time.Duration(float64(d) / e.scale) }

func (e engine) secs(r *http.Request) time.Duration {
	f, _ := strconv.ParseFloat(r.URL.Query().Get("secs"), 64)
	return time.Duration(f * float64(time.Second))
}

// stream writes something every tick for d, flushing each write.
func (e engine) stream(w http.ResponseWriter, r *http.Request, d, tick time.Duration, chunk []byte) {
	end := time.Now().Add(e.wall(d))
	for time.Now().Before(end) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-time.After(e.wall(tick)):
		case <-r.Context().Done():
			return
		}
	}
}

func (e engine) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/check", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(e.wall(200 * time.Millisecond))
		fmt.Fprint(w, "alive")
	})
	mux.HandleFunc("/lines", func(w http.ResponseWriter, r *http.Request) {
		e.stream(w, r, e.secs(r), time.Second, []byte("a few of her words\n"))
	})
	mux.HandleFunc("/prepare", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(e.wall(400 * time.Millisecond))
		fmt.Fprint(w, "ticket")
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		io.Copy(io.Discard, r.Body)
		time.Sleep(e.wall(e.secs(r)) - time.Since(start)) // a slow uplink
		fmt.Fprint(w, "stored")
	})
	mux.HandleFunc("/take", func(w http.ResponseWriter, r *http.Request) {
		e.stream(w, r, e.secs(r), 500*time.Millisecond, bytes.Repeat([]byte{0x55}, 2048))
	})
	return mux
}

type burstResult struct {
	checks, missed int
	notSent        float64
	waits          []string
	errs           []error
}

// replayBurst plays docs/queueing.md's reply against a healthy engine: the turn's
// line stream from 0 s for 40.4 s; at 20 s four prepares and a 26 s upload
// of 2 MB; at 20.4 s four take streams of 14, 19, 24 and 30 s; the progress
// check every 3 s after each answer or timeout until 45 s.
func replayBurst(t *testing.T, shared bool) burstResult {
	// Half the lab's speed: a healthy check (0.2 s) stays far inside its
	// 5 s timeout (1 s of wall time) even on a busy machine.
	const scale = testScale / 2
	e := engine{scale: scale}
	srv, _ := newFreezingServer(t, e.handler())
	opts := []Option{WithTimeScale(scale)}
	if shared {
		opts = append(opts, WithSharedPool())
	}
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var (
		res  burstResult
		mu   sync.Mutex
		wg   sync.WaitGroup
		done atomic.Bool
	)
	fail := func(err error) {
		mu.Lock()
		res.errs = append(res.errs, err)
		mu.Unlock()
	}
	t0 := time.Now()
	at := func(d time.Duration) { time.Sleep(time.Until(t0.Add(e.wall(d)))) }
	drain := func(kind Kind, method, path string, body io.Reader) {
		defer wg.Done()
		req, _ := http.NewRequest(method, srv.URL+path, body)
		resp, err := c.Do(req, kind)
		if err != nil {
			fail(fmt.Errorf("%s %s: %w", kind, path, err))
			return
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			fail(fmt.Errorf("%s %s: %w", kind, path, err))
		}
	}

	wg.Add(1)
	go func() { // the turn's line stream
		defer wg.Done()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/lines?secs=40.4", nil)
		ls, err := c.Stream(req)
		if err != nil {
			fail(err)
			return
		}
		defer ls.Close()
		for {
			if _, err := ls.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					fail(fmt.Errorf("lines: %w", err))
				}
				return
			}
		}
	}()
	wg.Add(1)
	go func() { // the progress check
		defer wg.Done()
		for time.Since(t0) < e.wall(45*time.Second) {
			_, err := get(t, c, srv.URL+"/check", KindCheck)
			mu.Lock()
			res.checks++
			if err != nil {
				res.missed++
				if !errors.Is(err, ErrTimeout) {
					res.errs = append(res.errs, fmt.Errorf("check: %w", err))
				}
			}
			mu.Unlock()
			time.Sleep(e.wall(3 * time.Second))
		}
	}()
	wg.Add(1)
	go func() { // what a waiting call would show, sampled while the burst runs
		defer wg.Done()
		for !done.Load() {
			for _, w := range c.Waiting() {
				mu.Lock()
				res.waits = append(res.waits, w.Lane+" "+string(w.Kind)+": "+w.Message())
				mu.Unlock()
			}
			time.Sleep(e.wall(time.Second))
		}
	}()

	at(20 * time.Second)
	for range 4 {
		wg.Add(1)
		go drain(KindPrepare, http.MethodPost, "/prepare", nil)
	}
	wg.Add(1)
	go drain(KindUpload, http.MethodPost, "/upload?secs=26", bytes.NewReader(make([]byte, 2<<20)))
	at(20400 * time.Millisecond)
	for _, secs := range []string{"14", "19", "24", "30"} {
		wg.Add(1)
		go drain(KindTake, http.MethodGet, "/take?secs="+secs, nil)
	}
	at(46 * time.Second)
	done.Store(true)
	wg.Wait()
	res.notSent = c.TakeNotSent()
	return res
}

// TestBurstStarvesOneSharedPool: with one pool of six for everything, the
// reply's burst of bulk transfers makes the progress check miss against a
// healthy engine, and the check shows a "not sent" wait.
func TestBurstStarvesOneSharedPool(t *testing.T) {
	t.Parallel()
	r := replayBurst(t, true)
	for _, err := range r.errs {
		t.Error(err)
	}
	if r.missed < 1 {
		t.Fatalf("one shared pool: %d checks, %d missed; want at least one miss against a healthy engine", r.checks, r.missed)
	}
	if r.notSent < 5 {
		t.Errorf("longest not-sent wait %.1f s, want at least the check's 5 s", r.notSent)
	}
	if len(r.waits) == 0 {
		t.Errorf("no waiting call was visible during the burst")
	}
	t.Logf("one shared pool: %d checks, %d missed, longest not sent %.1f s; e.g. %q", r.checks, r.missed, r.notSent, first(r.waits))
	if m, err := poolsim.Run(poolsim.Case{WordsUntil: -1}); err == nil {
		t.Logf("the queueing model of the same case: %s", m.Row())
	}
}

// TestBurstSplitLanes: with control and bulk split, the same burst never
// makes the check miss and no call waits to be sent.
func TestBurstSplitLanes(t *testing.T) {
	t.Parallel()
	r := replayBurst(t, false)
	for _, err := range r.errs {
		t.Error(err)
	}
	if r.missed != 0 {
		t.Fatalf("split lanes: %d of %d checks missed, want none", r.missed, r.checks)
	}
	if r.checks < 12 {
		t.Errorf("only %d checks in 45 s", r.checks)
	}
	if r.notSent != 0 || len(r.waits) != 0 {
		t.Errorf("split lanes: not-sent %.1f s, waits %v; want none", r.notSent, r.waits)
	}
	t.Logf("split lanes: %d checks, %d missed", r.checks, r.missed)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestResponsiveness: under a lane full of bulk transfers the control round
// trip on loaded connections shows the queueing inside the client; a fresh
// connection does not. With the lanes split neither waits.
func TestResponsiveness(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			e := engine{scale: testScale}
			srv, _ := newFreezingServer(t, e.handler())
			opts := []Option{WithTimeScale(testScale), WithConnsPerHost(2),
				WithPolicy(KindRTT, Policy{Lane: semconv.LaneControl, Timeout: 15 * time.Second})}
			if shared {
				opts = append(opts, WithSharedPool())
			}
			c, err := New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			wg := startTakes(t, c, srv.URL+"/take?secs=6", 2, c.Bulk().Name())
			time.Sleep(e.wall(500 * time.Millisecond))
			rt, err := c.Responsiveness(context.Background(), srv.URL+"/check")
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			// Both round trips run at once, so a pause of the machine lengthens
			// both: what is read is their difference, the queueing inside the
			// client, never an absolute time.
			if rt.Fresh <= 0 || rt.Loaded <= 0 {
				t.Errorf("round trips loaded %.2f s, fresh %.2f s; want both measured", rt.Loaded, rt.Fresh)
			}
			if shared && rt.Loaded < rt.Fresh+3 {
				t.Errorf("shared pool: loaded %.2f s vs fresh %.2f s; want the wait behind the transfers to show", rt.Loaded, rt.Fresh)
			}
			if !shared && rt.Loaded > rt.Fresh+2.5 {
				t.Errorf("split lanes: loaded %.2f s vs fresh %.2f s, want no queueing", rt.Loaded, rt.Fresh)
			}
			t.Logf("loaded %.2f s, fresh %.2f s", rt.Loaded, rt.Fresh)
		})
	}
}
