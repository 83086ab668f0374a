package otlp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults.
const (
	// DefaultEndpoint is the collector's OTLP/HTTP receiver on loopback.
	DefaultEndpoint = "http://127.0.0.1:4318"
	// DefaultTimeout bounds one request, connection included.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxIdleConns is small on purpose: one exporter talks to one
	// collector, and a phone should not hold more sockets than it needs.
	DefaultMaxIdleConns = 2
	// maxErrorBody caps how much of an error response is kept for the message.
	maxErrorBody = 1 << 10
)

// Signal is a kind of telemetry; it picks the URL path of the request.
type Signal string

// Signals.
const (
	SignalTraces  Signal = "traces"
	SignalMetrics Signal = "metrics"
)

// Path is the OTLP/HTTP path of the signal.
func (s Signal) Path() string { return "/v1/" + string(s) }

// Valid reports whether s is a known signal.
func (s Signal) Valid() bool { return s == SignalTraces || s == SignalMetrics }

// Client sends gzip-compressed OTLP protobuf payloads to one collector.
type Client struct {
	base    *url.URL
	hc      *http.Client
	headers http.Header
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithTimeout bounds each request (default DefaultTimeout).
func WithTimeout(d time.Duration) ClientOption {
	return func(c *Client) {
		if d > 0 {
			c.hc.Timeout = d
		}
	}
}

// WithHeader adds a header to every request (for example an authorization
// token for a collector behind a bearer-token extension).
func WithHeader(key, value string) ClientOption {
	return func(c *Client) { c.headers.Add(key, value) }
}

// NewClient returns a Client for the collector at endpoint, a base URL such as
// http://127.0.0.1:4318 (traces go to /v1/traces, metrics to /v1/metrics).
//
// The client owns its transport: no proxy from the environment, its own small
// connection pool, so telemetry never shares a connection with the app.
func NewClient(endpoint string, opts ...ClientOption) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("otlp: endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("otlp: endpoint %q: scheme must be http or https", endpoint)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("otlp: endpoint %q: no host", endpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          DefaultMaxIdleConns,
		MaxIdleConnsPerHost:   DefaultMaxIdleConns,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: DefaultTimeout,
		ForceAttemptHTTP2:     true,
	}
	c := &Client{base: u, hc: &http.Client{Transport: tr, Timeout: DefaultTimeout}, headers: http.Header{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Endpoint is the base URL the client sends to.
func (c *Client) Endpoint() string { return c.base.String() }

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Send posts one gzip-compressed protobuf payload (an Export…ServiceRequest)
// for signal. A nil error means the collector accepted it (2xx). A non-nil
// error is an *HTTPError for a response, or the transport's error; use
// Permanent to tell whether retrying can help.
func (c *Client) Send(ctx context.Context, sig Signal, gzBody []byte) error {
	if !sig.Valid() {
		return fmt.Errorf("otlp: unknown signal %q", sig)
	}
	u := *c.base
	u.Path += sig.Path()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(gzBody))
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("User-Agent", "percause-otlp/1")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("otlp: post %s: %w", sig.Path(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// Drain so the connection can be reused; partial success is not
		// retried (the spec says the rejected part must not be resent).
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &HTTPError{
		Signal:     sig,
		StatusCode: resp.StatusCode,
		Body:       strings.TrimSpace(string(body)),
		retryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
}

// HTTPError is a non-2xx answer from the collector.
type HTTPError struct {
	Signal     Signal
	StatusCode int
	Body       string
	retryAfter time.Duration
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("otlp: %s rejected: HTTP %d", e.Signal, e.StatusCode)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Permanent reports whether resending the same payload cannot succeed
// (OTLP/HTTP: every status except 429, 502, 503 and 504).
func (e *HTTPError) Permanent() bool {
	switch e.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return false
	}
	return true
}

// RetryAfter is the wait the collector asked for (0: none given).
func (e *HTTPError) RetryAfter() time.Duration { return e.retryAfter }

// Permanent reports whether err says that resending cannot succeed.
func Permanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
