package lanes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// MaxLineBytes bounds one line of the turn's line stream.
const MaxLineBytes = 1 << 20

// LineStream is the turn's line stream: the engine's reply words, one line
// at a time, on a connection opened for this turn alone (with
// WithSharedPool: on the shared pool, as it used to be).
type LineStream struct {
	resp *http.Response
	sc   *bufio.Scanner
}

// Stream opens the turn's line stream for req. Every line is hearing from
// the engine; a stream silent beyond its idle limit ends with ErrStalled and
// a broken connection is reported as lost.
func (c *Client) Stream(req *http.Request) (*LineStream, error) {
	resp, err := c.Do(req, KindLines)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), MaxLineBytes)
	return &LineStream{resp: resp, sc: sc}, nil
}

// Response is the stream's reply (status, headers); its body belongs to the
// stream.
func (s *LineStream) Response() *http.Response { return s.resp }

// Next returns the next line without its line ending, or io.EOF at the end.
func (s *LineStream) Next() (string, error) {
	if s.sc.Scan() {
		return s.sc.Text(), nil
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			s.Close()
			return "", fmt.Errorf("lanes: line stream: a line longer than %d bytes", MaxLineBytes)
		}
		return "", err
	}
	return "", io.EOF
}

// Close ends the stream and its connection.
func (s *LineStream) Close() error { return s.resp.Body.Close() }

// Probe is the quiet probe of the bulk lane: a small GET on the bulk pool
// itself, since the control lane answering says nothing about a stale bulk
// connection. It shows nothing to the user; its timeout counts toward the bulk
// lane's heal like any buffered reply. It returns the status the engine
// answered with.
func (c *Client) Probe(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("lanes: probe: %w", err)
	}
	resp, err := c.bulk.Do(req, KindProbe)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)); err != nil {
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
}

// Responsiveness is the measure of "Responsiveness under Working
// Conditions" (the IETF draft, Apple's networkQuality) as a turn reports it:
// the control lane's round trip on its loaded connections, and the same round
// trip on a fresh connection of its own. Loaded well above Fresh is queueing
// inside the client; both high is a slow network. Seconds, person-time.
type Responsiveness struct {
	Loaded float64
	Fresh  float64
}

// Responsiveness measures both round trips at once against url (a small
// reply, such as the progress check). Each is the time from the call's start
// to the end of its reply; the loaded one includes any wait for a connection
// of the control lane. The readings go to Turn.SetRPM(loaded, fresh).
func (c *Client) Responsiveness(ctx context.Context, url string) (Responsiveness, error) {
	pol := c.cfg.policies[KindRTT]
	var (
		wg           sync.WaitGroup
		loaded, frsh time.Duration
		errL, errF   error
	)
	measure := func(l *Lane, out *time.Duration, errOut *error) {
		defer wg.Done()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			*errOut = err
			return
		}
		start := time.Now()
		resp, err := l.do(req, KindRTT, pol)
		if err != nil {
			*errOut = err
			return
		}
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		*out, *errOut = c.cfg.person(time.Since(start)), err
	}
	wg.Add(2)
	go measure(c.control, &loaded, &errL)
	go measure(c.fresh, &frsh, &errF)
	wg.Wait()
	if err := errors.Join(errL, errF); err != nil {
		return Responsiveness{Loaded: loaded.Seconds(), Fresh: frsh.Seconds()}, fmt.Errorf("lanes: responsiveness: %w", err)
	}
	return Responsiveness{Loaded: loaded.Seconds(), Fresh: frsh.Seconds()}, nil
}
