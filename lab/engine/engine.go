package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/internal/wait"
	"github.com/percause/percause/lab/player"
)

// Defaults of a healthy engine, in person-seconds.
const (
	DefaultRate           = 4.0  // audio seconds made per second: well ahead of playback
	DefaultFirstByte      = 0.3  // until a take's first byte
	DefaultGrant          = 0.2  // the listening grant
	DefaultSocket         = 0.05 // until the listening socket answers
	DefaultCheck          = 0.2  // a healthy engine's answer to the progress check
	DefaultSecondsPerWord = 0.4  // audio per word of text
	DefaultChunk          = 0.25 // audio per production chunk (one progress mark)
	DefaultAddr           = "127.0.0.1:0"
	DefaultTimeScale      = 1.0
)

// Paths of the engine's calls.
const (
	PathListen   = "/api/listen"
	PathSocket   = "/api/listen/socket"
	PathMedia    = "/api/media"
	PathTurn     = "/api/turn"
	PathLines    = "/api/turn/{id}/lines"
	PathPrepare  = "/api/tts/prepare"
	PathEnsure   = "/api/tts/ensure"
	PathTake     = "/api/tts/take/{id}"
	PathProgress = "/api/progress"
	PathUpload   = "/api/upload"
)

// Line is one unit of the reply's words as the engine streams it.
type Line struct {
	Text string
	// After is how long after the previous line (the first: after the line
	// stream opened) the engine sends it, in person-seconds. Words a tool or
	// the model delays come late.
	After float64
}

// Config is how the engine behaves; a scenario changes it between turns.
type Config struct {
	Rate           float64 // audio seconds made per second of making (1 = real time)
	FirstByte      float64 // seconds until a take's first byte
	Grant          float64 // seconds until the listening grant
	Socket         float64 // seconds until the listening socket answers
	Check          float64 // seconds to answer the progress check
	SecondsPerWord float64 // audio seconds per word of a take's text
	BytesPerSecond float64 // audio bytes per second of audio
	Chunk          float64 // audio seconds per production chunk
	Reply          []Line  // what the line stream says on each turn
	// LinesOpen keeps the line stream open this long after the last unit's
	// line before it ends, in seconds: the model still talking, a tool's
	// output still streaming.
	LinesOpen float64
}

// DefaultConfig is a healthy engine with a three-unit reply.
func DefaultConfig() Config {
	return Config{
		Rate: DefaultRate, FirstByte: DefaultFirstByte, Grant: DefaultGrant, Socket: DefaultSocket, Check: DefaultCheck,
		SecondsPerWord: DefaultSecondsPerWord, BytesPerSecond: player.DefaultBytesPerSecond, Chunk: DefaultChunk,
		Reply: []Line{
			{Text: "The train leaves at nine from platform four."},
			{Text: "It reaches the coast a little after noon, in time for lunch by the harbour."},
			{Text: "Shall I remind you an hour before it leaves?"},
		},
	}
}

// Validate reports the first setting that cannot describe an engine.
func (c Config) Validate() error {
	check := func(name string, v float64, positive bool) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (positive && v == 0) {
			return fmt.Errorf("engine: %s must be a finite number %s, got %v", name, map[bool]string{true: "> 0", false: ">= 0"}[positive], v)
		}
		return nil
	}
	for _, f := range []struct {
		name     string
		v        float64
		positive bool
	}{
		{"rate", c.Rate, true}, {"first byte", c.FirstByte, false}, {"grant", c.Grant, false}, {"socket", c.Socket, false},
		{"check", c.Check, false}, {"seconds per word", c.SecondsPerWord, true}, {"lines open", c.LinesOpen, false},
		{"bytes per second", c.BytesPerSecond, true}, {"chunk", c.Chunk, true},
	} {
		if err := check(f.name, f.v, f.positive); err != nil {
			return err
		}
	}
	for i, l := range c.Reply {
		if err := check(fmt.Sprintf("reply line %d's delay", i+1), l.After, false); err != nil {
			return err
		}
		if strings.TrimSpace(l.Text) == "" {
			return fmt.Errorf("engine: reply line %d is empty", i+1)
		}
	}
	return nil
}

