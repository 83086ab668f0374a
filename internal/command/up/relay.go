package up

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RelayPath is where Alertmanager posts to the relay.
const RelayPath = "/alerts"

// relayMemory is how many notifications the relay remembers having sent,
// so an Alertmanager retry after a lost answer does not notify twice.
const relayMemory = 1024

// badMemory is how many label values that are not printable the relay
// remembers having named in its log, so a value that comes again (every
// alert of an installation, every retry) is named once.
const badMemory = 256

// relay receives Alertmanager's webhook posts on loopback and sends each
// alert on to the notification target as one message, naming the turn that
// moved. It answers Alertmanager only once the target has accepted every
// alert of the post, so a target that is down is retried by Alertmanager
// and nothing is lost.
type relay struct {
	token       string // what Alertmanager presents
	target      string
	targetToken string
	format      string
	pageURL     string
	verdictFile string
	window      string
	// lookBack is how long before an alert's start its turn may have ended:
	// the window, and two scrape intervals for the metric to arrive.
	lookBack time.Duration
	turnWait time.Duration
	poll     time.Duration
	client   *http.Client
	loc      *time.Location
	now      func() time.Time

	outMu sync.Mutex
	out   io.Writer

	mu    sync.Mutex
	seen  map[string]bool
	order []string

	badSeed  maphash.Seed
	badSeen  map[uint64]bool
	badOrder []uint64

	received, sent, failed, refused atomic.Int64
}

func newRelay(c Config, token string, out io.Writer) *relay {
	return &relay{
		token: token, target: c.NotifyURL, targetToken: c.NotifyToken, format: c.NotifyFormat,
		pageURL: c.PageURL, verdictFile: c.VerdictFile, window: c.AlertWindow,
		lookBack: c.alertWindow() + 2*c.ScrapeInterval,
		turnWait: DefaultTurnWait, poll: 250 * time.Millisecond,
		client: &http.Client{Timeout: DefaultNotifyTimeout},
		loc:    time.Local, now: time.Now, out: out, seen: map[string]bool{},
		badSeed: maphash.MakeSeed(), badSeen: map[uint64]bool{},
	}
}

