package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// upstream is a real HTTP server: /bytes?n=N answers N bytes, /hello answers
// "hello"; it counts the requests it saw.
func upstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if r.URL.Path == "/bytes" {
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			w.Header().Set("Content-Length", strconv.Itoa(n))
			_, _ = w.Write(make([]byte, n))
			return
		}
		_, _ = io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func start(t *testing.T, up string, opts ...Option) *Proxy {
	t.Helper()
	p, err := Listen(up, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestForwards(t *testing.T) {
	up, _ := upstream(t)
	p := start(t, up.Listener.Addr().String())
	c := &http.Client{Transport: &http.Transport{}}
	got, err := get(t, c, p.URL()+"/hello")
	if err != nil || got != "hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	if s := p.Stats(); s.Accepted != 1 || s.BytesDown == 0 || s.BytesUp == 0 {
		t.Errorf("stats %+v", s)
	}
}

// A transfer can never beat the bandwidth: N bytes at B bytes/s take at
// least N/B (a lower bound, so the check cannot flake on a slow machine).
func TestBandwidthBoundsTransfer(t *testing.T) {
	up, _ := upstream(t)
	const bw, scale, n = 20000.0, 2.0, 16000 // 40 kB/s wall
	p := start(t, up.Listener.Addr().String(), WithTimeScale(scale), WithShape(Shape{Bandwidth: bw}))
	c := &http.Client{Transport: &http.Transport{}}
	t0 := time.Now()
	body, err := get(t, c, fmt.Sprintf("%s/bytes?n=%d", p.URL(), n))
	if err != nil || len(body) != n {
		t.Fatalf("%d bytes, %v", len(body), err)
	}
	if min := time.Duration(0.9 * n / (bw * scale) * float64(time.Second)); time.Since(t0) < min {
		t.Errorf("%d bytes in %v, faster than the bandwidth allows (%v)", n, time.Since(t0), min)
	}
}

// Two connections share the link's bandwidth: together they are no faster
// than one.
func TestBandwidthIsShared(t *testing.T) {
	up, _ := upstream(t)
	const bw, n = 40000.0, 8000
	p := start(t, up.Listener.Addr().String(), WithShape(Shape{Bandwidth: bw}))
	t0 := time.Now()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			c := &http.Client{Transport: &http.Transport{}}
			_, err := get(t, c, fmt.Sprintf("%s/bytes?n=%d", p.URL(), n))
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if min := time.Duration(0.9 * 2 * n / bw * float64(time.Second)); time.Since(t0) < min {
		t.Errorf("2×%d bytes in %v, faster than the shared bandwidth allows (%v)", n, time.Since(t0), min)
	}
}

func TestUplinkBoundsUpload(t *testing.T) {
	up, _ := upstream(t)
	const bw, n = 40000.0, 12000
	p := start(t, up.Listener.Addr().String(), WithShape(Shape{Uplink: bw}))
	t0 := time.Now()
	resp, err := http.Post(p.URL()+"/upload", "application/octet-stream", strings.NewReader(strings.Repeat("x", n)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if min := time.Duration(0.9 * n / bw * float64(time.Second)); time.Since(t0) < min {
		t.Errorf("%d bytes up in %v, faster than the uplink allows (%v)", n, time.Since(t0), min)
	}
}

func TestLatencyDelaysEachWay(t *testing.T) {
	up, _ := upstream(t)
	p := start(t, up.Listener.Addr().String(), WithShape(Shape{Latency: 0.05}))
	c := &http.Client{Transport: &http.Transport{}}
	t0 := time.Now()
	if _, err := get(t, c, p.URL()+"/hello"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el < 100*time.Millisecond {
		t.Errorf("round trip in %v with 50 ms each way", el)
	}
}

func TestStallHoldsBytesThenDelivers(t *testing.T) {
	up, _ := upstream(t)
	p := start(t, up.Listener.Addr().String(), WithTimeScale(10))
	c := &http.Client{Transport: &http.Transport{}}
	p.Stall(2) // 0.2 s wall
	t0 := time.Now()
	got, err := get(t, c, p.URL()+"/hello")
	if err != nil || got != "hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	if el := time.Since(t0); el < 190*time.Millisecond {
		t.Errorf("answered after %v during a 200 ms stall", el)
	}
}

func TestStaleConnectionSwallowsNewConnectionWorks(t *testing.T) {
	up, seen := upstream(t)
	p := start(t, up.Listener.Addr().String())
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	c := &http.Client{Transport: tr}
	if _, err := get(t, c, p.URL()+"/hello"); err != nil {
		t.Fatal(err)
	}
	if n := p.StaleOpen(); n != 1 {
		t.Fatalf("StaleOpen = %d, want the 1 kept-alive connection", n)
	}
	// The pooled connection is reused and nothing comes back.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/hello", nil)
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call on a stale connection: %v, want a timeout", err)
	}
	if seen.Load() != 1 {
		t.Errorf("engine saw %d requests, want 1 (the stale call never arrives)", seen.Load())
	}
	if p.Stats().Swallowed == 0 {
		t.Error("no swallowed bytes counted")
	}
	// A fresh connection goes through.
	fresh := &http.Client{Transport: &http.Transport{}}
	if got, err := get(t, fresh, p.URL()+"/hello"); err != nil || got != "hello" {
		t.Fatalf("fresh connection: %q, %v", got, err)
	}
}

func TestOfflineRefusesAndCuts(t *testing.T) {
	up, _ := upstream(t)
	p := start(t, up.Listener.Addr().String())
	// An open raw connection is cut when the device goes offline.
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil {
		t.Fatal(err)
	}
	p.SetOffline(true)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	var ne net.Error
	if _, err := conn.Read(make([]byte, 1)); err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Errorf("read on a cut connection: %v", err)
	}
	c := &http.Client{Transport: &http.Transport{}, Timeout: 2 * time.Second}
	if _, err := get(t, c, p.URL()+"/hello"); err == nil {
		t.Error("call while offline succeeded")
	}
	if p.Stats().Refused == 0 {
		t.Error("no refused connection counted")
	}
	p.SetOffline(false)
	if got, err := get(t, c, p.URL()+"/hello"); err != nil || got != "hello" {
		t.Fatalf("back online: %q, %v", got, err)
	}
}

func TestHoldNeverReachesEngine(t *testing.T) {
	up, seen := upstream(t)
	p := start(t, up.Listener.Addr().String())
	p.SetHold(true)
	c := &http.Client{Transport: &http.Transport{}, Timeout: 200 * time.Millisecond}
	if _, err := get(t, c, p.URL()+"/hello"); err == nil {
		t.Fatal("held call answered")
	}
	if seen.Load() != 0 || p.Stats().Held != 1 {
		t.Errorf("engine saw %d, held %d", seen.Load(), p.Stats().Held)
	}
}

func TestValidate(t *testing.T) {
	if _, err := Listen("127.0.0.1:1", WithTimeScale(0)); err == nil {
		t.Error("scale 0 accepted")
	}
	if _, err := Listen("127.0.0.1:1", WithShape(Shape{Bandwidth: -1})); err == nil {
		t.Error("negative bandwidth accepted")
	}
	if _, err := Listen(""); err == nil {
		t.Error("no upstream accepted")
	}
	p := start(t, "127.0.0.1:1")
	if err := p.SetShape(Shape{Latency: -1}); err == nil {
		t.Error("negative latency accepted")
	}
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// Connections share a shaped link fairly: a small reply waits behind at
// most a chunk or so of each busy stream, never behind the streams' whole
// backlog (which made a progress check on a slow link time out in the lab
// while a real link would have carried its few bytes in a moment). Read in
// bytes that passed meanwhile, not in time, so a slow machine cannot fail it.
func TestSmallReplyIsNotStarvedByStreams(t *testing.T) {
	up, _ := upstream(t)
	const bw, streams = 8000.0, 3
	p := start(t, up.Listener.Addr().String(), WithShape(Shape{Bandwidth: bw}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range streams {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/bytes?n=4000000", nil)
			resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
		}()
	}
	for p.Stats().BytesDown < streams*4*chunkSize {
		time.Sleep(10 * time.Millisecond)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	const limit = 3 * streams * chunkSize
	for i := range 5 {
		before := p.Stats().BytesDown
		if got, err := get(t, c, p.URL()+"/hello"); err != nil || got != "hello" {
			t.Fatalf("hello %d: %q, %v", i, got, err)
		}
		if streamed := p.Stats().BytesDown - before; streamed > limit {
			t.Errorf("hello %d waited while %d bytes of the streams passed; want at most %d (about one chunk of each stream)", i, streamed, limit)
		}
	}
}
