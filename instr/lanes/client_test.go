package lanes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
)

func TestNewValidates(t *testing.T) {
	tests := []struct {
		opt  Option
		want string
	}{
		{WithTimeScale(0), "time scale must be a positive number"},
		{WithConnsPerHost(0), "connections per host must be at least 1"},
		{WithResetAfter(0), "reset-after must be at least 1"},
		{WithResetSpacing(-time.Second), "reset spacing must not be negative"},
		{WithNotSentAfter(-time.Second), "not-sent threshold must not be negative"},
		{WithDialTimeout(0), "dial timeout must be positive"},
		{WithPolicy("odd", Policy{Lane: "fast"}), `policy of kind "odd": lane "fast"`},
		{WithPolicy("odd", Policy{Lane: semconv.LaneControl}), "needs a positive Timeout"},
		{WithPolicy("odd", Policy{Lane: semconv.LaneStream, Timeout: time.Second}), "carries streams only"},
		{WithPolicy("odd", Policy{Lane: semconv.LaneBulk, Stream: true}), "a stream needs a positive HeaderTimeout and Idle"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			c, err := New(tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, %v; want an error saying %q", c, err, tt.want)
			}
		})
	}
	// Every problem is reported at once.
	_, err := New(WithTimeScale(-1), WithConnsPerHost(-1))
	if err == nil || !strings.Contains(err.Error(), "time scale") || !strings.Contains(err.Error(), "connections per host") {
		t.Fatalf("want both errors, got %v", err)
	}
}

func TestDefaultPoliciesValidate(t *testing.T) {
	for k, p := range DefaultPolicies() {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	want := map[Kind]string{KindCheck: semconv.LaneControl, KindPrepare: semconv.LaneControl, KindEnsure: semconv.LaneControl,
		KindGrant: semconv.LaneControl, KindTake: semconv.LaneBulk, KindUpload: semconv.LaneBulk, KindProbe: semconv.LaneBulk, KindLines: semconv.LaneStream}
	for k, lane := range want {
		if got := DefaultPolicies()[k].Lane; got != lane {
			t.Errorf("%s rides %s, want %s", k, got, lane)
		}
	}
	if DefaultPolicies()[KindCheck].Timeout != 5*time.Second || DefaultPolicies()[KindEnsure].Timeout != 60*time.Second {
		t.Errorf("check or ensure timeout changed")
	}
}

func TestUnknownKindAndClosed(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
	if _, err := c.Do(req, "teleport"); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	c.Close()
	if _, err := c.Do(req, KindCheck); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestLineStreamFreshEveryTurn: the turn's line stream opens a connection of
// its own every time and never reuses one, even while the control lane is
// full.
func TestLineStreamFreshEveryTurn(t *testing.T) {
	var mu sync.Mutex
	addrs := map[string]int{}
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/lines", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		addrs[r.RemoteAddr]++
		mu.Unlock()
		fmt.Fprint(w, "hello\nworld\n")
	})
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv, _ := newFreezingServer(t, mux)
	c, err := New(WithTimeScale(testScale), WithConnsPerHost(2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for range 2 { // fill the control lane
		wg.Add(1)
		go func() { defer wg.Done(); get(t, c, srv.URL+"/hold", KindEnsure) }()
	}
	for c.RepliesInFlight(semconv.LaneControl) < 2 {
		time.Sleep(time.Millisecond)
	}
	for turn := range 3 {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/lines", nil)
		ls, err := c.Stream(req)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		var lines []string
		for {
			l, err := ls.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		ls.Close()
		if strings.Join(lines, "|") != "hello|world" {
			t.Errorf("turn %d lines %q", turn, lines)
		}
	}
	close(release)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(addrs) != 3 {
		t.Errorf("3 turns used %d connections (%v), want 3", len(addrs), addrs)
	}
	if c.StreamLane().Resets() != 0 || c.RepliesInFlight(semconv.LaneStream) != 0 {
		t.Errorf("stream lane: %d resets, %d in flight", c.StreamLane().Resets(), c.RepliesInFlight(semconv.LaneStream))
	}
}

func TestNotSentMessage(t *testing.T) {
	tests := []struct {
		d      time.Duration
		others int
		want   string
	}{
		{20 * time.Second, 4, "not sent for 20s (4 other calls open)"},
		{2900 * time.Millisecond, 1, "not sent for 2s (1 other call open)"},
		{5 * time.Second, 0, "not sent for 5s (0 other calls open)"},
	}
	for _, tt := range tests {
		if got := NotSentMessage(tt.d, tt.others); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestHTTPClientFacade(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/new", http.StatusFound) })
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "moved") })
	srv, _ := newFreezingServer(t, mux)
	hooks := &hookLog{}
	c, err := New(WithCallHook(hooks.add))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.HTTPClient(KindRead).Get(srv.URL + "/old")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "moved" {
		t.Fatalf("body %q", body)
	}
	if n := hooks.outcomes(KindRead, semconv.CallOutcomeOK); n != 2 {
		t.Errorf("%d read calls ok, want 2 (the redirect and its target)", n)
	}
	if c.RepliesInFlight(semconv.LaneControl) != 0 {
		t.Errorf("replies left in flight")
	}
}

func TestCallerCancelDoesNotHeal(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv, _ := newFreezingServer(t, mux)
	c, err := New(WithTimeScale(testScale), WithResetAfter(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/stall", nil)
		_, err := c.Do(req, KindCheck)
		cancel()
		if err == nil || errors.Is(err, ErrTimeout) {
			t.Fatalf("caller's deadline: %v", err)
		}
	}
	if c.Resets() != 0 {
		t.Fatalf("%d resets from the caller's own cancellations", c.Resets())
	}
}

// TestLineStreamReportsStallAndLoss: the turn's line stream ends with
// ErrStalled when the engine goes silent past its idle limit and with an
// error (outcome lost) when its connection breaks; both are recorded, and
// the stream lane, having no pool, never resets.
func TestLineStreamReportsStallAndLoss(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "first words\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "first words\n")
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	})
	srv, _ := newFreezingServer(t, mux)
	hooks := &hookLog{}
	c, err := New(WithTimeScale(testScale*6), WithCallHook(hooks.add)) // 60 s idle in 1 s
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read := func(path string) error {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		ls, err := c.Stream(req)
		if err != nil {
			return err
		}
		defer ls.Close()
		for {
			if _, err := ls.Next(); err != nil {
				return err
			}
		}
	}
	if err := read("/silent"); !errors.Is(err, ErrStalled) {
		t.Errorf("silent stream: %v, want ErrStalled", err)
	}
	if err := read("/broken"); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("broken stream: %v, want an error", err)
	}
	if hooks.outcomes(KindLines, semconv.CallOutcomeStalled) != 1 || hooks.outcomes(KindLines, semconv.CallOutcomeLost) != 1 {
		t.Errorf("outcomes %+v, want one stalled and one lost line stream", hooks.calls)
	}
	if c.Resets() != 0 {
		t.Errorf("%d resets from the stream lane, want 0", c.Resets())
	}
}
