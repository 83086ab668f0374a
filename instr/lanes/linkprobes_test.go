package lanes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percause/percause/instr/linkstatus"
	"github.com/percause/percause/instr/semconv"
)

// TestSaturatedLaneIsNotTheEnginesAbsence: with one shared pool full of take
// streams whose bytes keep arriving, a check that cannot be sent must be
// diagnosed as this device's saturated lane — never "cannot be reached".
// With the front answering 503 it is the engine restarting; with nothing
// answering at all it is unreachable.
func TestSaturatedLaneIsNotTheEnginesAbsence(t *testing.T) {
	var front atomic.Int32
	front.Store(http.StatusOK)
	mux := http.NewServeMux()
	// The takes stream until the test has read the status lines: the lane
	// stays full however slowly the machine runs.
	release := make(chan struct{})
	mux.HandleFunc("/take", func(w http.ResponseWriter, r *http.Request) {
		e := engine{scale: testScale}
		for {
			if _, err := w.Write(make([]byte, 512)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-release:
				return
			case <-r.Context().Done():
				return
			case <-time.After(e.wall(200 * time.Millisecond)):
			}
		}
	})
	mux.HandleFunc("/front", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(int(front.Load())) })
	srv, _ := newFreezingServer(t, mux)
	c, err := New(WithTimeScale(testScale), WithSharedPool())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wg := startTakes(t, c, srv.URL+"/take", 6, semconv.LaneShared)
	ctx := context.Background()

	line := linkstatus.Diagnose(c.LinkProbes(ctx, srv.URL+"/front", semconv.LaneShared, true))
	if line.Status != semconv.LinkStatusLaneSaturated {
		t.Errorf("full shared lane, engine streaming: %s %q; want lane_saturated", line.Status, line.Message)
	}
	want := fmt.Sprintf("Pippa is answering; this device's %s lane is busy (6 of 6 calls open). Waiting for it to clear.", semconv.LaneShared)
	if line.Message != want {
		t.Errorf("message %q, want %q", line.Message, want)
	}

	front.Store(http.StatusServiceUnavailable)
	if line := linkstatus.Diagnose(c.LinkProbes(ctx, srv.URL+"/front", semconv.LaneShared, true)); line.Status != semconv.LinkStatusEngineRestarting {
		t.Errorf("front 503: %s", line.Status)
	}
	if line := linkstatus.Diagnose(c.LinkProbes(ctx, srv.URL+"/front", semconv.LaneShared, false)); line.Status != semconv.LinkStatusDeviceOffline {
		t.Errorf("offline: %s", line.Status)
	}
	close(release)
	wg.Wait()

	// Nothing heard for the quiet window, nothing listening: unreachable.
	quiet, err := New(WithTimeScale(testScale))
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	srv.Close()
	line = linkstatus.Diagnose(quiet.LinkProbes(ctx, srv.URL+"/front", semconv.LaneControl, true))
	if line.Status != semconv.LinkStatusUnreachable || line.Advice == "" {
		t.Errorf("nothing answers: %s %q advice %q", line.Status, line.Message, line.Advice)
	}
}

// TestPostOnAStaleConnection: a post written into a kept-alive connection
// that no longer reaches the engine is not sent: Waiting lists it, growing,
// until its timeout, and the call's span says how long it was not sent.
// The link probes read it as a stale connection: a fresh connection answers,
// the control lane's own kept-alive one does not. Before the freeze the same
// post is sent at once.
func TestPostOnAStaleConnection(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	mux := http.NewServeMux()
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/pair", func(w http.ResponseWriter, r *http.Request) {
		// Two calls at once open two kept-alive connections.
		arrived.Done()
		arrived.Wait()
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/front", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	srv, fl := newFreezingServer(t, mux)
	tel := newTelemetry(t)
	c, err := New(append(tel.options(), WithTimeScale(testScale))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	post := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/post", strings.NewReader(strings.Repeat("x", 64<<10)))
		return c.Do(req, KindPost)
	}
	var pair sync.WaitGroup
	for range 2 {
		pair.Add(1)
		go func() {
			defer pair.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/pair", nil)
			if _, _, err := c.Fetch(req, KindRead, 1<<10); err != nil {
				t.Error(err)
			}
		}()
	}
	pair.Wait()
	resp, err := post()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if w := c.Waiting(); len(w) != 0 {
		t.Fatalf("before the freeze: waiting %v", w)
	}
	if n := fl.freeze(); n != 2 {
		t.Fatalf("%d connections frozen, want the 2 kept alive", n)
	}

	done := make(chan error, 1)
	go func() {
		resp, err := post()
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	var seen Wait
	deadline := time.Now().Add(10 * time.Second)
	for seen.For < 3*time.Second && time.Now().Before(deadline) {
		for _, w := range c.Waiting() {
			if w.Kind == KindPost {
				seen = w
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if seen.For < 3*time.Second || seen.Lane != semconv.LaneControl {
		t.Fatalf("the post on a stale connection: waiting %+v, want it listed on the control lane for 3 s or more", seen)
	}
	p := c.LinkProbes(context.Background(), srv.URL+"/front", semconv.LaneControl, true)
	if line := linkstatus.Diagnose(p); line.Status != semconv.LinkStatusStaleConnection {
		t.Errorf("probes %+v: %s %q, want stale_connection", p, line.Status, line.Message)
	}
	if err := <-done; !errors.Is(err, ErrTimeout) {
		t.Fatalf("the post on a stale connection ended with %v, want a timeout", err)
	}
	var notSent []float64
	for _, s := range tel.spans.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == semconv.CallKind && kv.Value.AsString() == string(KindPost) {
				for _, a := range s.Attributes() {
					if a.Key == semconv.CallNotSent {
						notSent = append(notSent, a.Value.AsFloat64())
					}
				}
			}
		}
	}
	if len(notSent) != 2 || notSent[0] >= 1 || notSent[1] < DefaultPostTimeout.Seconds()-1 {
		t.Errorf("the posts' %s: %v, want the first sent at once and the second not sent until its %s timeout", semconv.CallNotSent, notSent, DefaultPostTimeout)
	}
}
