package lanes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
)

const testScale = 10 // 10 s of person-time in 1 s

func echo(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Query().Get("id")) }

func get(t testing.TB, c *Client, url string, kind Kind) (string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := c.Fetch(req, kind, 1<<20)
	return string(data), err
}

type hookLog struct {
	mu    sync.Mutex
	calls []CallEnd
}

func (h *hookLog) add(e CallEnd) {
	h.mu.Lock()
	h.calls = append(h.calls, e)
	h.mu.Unlock()
}

func (h *hookLog) outcomes(kind Kind, outcome string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.calls {
		if c.Kind == kind && c.Outcome == outcome {
			n++
		}
	}
	return n
}

// TestStaleConnectionHealsOnce: a server that accepts and then never answers
// on its connections. Two checks time out on the stale kept-alive
// connections, the pool resets once, later calls succeed on fresh
// connections, the tally is 1 and every reply reaches its own caller.
func TestStaleConnectionHealsOnce(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(3)
	barrier := make(chan struct{})
	go func() { arrived.Wait(); close(barrier) }()
	mux := http.NewServeMux()
	mux.HandleFunc("/warm", func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-barrier // three calls at once: three kept-alive connections
		echo(w, r)
	})
	mux.HandleFunc("/echo", echo)
	srv, fl := newFreezingServer(t, mux)

	tel := newTelemetry(t)
	hooks := &hookLog{}
	var resets []Reset
	var rmu sync.Mutex
	c, err := New(append(tel.options(), WithTimeScale(testScale), WithCallHook(hooks.add),
		WithResetHook(func(r Reset) { rmu.Lock(); resets = append(resets, r); rmu.Unlock() }))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("warm%d", i)
			if got, err := get(t, c, srv.URL+"/warm?id="+id, KindCheck); err != nil || got != id {
				t.Errorf("warm-up %s: got %q, %v", id, got, err)
			}
		}()
	}
	wg.Wait()
	if n := fl.freeze(); n != 3 {
		t.Fatalf("%d connections before the freeze, want 3", n)
	}

	for _, id := range []string{"a", "b"} {
		_, err := get(t, c, srv.URL+"/echo?id="+id, KindCheck)
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("call %s on a stale connection: err %v, want ErrTimeout", id, err)
		}
	}
	if got := c.Resets(); got != 1 {
		t.Fatalf("after two timeouts in a row: %d resets, want 1", got)
	}
	before := fl.accepted()
	// Later calls, some at once, each must get its own reply.
	for round := range 3 {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("r%dc%d", round, i)
				got, err := get(t, c, srv.URL+"/echo?id="+id, KindCheck)
				if err != nil {
					t.Errorf("call %s after the heal: %v", id, err)
				} else if got != id {
					t.Errorf("call %s got the reply %q: a reply reached the wrong caller", id, got)
				}
			}()
		}
		wg.Wait()
	}
	if fl.accepted() <= before {
		t.Errorf("no fresh connection after the heal (%d accepted before, %d after)", before, fl.accepted())
	}
	if got := c.Resets(); got != 1 {
		t.Errorf("tally %d after healthy calls, want 1", got)
	}
	if got := c.Control().Session(); got != 2 {
		t.Errorf("control session %d, want 2", got)
	}
	if v, ok := tel.sum(t, semconv.MetricPoolResets, semconv.LaneControl); !ok || v != 1 {
		t.Errorf("%s{control} = %d (present %v), want 1", semconv.MetricPoolResets, v, ok)
	}
	if v, _ := tel.sum(t, semconv.MetricRepliesInFlight, semconv.LaneControl); v != 0 {
		t.Errorf("%s{control} = %d after every call ended, want 0", semconv.MetricRepliesInFlight, v)
	}
	rmu.Lock()
	if len(resets) != 1 || resets[0].Trigger != semconv.CallOutcomeTimeout || resets[0].Lane != semconv.LaneControl {
		t.Errorf("reset hook saw %+v, want one control reset triggered by a timeout", resets)
	}
	rmu.Unlock()
	if n := hooks.outcomes(KindCheck, semconv.CallOutcomeTimeout); n != 2 {
		t.Errorf("%d timed-out checks, want 2", n)
	}
	// The reset is an event on the span of the call that completed the streak.
	found := false
	for _, s := range tel.spans.Ended() {
		for _, e := range s.Events() {
			if e.Name == semconv.EventPoolReset {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no %s span event recorded", semconv.EventPoolReset)
	}
}

// TestHealDoesNotFeedItself replays the number-collision sequence of the heal
// that fed itself: calls in flight on the old session while new ones start
// on the new session with the same per-session numbers. Every reply reaches
// its own caller, a timeout on the old session after the heal does not count
// toward the next one, and there is no second reset — with no spacing to
// hide one.
func TestHealDoesNotFeedItself(t *testing.T) {
	for _, feed := range []bool{false, true} {
		name := "fixed"
		if feed {
			name = "old-behaviour-feeds-itself"
		}
		t.Run(name, func(t *testing.T) { healReplay(t, feed) })
	}
}

func healReplay(t *testing.T, feedRetired bool) {
	release := make(chan struct{})
	var holding atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		holding.Add(1)
		select {
		case <-release:
			echo(w, r)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv, _ := newFreezingServer(t, mux)
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	defer releaseAll() // before the server closes: handlers return

	hooks := &hookLog{}
	c, err := New(WithTimeScale(testScale), WithResetSpacing(0), WithCallHook(hooks.add), WithConnsPerHost(8))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.cfg.feedRetired = feedRetired

	type result struct {
		id, got string
		err     error
	}
	results := make(chan result, 16)
	hold := func(id string, kind Kind) {
		got, err := get(t, c, srv.URL+"/hold?id="+id, kind)
		results <- result{id, got, err}
	}
	waitHolding := func(n int32) {
		deadline := time.Now().Add(5 * time.Second)
		for holding.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("server holds %d calls, want %d", holding.Load(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	// Old session: three calls held (numbers 1..3), and a grant that will
	// time out only after the heal (20 s person-time).
	for i := range 3 {
		go hold(fmt.Sprintf("old%d", i), KindEnsure)
	}
	waitHolding(3)
	grantDone := make(chan error, 1)
	go func() {
		_, err := get(t, c, srv.URL+"/stall", KindGrant)
		grantDone <- err
	}()
	// Two checks time out in a row: the heal.
	for range 2 {
		if _, err := get(t, c, srv.URL+"/stall", KindCheck); !errors.Is(err, ErrTimeout) {
			t.Fatalf("check: %v, want ErrTimeout", err)
		}
	}
	if c.Resets() != 1 {
		t.Fatalf("%d resets after two timeouts, want 1", c.Resets())
	}
	// New session: three calls whose numbers collide with the old ones.
	for i := range 3 {
		go hold(fmt.Sprintf("new%d", i), KindEnsure)
	}
	waitHolding(6)
	// The old session's grant times out now, after the heal.
	if err := <-grantDone; !errors.Is(err, ErrTimeout) {
		t.Fatalf("grant on the old session: %v, want ErrTimeout", err)
	}
	// One more check times out on the new session.
	if _, err := get(t, c, srv.URL+"/stall", KindCheck); !errors.Is(err, ErrTimeout) {
		t.Fatalf("check: %v, want ErrTimeout", err)
	}
	wantResets := 1
	if feedRetired {
		wantResets = 2 // the old grant's timeout plus one fresh miss: the loop
	}
	if got := c.Resets(); got != wantResets {
		t.Fatalf("%d resets, want %d", got, wantResets)
	}
	if feedRetired {
		return
	}
	releaseAll()
	for range 6 {
		r := <-results
		if r.err != nil {
			t.Errorf("held call %s: %v (an extra timeout)", r.id, r.err)
		} else if r.got != r.id {
			t.Errorf("held call %s got %q: a reply reached the wrong caller", r.id, r.got)
		}
	}
	// The numbers did collide across sessions, and each call finished on the
	// session it started on.
	bySession := map[int]map[uint64]bool{}
	hooks.mu.Lock()
	for _, e := range hooks.calls {
		if e.Kind != KindEnsure {
			continue
		}
		if bySession[e.Session] == nil {
			bySession[e.Session] = map[uint64]bool{}
		}
		bySession[e.Session][e.Seq] = true
	}
	hooks.mu.Unlock()
	collide := 0
	for seq := range bySession[1] {
		if bySession[2][seq] {
			collide++
		}
	}
	if len(bySession[1]) != 3 || len(bySession[2]) != 3 || collide == 0 {
		t.Errorf("held calls by session %v: want 3 on each session with shared numbers", bySession)
	}
	if n := hooks.outcomes(KindEnsure, semconv.CallOutcomeTimeout); n != 0 {
		t.Errorf("%d held calls timed out, want 0", n)
	}
	if got := c.Resets(); got != 1 {
		t.Errorf("%d resets at the end, want 1", got)
	}
}

// TestStreamsHealTheBulkLane: take streams that stall mid-reply and a stream
// whose connection breaks report themselves, so the bulk lane heals too.
func TestStreamsHealTheBulkLane(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first bytes"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/lost", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("part"))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	srv, _ := newFreezingServer(t, mux)
	hooks := &hookLog{}
	c, err := New(WithTimeScale(testScale), WithCallHook(hooks.add), WithResetSpacing(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read := func(path string) error {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		resp, err := c.Do(req, KindTake)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	if err := read("/stall"); !errors.Is(err, ErrStalled) {
		t.Fatalf("stalled take: %v, want ErrStalled", err)
	}
	if err := read("/lost"); err == nil {
		t.Fatal("take whose connection broke: no error")
	}
	if got := c.Bulk().Resets(); got != 1 {
		t.Fatalf("bulk resets %d after a stall and a lost stream, want 1", got)
	}
	if c.Control().Resets() != 0 {
		t.Errorf("control lane reset by bulk failures")
	}
	if hooks.outcomes(KindTake, semconv.CallOutcomeStalled) != 1 || hooks.outcomes(KindTake, semconv.CallOutcomeLost) != 1 {
		t.Errorf("outcomes %+v, want one stalled and one lost take", hooks.calls)
	}
}

// TestProbeHealsStaleBulk: the quiet probe finds a stale bulk pool that the
// control lane answering says nothing about.
func TestProbeHealsStaleBulk(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	barrier := make(chan struct{})
	go func() { arrived.Wait(); close(barrier) }()
	mux := http.NewServeMux()
	mux.HandleFunc("/ping", echo)
	mux.HandleFunc("/warm", func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-barrier
		echo(w, r)
	})
	srv, fl := newFreezingServer(t, mux)
	c, err := New(WithTimeScale(testScale))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 2 { // two kept-alive bulk connections at once
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Probe(ctx, srv.URL+"/warm"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Make both probes' connections stale, then control still answers on a
	// connection opened after the freeze.
	fl.freeze()
	if _, err := get(t, c, srv.URL+"/ping?id=x", KindCheck); err != nil {
		t.Fatalf("control after the freeze: %v", err)
	}
	for range 2 {
		if _, err := c.Probe(ctx, srv.URL+"/ping"); !errors.Is(err, ErrTimeout) {
			t.Fatalf("probe on a stale bulk connection: %v, want ErrTimeout", err)
		}
	}
	if c.Bulk().Resets() != 1 {
		t.Fatalf("bulk resets %d, want 1", c.Bulk().Resets())
	}
	if st, err := c.Probe(ctx, srv.URL+"/ping"); err != nil || st != http.StatusOK {
		t.Fatalf("probe after the heal: %d, %v", st, err)
	}
}

// TestResetSpacing: a lane heals at most once per spacing; a heal that is
// due within it is held back (counted as suppressed) and happens on the next
// failure after the spacing has passed.
func TestResetSpacing(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv, _ := newFreezingServer(t, mux)
	c, err := New(WithTimeScale(testScale), WithResetSpacing(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 4 { // 20 s of person-time: well within the spacing
		get(t, c, srv.URL+"/stall", KindCheck)
	}
	if got := c.Resets(); got != 1 {
		t.Fatalf("%d resets from 4 timeouts within the spacing, want 1", got)
	}
	if got := c.Control().Suppressed(); got != 1 {
		t.Fatalf("%d suppressed heals, want 1", got)
	}
	// Past the spacing, the next failure completes the held-back heal.
	time.Sleep(c.cfg.wall(60 * time.Second))
	get(t, c, srv.URL+"/stall", KindCheck)
	if got := c.Resets(); got != 2 {
		t.Fatalf("%d resets after the spacing passed, want 2", got)
	}
}
