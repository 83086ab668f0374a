package lanes

import (
	"context"
	"fmt"
	"net/http"
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