func (r *relay) logf(format string, args ...any) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(r.out, "%s %s\n", r.now().In(r.loc).Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != RelayPath {
		http.NotFound(w, req)
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), []byte("Bearer "+r.token)) != 1 {
		r.refused.Add(1)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxPayload+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxPayload {
		r.refused.Add(1)
		http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
		return
	}
	p, err := parsePayload(body)
	if err != nil {
		r.refused.Add(1)
		r.logf("relay refused a post: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.received.Add(1)
	var errs []error
	for _, a := range p.Alerts {
		if err := r.notify(req.Context(), a); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		// Alertmanager sends the post again; alerts already sent are
		// remembered and not sent twice.
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func alertKey(a amAlert) string {
	return a.Fingerprint + "|" + a.Labels[labelAlertname] + "|" + a.Labels[labelInstallation] + "|" + a.Status + "|" + a.StartsAt.UTC().Format(time.RFC3339Nano)
}

func (r *relay) wasSent(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key]
}

func (r *relay) markSent(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	r.order = append(r.order, key)
	if len(r.order) > relayMemory {
		delete(r.seen, r.order[0])
		r.order = r.order[1:]
	}
}

// firstBad reports whether the log has not named v yet, and remembers it.
func (r *relay) firstBad(v string) bool {
	h := maphash.String(r.badSeed, v)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.badSeen[h] {
		return false
	}
	r.badSeen[h] = true
	r.badOrder = append(r.badOrder, h)
	if len(r.badOrder) > badMemory {
		delete(r.badSeen, r.badOrder[0])
		r.badOrder = r.badOrder[1:]
	}
	return true
}

// notify sends one alert, unless it was sent already. A label value that
// is not printable does not stop it: the notification names badLabel in
// its place (see cleanLabels), and the log the value, once.
func (r *relay) notify(ctx context.Context, a amAlert) error {
	key := alertKey(a)
	if r.wasSent(key) {
		return nil
	}
	arrived := r.now()
	a, bad := cleanLabels(a)
	names := make([]string, 0, len(bad))
	for k := range bad {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if r.firstBad(bad[k]) {
			r.logf("alert %s: label %s is not printable (a control character, a newline, invalid UTF-8 or over %d bytes): %s; the notification says %s",
				a.Labels[labelAlertname], k, maxLabel, quoteLabel(bad[k]), badLabel)
		}
	}
	var turn *Turn
	waited := false
	if _, ok := bad[labelInstallation]; !ok {
		turn, waited = r.turnOf(ctx, a) // an installation not printable has no turn to find
	}
	m := compose(a, turn, messageContext{pageURL: r.pageURL, window: r.window, loc: r.loc, waited: waited})
	start := r.now()
	err := r.post(ctx, m)
	what := fmt.Sprintf("%s %s", m.Alert, m.Status)
	if m.Installation != "" {
		what += ", installation " + m.Installation
	}
	if m.TurnID != "" {
		what += ", turn " + m.TurnID
	}
	if err != nil {
		r.failed.Add(1)
		r.logf("notification failed (%s): %v; Alertmanager sends it again", what, err)
		return fmt.Errorf("%s: %w", what, err)
	}
	r.markSent(key)
	r.sent.Add(1)
	r.logf("notified %s (alert started %s; %.1f s finding the turn, %.2f s posting)", what,
		a.StartsAt.In(r.loc).Format("15:04:05.000"), start.Sub(arrived).Seconds(), r.now().Sub(start).Seconds())
	return nil
}

// turnOf finds the turn an alert names. For a firing alert it waits up to
// turnWait for the verdict: the metric that fires the alert can reach
// Prometheus before the turn that moved has ended. waited reports a firing
// alert whose turn never came.
func (r *relay) turnOf(ctx context.Context, a amAlert) (turn *Turn, waited bool) {
	cause, inst := causeOf()[a.Labels[labelAlertname]], a.Labels[labelInstallation]
	if cause == "" || inst == "" {
		return nil, false
	}
	since := a.StartsAt.Add(-r.lookBack)
	deadline := r.now().Add(r.turnWait)
	for {
		t, ok, err := findTurn(r.verdictFile, inst, cause, since)
		if err != nil {
			r.logf("reading %s: %v", r.verdictFile, err)
		}
		if ok {
			return &t, false
		}
		if a.Status != statusFiring || !r.now().Before(deadline) {
			return nil, a.Status == statusFiring
		}
		select {
		case <-ctx.Done():
			return nil, true
		case <-time.After(r.poll):
		}
	}
}

// post sends m to the target in the configured format.
func (r *relay) post(ctx context.Context, m message) error {
	var body []byte
	header := http.Header{}
	switch r.format {
	case FormatJSON:
		b, err := m.json()
		if err != nil {
			return err
		}
		body = b
		header.Set("Content-Type", "application/json")
	default:
		// ntfy's publish API: the body is the message, the headers its
		// title, priority, tags and link (RFC 2047 for what is not ASCII).
		body = []byte(m.Body)
		header.Set("Content-Type", "text/plain; charset=utf-8")
		header.Set("Title", mime.BEncoding.Encode("UTF-8", m.Title))
		header.Set("Priority", strconv.Itoa(m.Priority))
		header.Set("Tags", strings.Join(m.Tags, ","))
		header.Set("Click", m.Click)
	}
	// The same facts for a webhook that reads headers rather than text.
	header.Set("X-Percause-Alert", m.Alert)
	header.Set("X-Percause-Status", m.Status)
	if m.Installation != "" {
		header.Set("X-Percause-Installation", m.Installation)
	}
	if m.TurnID != "" {
		header.Set("X-Percause-Turn", m.TurnID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if r.targetToken != "" {
		req.Header.Set("Authorization", "Bearer "+r.targetToken)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		// The error names the URL, whose path is the topic: say only where.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("posting to %s: %w", redact(r.target), err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", redact(r.target), resp.Status, strings.TrimSpace(string(snippet)))
	}
	return nil
}
