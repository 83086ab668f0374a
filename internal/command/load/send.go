package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Retry bounds: a refused request is sent again after a wait that doubles
// from minRetry to maxRetry, as an OTLP exporter's retry does.
const (
	minRetry = 5 * time.Millisecond
	maxRetry = 500 * time.Millisecond
)

// Sender posts OTLP/HTTP protobuf requests and sends each refused one
// again until the collector accepts it.
type Sender struct {
	URL    string // the traces endpoint, e.g. http://127.0.0.1:4318/v1/traces
	Token  string // sent as "Authorization: Bearer …" when set
	client *http.Client

	// Counts since the Sender was made.
	Requests atomic.Int64 // requests accepted
	Refused  atomic.Int64 // answers that asked for a retry (429, 502, 503, 504)
	Failed   atomic.Int64 // requests that never got an answer (connection refused, reset, …)
	Rejected atomic.Int64 // answers that said retrying cannot help (400, 413, …)
	Spans    atomic.Int64 // spans in accepted requests

	mu      sync.Mutex
	latency []time.Duration // of each accepted request, in the order answered
}

// Latencies are how long each accepted request took, from sending it to
// its 2xx answer (the attempt that was accepted: refused attempts are
// counted in Refused), in the order answered.
func (s *Sender) Latencies() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.latency)
}

// NewSender returns a sender to url with connections kept alive for
// concurrency workers.
func NewSender(url string, concurrency int) *Sender {
	return &Sender{URL: url, client: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: max(concurrency, 2), DisableCompression: true},
	}}
}

// ErrRejected is returned for a request the collector refused permanently.
var ErrRejected = errors.New("load: the collector rejected a request permanently")

// Send posts td until the collector accepts it, ctx ends, or it is rejected
// permanently.
func (s *Sender) Send(ctx context.Context, td ptrace.Traces) error {
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return err
	}
	wait := minRetry
	for {
		sent := time.Now()
		status, err := s.post(ctx, body)
		switch {
		case err == nil && status/100 == 2:
			took := time.Since(sent)
			s.mu.Lock()
			s.latency = append(s.latency, took)
			s.mu.Unlock()
			s.Requests.Add(1)
			s.Spans.Add(int64(td.SpanCount()))
			return nil
		case err == nil && (status == http.StatusTooManyRequests || status == http.StatusBadGateway ||
			status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout):
			s.Refused.Add(1)
		case err == nil:
			s.Rejected.Add(1)
			return fmt.Errorf("%w: HTTP %d", ErrRejected, status)
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			s.Failed.Add(1)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, maxRetry)
	}
}

func (s *Sender) post(ctx context.Context, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// SendTurn sends a turn's two requests, in the turn's order.
func (s *Sender) SendTurn(ctx context.Context, t *Turn) error {
	first, second := t.Phone, t.Engine
	if t.EngineFirst {
		first, second = second, first
	}
	if err := s.Send(ctx, first); err != nil {
		return err
	}
	return s.Send(ctx, second)
}

// Tally counts turns by the cause they must get.
type Tally map[string]int

// Total is the number of turns in the tally.
func (t Tally) Total() int {
	n := 0
	for _, v := range t {
		n += v
	}
	return n
}

// Run sends n turns of the fleet with concurrency workers (each sends one
// turn's two requests at a time) and returns what was accepted by cause.
// rate bounds the turns per second (0: as fast as the collector takes
// them). onAccepted, when set, is called with each turn once both its
// requests were accepted.
func Run(ctx context.Context, s *Sender, f *Fleet, n, concurrency int, rate float64, onAccepted func(*Turn)) (Tally, error) {
	return run(ctx, s, f.Next, n, concurrency, rate, onAccepted)
}

func run(ctx context.Context, s *Sender, next func() *Turn, n, concurrency int, rate float64, onAccepted func(*Turn)) (Tally, error) {
	turns := make(chan *Turn, concurrency*2)
	var mu sync.Mutex
	sent := Tally{}
	var firstErr error
	var wg sync.WaitGroup
	for range max(concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range turns {
				if err := s.SendTurn(ctx, t); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				mu.Lock()
				sent[t.Cause]++
				mu.Unlock()
				if onAccepted != nil {
					onAccepted(t)
				}
			}
		}()
	}
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if rate > 0 {
			due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(d):
				}
			}
		}
		select {
		case turns <- next():
		case <-ctx.Done():
		}
	}
	close(turns)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return sent, firstErr
}

// Percentile is the pct-th percentile of latencies by nearest rank: the
// ⌈pct·n/100⌉-th smallest, the least latency at least pct % of them took
// (of 20, p95 is the 19th; of 200, p99 is the 198th). Zero when there are
// none.
func Percentile(latencies []time.Duration, pct float64) time.Duration {
	if len(latencies) == 0 {
		return 0
	}
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	rank := int(math.Ceil(pct * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