// AudioSeconds is how much audio the engine makes of text.
func (c Config) AudioSeconds(text string) float64 {
	return float64(len(strings.Fields(text))) * c.SecondsPerWord
}

// TakeRecorder records one tts.take per take the engine makes (the SDK's
// StartTake, adapted). ctx carries the phone's trace.
type TakeRecorder interface {
	StartTake(ctx context.Context, id string) TakeSpan
}

// TakeSpan is one take's recording: marks of the real production timeline.
type TakeSpan interface {
	FirstByte()
	Progress(audioSeconds float64)
	End(audioSeconds float64)
}

type options struct {
	cfg   Config
	scale float64
	addr  string
	takes TakeRecorder
	tp    trace.TracerProvider
	prop  propagation.TextMapPropagator
}

// Option configures an Engine.
type Option func(*options)

// WithConfig sets the engine's initial behaviour.
func WithConfig(c Config) Option { return func(o *options) { o.cfg = c } }

// WithTimeScale sets person-seconds per wall second.
func WithTimeScale(f float64) Option { return func(o *options) { o.scale = f } }

// WithTakes records every take (default: not recorded).
func WithTakes(r TakeRecorder) Option { return func(o *options) { o.takes = r } }

// WithTracing records a server span per call and continues the caller's
// trace with prop (W3C traceparent).
func WithTracing(tp trace.TracerProvider, prop propagation.TextMapPropagator) Option {
	return func(o *options) { o.tp, o.prop = tp, prop }
}

// Stats counts the engine's work.
type Stats struct {
	Calls    map[string]int64 // answered calls by path pattern
	Front503 int64            // calls the front answered 503 while the engine was down
	Takes    int64            // takes made to the end
	Restarts int64
}

// Engine is the lab's engine and its front.
type Engine struct {
	o     options
	front *http.Server
	ln    net.Listener

	mu       sync.Mutex
	cfg      Config
	back     *backend
	backAddr string
	takes    map[string]*take
	turns    map[string]Config
	seq      int64
	calls    map[string]int64

	front503, made, restarts atomic.Int64
}

// backend is one run of the engine between restarts.
type backend struct {
	srv    *http.Server
	ctx    context.Context // ends when this run stops: its takes stop being made
	cancel context.CancelFunc
	done   chan struct{}
}

// New starts an engine and its front on loopback.
func New(opts ...Option) (*Engine, error) {
	o := options{cfg: DefaultConfig(), scale: DefaultTimeScale, addr: DefaultAddr, takes: nopTakes{}}
	for _, opt := range opts {
		opt(&o)
	}
	if math.IsNaN(o.scale) || math.IsInf(o.scale, 0) || o.scale <= 0 {
		return nil, fmt.Errorf("engine: time scale must be finite and > 0, got %v", o.scale)
	}
	if err := o.cfg.Validate(); err != nil {
		return nil, err
	}
	if o.tp == nil {
		o.tp = noop.NewTracerProvider()
	}
	if o.prop == nil {
		o.prop = propagation.TraceContext{}
	}
	e := &Engine{o: o, cfg: o.cfg, takes: map[string]*take{}, turns: map[string]Config{}, calls: map[string]int64{}}
	backLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("engine: listen: %w", err)
	}
	e.backAddr = backLn.Addr().String()
	e.startBackend(backLn)

	e.ln, err = net.Listen("tcp", o.addr)
	if err != nil {
		e.stopBackend()
		return nil, fmt.Errorf("engine: front: listen: %w", err)
	}
	backURL := &url.URL{Scheme: "http", Host: e.backAddr}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(backURL); r.Out.Host = r.In.Host },
		FlushInterval: -1, // streams flow as they are written
		Transport:     &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The engine behind the front is down: the front says so.
			e.front503.Add(1)
			http.Error(w, "engine restarting", http.StatusServiceUnavailable)
		},
	}
	e.front = &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.front.Serve(e.ln) }()
	return e, nil
}

// URL is the front's base URL: where the phone (or the fault proxy) sends
// its calls.
func (e *Engine) URL() string { return "http://" + e.ln.Addr().String() }

