package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/percause/percause/lab/player"
)

const scale = 20

// marks records the production timeline the engine reports for each take.
type marks struct {
	mu    sync.Mutex
	takes map[string]*timeline
}

type timeline struct {
	start, firstByte time.Time
	progress         []float64
	ended            float64
	endCalls         int
}

func (m *marks) StartTake(_ context.Context, id string) TakeSpan {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.takes == nil {
		m.takes = map[string]*timeline{}
	}
	tl := &timeline{start: time.Now()}
	m.takes[id] = tl
	return &markSpan{m: m, tl: tl}
}

type markSpan struct {
	m  *marks
	tl *timeline
}

func (s *markSpan) FirstByte() { s.m.mu.Lock(); s.tl.firstByte = time.Now(); s.m.mu.Unlock() }
func (s *markSpan) Progress(a float64) {
	s.m.mu.Lock()
	s.tl.progress = append(s.tl.progress, a)
	s.m.mu.Unlock()
}
func (s *markSpan) End(a float64) {
	s.m.mu.Lock()
	s.tl.ended, s.tl.endCalls = a, s.tl.endCalls+1
	s.m.mu.Unlock()
}

func newEngine(t *testing.T, cfg Config, opts ...Option) (*Engine, *marks) {
	t.Helper()
	m := &marks{}
	e, err := New(append([]Option{WithConfig(cfg), WithTimeScale(scale), WithTakes(m)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, m
}

func post(t *testing.T, url string, body any, into any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if into != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// play streams a take through the player model, timing arrivals in
// person-seconds from the moment the ticket was asked for.
func play(t *testing.T, e *Engine, text string) (player.Result, int64, Ticket) {
	t.Helper()
	t0 := time.Now()
	clock := func() float64 { return time.Since(t0).Seconds() * scale }
	var tk Ticket
	if code := post(t, e.URL()+"/api/tts/prepare", TakeRequest{Text: text}, &tk); code != http.StatusOK {
		t.Fatalf("prepare: %d", code)
	}
	resp, err := http.Get(e.URL() + "/api/tts/take/" + tk.Take)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rec := player.NewRecorder(clock)
	if _, err := io.Copy(rec, resp.Body); err != nil {
		t.Fatal(err)
	}
	_ = rec.Close()
	res, err := rec.Play(player.DefaultConfig(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return res, rec.Bytes(), tk
}

const sixSeconds = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"

func TestTakeStreamsAtItsRate(t *testing.T) {
	cfg := DefaultConfig()
	e, m := newEngine(t, cfg)
	res, n, tk := play(t, e, sixSeconds)
	if tk.Audio != 6 {
		t.Fatalf("ticket audio %v, want 6", tk.Audio)
	}
	if want := int64(6 * cfg.BytesPerSecond); n != want {
		t.Errorf("streamed %d bytes, want %d", n, want)
	}
	if res.Underruns != 0 || math.Abs(res.Audio-6) > 1e-9 {
		t.Errorf("healthy take played %+v", res)
	}
	m.mu.Lock()
	tl := m.takes[tk.Take]
	m.mu.Unlock()
	if tl == nil || tl.endCalls != 1 || tl.ended != 6 {
		t.Fatalf("timeline %+v", tl)
	}
	if fb := tl.firstByte.Sub(tl.start).Seconds() * scale; fb < cfg.FirstByte*0.9 {
		t.Errorf("first byte after %.2f s, before the %.2f s delay", fb, cfg.FirstByte)
	}
	if got, want := len(tl.progress), int(6/cfg.Chunk); got != want {
		t.Errorf("%d progress marks, want %d", got, want)
	}
	for i := 1; i < len(tl.progress); i++ {
		if tl.progress[i] <= tl.progress[i-1] {
			t.Fatalf("progress not increasing: %v", tl.progress)
		}
	}
}

// A take made at half real time cannot play through a 1.5 s cushion: the
// player model, fed the real bytes, hears it break up.
func TestSlowSynthesisUnderruns(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rate = 0.5
	e, _ := newEngine(t, cfg)
	res, _, _ := play(t, e, sixSeconds)
	if res.Underruns == 0 || res.Silent <= 0 {
		t.Errorf("a take at half real time played without a gap: %+v", res)
	}
}

func TestEnsureAnswersWhenWhole(t *testing.T) {
	e, m := newEngine(t, DefaultConfig())
	var tk Ticket
	if code := post(t, e.URL()+"/api/tts/ensure", TakeRequest{Text: "a b c d e"}, &tk); code != http.StatusOK {
		t.Fatalf("ensure: %d", code)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tl := m.takes[tk.Take]; tl == nil || tl.endCalls != 1 {
		t.Fatalf("ensure answered before the take was whole: %+v", tl)
	}
}

func TestLineStream(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Reply[1].After = 1
	e, _ := newEngine(t, cfg)
	var p Posted
	if code := post(t, e.URL()+"/api/turn", map[string]string{"said": "when is the train"}, &p); code != http.StatusOK {
		t.Fatalf("post: %d", code)
	}
	resp, err := http.Get(e.URL() + "/api/turn/" + p.Turn + "/lines")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var got []LineMsg
	for sc.Scan() {
		var l LineMsg
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	if len(got) != 4 || !got[3].Done || got[3].Unit != 3 || got[0].Text != cfg.Reply[0].Text {
		t.Errorf("lines %+v", got)
	}
}

func TestRestartFrontAnswers503(t *testing.T) {
	e, _ := newEngine(t, DefaultConfig())
	get := func() int {
		resp, err := http.Get(e.URL() + "/api/progress")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get(); c != http.StatusOK {
		t.Fatalf("progress: %d", c)
	}
	e.Stop()
	if c := get(); c != http.StatusServiceUnavailable {
		t.Errorf("progress while down: %d, want 503", c)
	}
	if e.Stats().Front503 != 1 {
		t.Errorf("front 503s: %d", e.Stats().Front503)
	}
	if err := e.Restart(); err != nil {
		t.Fatal(err)
	}
	if c := get(); c != http.StatusOK {
		t.Errorf("progress after restart: %d", c)
	}
	if err := e.Restart(); err == nil {
		t.Error("restart of a running engine: no error")
	}
}

func TestStopCutsTakeShort(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rate = 1
	e, m := newEngine(t, cfg)
	var tk Ticket
	post(t, e.URL()+"/api/tts/prepare", TakeRequest{Text: sixSeconds}, &tk)
	resp, err := http.Get(e.URL() + "/api/tts/take/" + tk.Take)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	go func() { time.Sleep(100 * time.Millisecond); e.Stop() }()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && n == resp.ContentLength {
		t.Fatalf("the whole take arrived across a stop (%d bytes)", n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tl := m.takes[tk.Take]; tl.endCalls != 1 || tl.ended >= 6 {
		t.Errorf("take recorded %+v after a stop", tl)
	}
}

func TestBadInput(t *testing.T) {
	e, _ := newEngine(t, DefaultConfig())
	if c := post(t, e.URL()+"/api/tts/prepare", map[string]string{"text": " "}, nil); c != http.StatusBadRequest {
		t.Errorf("empty text: %d", c)
	}
	resp, err := http.Post(e.URL()+"/api/tts/prepare", "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("broken JSON: %d", resp.StatusCode)
	}
	r2, _ := http.Get(e.URL() + "/api/tts/take/nope")
	r2.Body.Close()
	if r2.StatusCode != http.StatusNotFound {
		t.Errorf("unknown take: %d", r2.StatusCode)
	}
}

// The listening socket answers once the engine's listener is ready, and a
// media download streams for the seconds asked, holding its connection
// that long.
func TestSocketAndMedia(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Socket = 2
	e, _ := newEngine(t, cfg)
	start := time.Now()
	resp, err := http.Get(e.URL() + PathSocket)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start).Seconds() * scale; resp.StatusCode != http.StatusOK || took < 1.8 {
		t.Errorf("socket: %d after %.2f s, want 200 after its 2 s", resp.StatusCode, took)
	}
	start = time.Now()
	resp, err = http.Get(e.URL() + PathMedia + "?" + MediaQuery + "=3")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if took := time.Since(start).Seconds() * scale; n == 0 || took < 2.7 {
		t.Errorf("media: %d bytes in %.2f s, want bytes for 3 s", n, took)
	}
	for _, q := range []string{"", "?seconds=-1", "?seconds=NaN", "?seconds=x"} {
		r, err := http.Get(e.URL() + PathMedia + q)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("media %q: %d, want 400", q, r.StatusCode)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Rate = 0 },
		func(c *Config) { c.FirstByte = -1 },
		func(c *Config) { c.Socket = -1 },
		func(c *Config) { c.Chunk = math.NaN() },
		func(c *Config) { c.Reply = []Line{{Text: ""}} },
		func(c *Config) { c.Reply = []Line{{Text: "x", After: -1}} },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	if _, err := New(WithTimeScale(-1)); err == nil {
		t.Error("negative scale accepted")
	}
}

// The engine continues the caller's trace: its server spans and the take's
// span carry the trace ID of the traceparent the call came with.
func TestContinuesTheCallersTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	e, _ := newEngine(t, DefaultConfig(), WithTracing(tp, propagation.TraceContext{}))
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest(http.MethodPost, e.URL()+"/api/listen", nil)
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	if s := spans[0]; s.SpanContext.TraceID().String() != traceID || s.Name != "POST "+PathListen {
		t.Errorf("span %q in trace %s", s.Name, s.SpanContext.TraceID())
	}
}