// Addr is the front's host:port.
func (e *Engine) Addr() string { return e.ln.Addr().String() }

// SetConfig changes how the engine behaves from the next call on.
func (e *Engine) SetConfig(c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	e.mu.Lock()
	e.cfg = c
	e.mu.Unlock()
	return nil
}

// Config returns how the engine behaves now.
func (e *Engine) Config() Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg
}

// Stop takes the engine down, cutting its calls in flight and the takes it
// is making; its front stays up and answers 503 until Restart.
func (e *Engine) Stop() { e.stopBackend() }

// Restart brings a stopped engine back on the same address. Its takes and
// turns are gone, as after a real restart.
func (e *Engine) Restart() error {
	e.mu.Lock()
	running := e.back != nil
	e.mu.Unlock()
	if running {
		return errors.New("engine: restart: already running")
	}
	ln, err := net.Listen("tcp", e.backAddr)
	if err != nil {
		return fmt.Errorf("engine: restart: %w", err)
	}
	e.mu.Lock()
	e.takes, e.turns = map[string]*take{}, map[string]Config{}
	e.mu.Unlock()
	e.restarts.Add(1)
	e.startBackend(ln)
	return nil
}

// Close stops the engine and its front.
func (e *Engine) Close() error {
	e.stopBackend()
	return e.front.Close()
}

// Stats returns what the engine did so far.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	calls := make(map[string]int64, len(e.calls))
	for k, v := range e.calls {
		calls[k] = v
	}
	e.mu.Unlock()
	return Stats{Calls: calls, Front503: e.front503.Load(), Takes: e.made.Load(), Restarts: e.restarts.Load()}
}

func (e *Engine) startBackend(ln net.Listener) {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) {
		path := pattern[strings.Index(pattern, " ")+1:]
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			trace.SpanFromContext(r.Context()).SetAttributes(attribute.String(semconv.HTTPRoute, path))
			e.mu.Lock()
			e.calls[path]++
			e.mu.Unlock()
			h(w, r)
		})
	}
	handle("POST "+PathListen, e.listen)
	handle("GET "+PathSocket, e.socket)
	handle("GET "+PathMedia, e.media)
	handle("POST "+PathTurn, e.turn)
	handle("GET "+PathLines, e.lines)
	handle("POST "+PathPrepare, e.prepare)
	handle("POST "+PathEnsure, e.ensure)
	handle("GET "+PathTake, e.stream)
	handle("GET "+PathProgress, e.progress)
	handle("POST "+PathUpload, e.upload)
	h := otelhttp.NewHandler(mux, "engine",
		otelhttp.WithTracerProvider(e.o.tp), otelhttp.WithPropagators(e.o.prop),
		// Named for the route once the mux has matched it (otelhttp asks
		// again after the handler), the method until then.
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if r.Pattern != "" {
				return r.Pattern
			}
			return r.Method
		}))
	ctx, cancel := context.WithCancel(context.Background())
	b := &backend{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	e.mu.Lock()
	e.back = b
	e.mu.Unlock()
	go func() { defer close(b.done); _ = b.srv.Serve(ln) }()
}

func (e *Engine) stopBackend() {
	e.mu.Lock()
	b := e.back
	e.back = nil
	e.mu.Unlock()
	if b == nil {
		return
	}
	b.cancel()
	_ = b.srv.Close()
	<-b.done
}

// runCtx is the context of the engine's current run.
func (e *Engine) runCtx() context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.back == nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	return e.back.ctx
}

// sleep waits d person-seconds, or until ctx ends.
func (e *Engine) sleep(ctx context.Context, d float64) error {
	return sleepUntil(ctx, time.Now().Add(e.wall(d)))
}

func (e *Engine) wall(d float64) time.Duration {
	return time.Duration(d / e.o.scale * float64(time.Second))
}

func sleepUntil(ctx context.Context, at time.Time) error { return wait.Until(ctx, at) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Grant is the listening grant's answer.
type Grant struct {
	Grant string `json:"grant"`
}

func (e *Engine) listen(w http.ResponseWriter, r *http.Request) {
	if e.sleep(r.Context(), e.Config().Grant) != nil {
		return
	}
	writeJSON(w, Grant{Grant: e.nextID("g")})
}

// socket is the microphone's listening socket: it answers once the
// engine's listener is ready (Config.Socket), then the phone may stream on
// it. The lab's phone opens it and lets it go.
func (e *Engine) socket(w http.ResponseWriter, r *http.Request) {
	if e.sleep(r.Context(), e.Config().Socket) != nil {
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
}

// MediaQuery is the query parameter of a media download: how many
// person-seconds it streams.
const MediaQuery = "seconds"

// mediaChunk is one write of a media download, every mediaEvery.
const (
	mediaChunk = 2 << 10
	mediaEvery = 0.1
)

// media streams a download (a picture, a video) at its own pace for the
// seconds asked: it holds its connection that long, as a real download
// on a phone's link does.
func (e *Engine) media(w http.ResponseWriter, r *http.Request) {
	secs, err := strconv.ParseFloat(r.URL.Query().Get(MediaQuery), 64)
	if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) || secs > 3600 {
		http.Error(w, "want ?seconds=S, 0 to 3600", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	buf := make([]byte, mediaChunk)
	start := time.Now()
	for k := 0; float64(k)*mediaEvery < secs; k++ {
		if sleepUntil(r.Context(), start.Add(e.wall(float64(k)*mediaEvery))) != nil {
			return
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
	_ = sleepUntil(r.Context(), start.Add(e.wall(secs)))
}

// Posted is the answer to the turn's post.
type Posted struct {
	Turn string `json:"turn"`
}

func (e *Engine) turn(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return
	}
	id := e.nextID("turn")
	e.mu.Lock()
	e.turns[id] = e.cfg
	e.mu.Unlock()
	writeJSON(w, Posted{Turn: id})
}

// LineMsg is one line of the turn's line stream (newline-delimited JSON).
// The last line has Done set and Unit = the number of units.
type LineMsg struct {
	Unit int    `json:"unit"`
	Text string `json:"text,omitempty"`
	Done bool   `json:"done,omitempty"`
}

func (e *Engine) lines(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	cfg, ok := e.turns[r.PathValue("id")]
	e.mu.Unlock()
	if !ok {
		http.Error(w, "no such turn", http.StatusNotFound)
		return
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	if fl != nil {
		fl.Flush()
	}
	enc := json.NewEncoder(w)
	ctx := r.Context()
	for i, l := range cfg.Reply {
		if e.sleep(ctx, l.After) != nil {
			return
		}
		if enc.Encode(LineMsg{Unit: i + 1, Text: l.Text}) != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
	if e.sleep(ctx, cfg.LinesOpen) != nil {
		return
	}
	_ = enc.Encode(LineMsg{Unit: len(cfg.Reply), Done: true})
}

// TakeRequest asks for a take of one unit's text.
type TakeRequest struct {
	Text string `json:"text"`
}

// Ticket is the answer to prepare and ensure.
type Ticket struct {
	Take  string  `json:"take"`
	Audio float64 `json:"audio"` // seconds of audio the take will hold
}

func (e *Engine) prepare(w http.ResponseWriter, r *http.Request) {
	t, ok := e.newTake(w, r)
	if !ok {
		return
	}
	writeJSON(w, Ticket{Take: t.id, Audio: t.audio})
}

func (e *Engine) ensure(w http.ResponseWriter, r *http.Request) {
	t, ok := e.newTake(w, r)
	if !ok {
		return
	}
	select {
	case <-t.finished:
		writeJSON(w, Ticket{Take: t.id, Audio: t.audio})
	case <-r.Context().Done():
	}
}

func (e *Engine) newTake(w http.ResponseWriter, r *http.Request) (*take, bool) {
	var req TakeRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || strings.TrimSpace(req.Text) == "" {
		http.Error(w, "want {\"text\": \"…\"}", http.StatusBadRequest)
		return nil, false
	}
	cfg := e.Config()
	audio := cfg.AudioSeconds(req.Text)
	t := &take{
		id:       e.nextID("t"),
		audio:    audio,
		size:     int64(math.Round(audio * cfg.BytesPerSecond)),
		changed:  make(chan struct{}),
		finished: make(chan struct{}),
	}
	e.mu.Lock()
	e.takes[t.id] = t
	e.mu.Unlock()
	// The take outlives the call that asked for it, but stays in its trace.
	ctx := trace.ContextWithSpanContext(e.runCtx(), trace.SpanContextFromContext(r.Context()))
	span := e.o.takes.StartTake(ctx, t.id)
	go e.produce(ctx, t, cfg, span)
	return t, true
}

// take is one take being made: how many of its bytes exist so far.
type take struct {
	id    string
	audio float64
	size  int64

	mu       sync.Mutex
	produced int64
	done     bool
	changed  chan struct{} // closed and replaced on every new chunk
	finished chan struct{}
}

func (t *take) state() (produced int64, done bool, changed <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.produced, t.done, t.changed
}

func (t *take) add(n int64, done bool) {
	t.mu.Lock()
	t.produced += n
	if done && !t.done {
		t.done = true
		close(t.finished)
	}
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
}

// produce makes the take: the first chunk after the first-byte delay, then a
// chunk every chunk/rate seconds, on an absolute schedule so the engine's own
// timer slips do not add up. Each chunk is a progress mark.
func (e *Engine) produce(ctx context.Context, t *take, cfg Config, span TakeSpan) {
	start := time.Now()
	made := 0.0
	for k := 0; made < t.audio-1e-9; k++ {
		due := start.Add(e.wall(cfg.FirstByte + float64(k)*cfg.Chunk/cfg.Rate))
		if sleepUntil(ctx, due) != nil {
			break
		}
		chunk := math.Min(cfg.Chunk, t.audio-made)
		made += chunk
		if k == 0 {
			span.FirstByte()
		}
		span.Progress(made)
		n := int64(math.Round(made*cfg.BytesPerSecond)) - t.producedBytes()
		t.add(n, made >= t.audio-1e-9)
	}
	if made >= t.audio-1e-9 {
		e.made.Add(1)
	}
	if t.audio == 0 {
		t.add(0, true)
	}
	span.End(made)
	if !isDone(t) {
		t.add(0, true) // the engine stopped: the stream ends short
	}
}

func (t *take) producedBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.produced
}

func isDone(t *take) bool { _, done, _ := t.state(); return done }

// audioByte is the content of the take's bytes: not silence, so a stream is
// never mistaken for an empty one.
const audioByte = 0x5a

func (e *Engine) stream(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	t, ok := e.takes[r.PathValue("id")]
	e.mu.Unlock()
	if !ok {
		http.Error(w, "no such take", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", fmt.Sprint(t.size))
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = audioByte
	}
	var sent int64
	for {
		produced, done, changed := t.state()
		for sent < produced {
			n := min(produced-sent, int64(len(buf)))
			if _, err := w.Write(buf[:n]); err != nil {
				return
			}
			sent += n
		}
		if fl != nil {
			fl.Flush()
		}
		if done {
			return // a take cut short by a restart ends short of Content-Length: the phone sees it
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

// Progress is the progress check's answer.
type Progress struct {
	Alive bool `json:"alive"`
}

func (e *Engine) progress(w http.ResponseWriter, r *http.Request) {
	if e.sleep(r.Context(), e.Config().Check) != nil {
		return
	}
	writeJSON(w, Progress{Alive: true})
}

// Uploaded is the upload's answer.
type Uploaded struct {
	Bytes int64 `json:"bytes"`
}

func (e *Engine) upload(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		return
	}
	writeJSON(w, Uploaded{Bytes: n})
}

func (e *Engine) nextID(prefix string) string {
	e.mu.Lock()
	e.seq++
	n := e.seq
	e.mu.Unlock()
	return fmt.Sprintf("%s%d", prefix, n)
}

type nopTakes struct{}

func (nopTakes) StartTake(context.Context, string) TakeSpan { return nopSpan{} }

type nopSpan struct{}

func (nopSpan) FirstByte()       {}
func (nopSpan) Progress(float64) {}
func (nopSpan) End(float64)      {}
