package up

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/instr/semconv"
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

	// episodes are the movement alerts told firing and not yet resolved,
	// by sequence ID: a new alert of the same group (a higher tally) is
	// a movement told again.
	episodes     map[string]*episode
	episodeOrder []string

	// muteURL is the relay as the phone reaches it ("" no mute action),
	// muteKey what its tokens are made with, mutes the silences made by
	// token; alertmanager is Alertmanager's base URL.
	muteURL      string
	muteKey      []byte
	mutes        map[string]string
	alertmanager string

	received, sent, failed, refused, beats atomic.Int64
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
		episodes: map[string]*episode{}, mutes: map[string]string{},
		muteURL: strings.TrimSuffix(c.MuteURL, "/"), alertmanager: "http://" + c.AlertmanagerEndpoint,
	}
}

// episode is one movement alert from its first firing to its resolution:
// the tallies and the turn last told.
type episode struct {
	start      time.Time
	firstTally int64
	lastTally  string
	lastTurn   string
	told       int
}

// sequenceID is the one notification an alert updates in place: made from
// Alertmanager's group key and the alert's labels but its tally (so every
// movement of a group updates the same notification), hashed into what
// ntfy takes as a sequence ID (letters, digits and dashes, at most 64),
// whatever the labels hold.
func sequenceID(groupKey string, a amAlert) string {
	names := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		if k != dashboards.LabelTally {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	h.Write([]byte(groupKey))
	for _, k := range names {
		fmt.Fprintf(h, "\x00%s\x00%s", k, a.Labels[k])
	}
	return "percause-" + hex.EncodeToString(h.Sum(nil))[:24]
}

// tallyOf is an alert's running tally (dashboards.LabelTally), or -1.
func tallyOf(a amAlert) int64 {
	n, err := strconv.ParseInt(a.Labels[dashboards.LabelTally], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func (r *relay) episode(id string) *episode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.episodes[id]
}

func (r *relay) setEpisode(id string, e *episode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e == nil {
		delete(r.episodes, id)
		return
	}
	if _, ok := r.episodes[id]; !ok {
		r.episodeOrder = append(r.episodeOrder, id)
		for len(r.episodeOrder) > relayMemory {
			delete(r.episodes, r.episodeOrder[0])
			r.episodeOrder = r.episodeOrder[1:]
		}
	}
	r.episodes[id] = e
}

func (r *relay) logf(format string, args ...any) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(r.out, "%s %s\n", r.now().In(r.loc).Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == MutePath {
		r.serveMute(w, req)
		return
	}
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
	// One notification per alert of the group, updated in place: a
	// resolved alert whose group fires again at a new tally (a movement
	// while it fired) is not told; the newest firing alert is.
	newest := map[string]amAlert{}
	for _, a := range p.Alerts {
		id := sequenceID(p.GroupKey, a)
		if n, ok := newest[id]; !ok || supersedes(a, n) {
			newest[id] = a
		}
	}
	var errs []error
	for _, a := range p.Alerts {
		id := sequenceID(p.GroupKey, a)
		if n := newest[id]; n.Fingerprint != a.Fingerprint || !n.StartsAt.Equal(a.StartsAt) || n.Status != a.Status {
			continue
		}
		if err := r.notify(req.Context(), a, id); err != nil {
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

// supersedes reports whether a is told rather than n, of one
// notification: a firing alert before a resolved one, the latest to start
// of those firing, the latest to end of those resolved.
func supersedes(a, n amAlert) bool {
	switch {
	case a.Status != n.Status:
		return a.Status == statusFiring
	case a.Status == statusFiring:
		return a.StartsAt.After(n.StartsAt)
	default:
		return a.EndsAt.After(n.EndsAt)
	}
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
func (r *relay) notify(ctx context.Context, a amAlert, id string) error {
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
	var turn *LinkedTurn
	waited := false
	if _, ok := bad[labelInstallation]; !ok {
		turn, waited = r.turnOf(ctx, a) // an installation not printable has no turn to find
	}
	mc := messageContext{pageURL: r.pageURL, window: r.window, loc: r.loc, waited: waited}
	ep := r.episode(id)
	tally := tallyOf(a)
	if a.Status == statusFiring && tally >= 0 {
		if ep == nil {
			ep = &episode{start: a.StartsAt, firstTally: tally}
		} else if a.Labels[dashboards.LabelTally] != ep.lastTally {
			if turn != nil && turn.TraceID == ep.lastTurn {
				// The tally changed with no new turn (a launch's series
				// gone from the collector): no movement to tell.
				r.markSent(key)
				r.logf("%s on installation %s: tally %s, no turn since the one told (%s): not told again",
					a.Labels[labelAlertname], a.Labels[labelInstallation], a.Labels[dashboards.LabelTally], ep.lastTurn)
				ep.lastTally = a.Labels[dashboards.LabelTally]
				r.setEpisode(id, ep)
				return nil
			}
			mc.again = ep.told
			mc.moves, mc.span, mc.unit = r.movedOver(ctx, a, ep, tally)
		}
	}
	m := compose(a, turn, mc)
	m.SequenceID = id
	if a.Status == statusFiring {
		if _, ok := bad[labelInstallation]; !ok {
			m.Actions = r.muteAction(a.Labels[labelInstallation])
		}
	}
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
	switch {
	case a.Status == statusFiring && ep != nil:
		ep.told++
		ep.lastTally = a.Labels[dashboards.LabelTally]
		ep.lastTurn = m.TurnID
		r.setEpisode(id, ep)
	case a.Status == statusResolved:
		r.setEpisode(id, nil)
	}
	if m.Again > 0 {
		what += fmt.Sprintf(", moved again (%d %s in %s)", m.Moves, mc.unit, spanText(m.Span))
	}
	r.logf("notified %s (alert started %s; %.1f s finding the turn, %.2f s posting)", what,
		a.StartsAt.In(r.loc).Format("15:04:05.000"), start.Sub(arrived).Seconds(), r.now().Sub(start).Seconds())
	return nil
}

// movedOver is how much the alert's installation moved over the episode:
// from the verdict file's turns of its cause when it has one (the heals,
// or the turns), else from the tallies of its alerts.
func (r *relay) movedOver(ctx context.Context, a amAlert, ep *episode, tally int64) (int64, time.Duration, string) {
	_ = ctx
	cause, inst := causeOf()[a.Labels[labelAlertname]], a.Labels[labelInstallation]
	if cause != "" && inst != "" {
		turns, err := findTurns(r.verdictFile, inst, cause, ep.start.Add(-r.lookBack))
		if err != nil {
			r.logf("reading %s: %v", r.verdictFile, err)
		}
		if len(turns) > 1 {
			unit := "turns"
			if cause == semconv.CausePool {
				unit = "heals"
			}
			return movements(turns, cause), turns[len(turns)-1].Ended.Sub(turns[0].Ended), unit
		}
	}
	return max(tally-ep.firstTally+1, 2), a.StartsAt.Sub(ep.start), "movements"
}

// turnOf finds the turn an alert names. For a firing alert it waits up to
// turnWait for the verdict: the metric that fires the alert can reach
// Prometheus before the turn that moved has ended. waited reports a firing
// alert whose turn never came.
func (r *relay) turnOf(ctx context.Context, a amAlert) (turn *LinkedTurn, waited bool) {
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
		if m.Click != "" {
			header.Set("Click", m.Click)
		}
		if m.SequenceID != "" {
			header.Set("X-Sequence-ID", m.SequenceID)
		}
		if m.Delay > 0 {
			header.Set("X-Delay", delayText(m.Delay))
		}
		if len(m.Actions) > 0 {
			var hs []string
			for _, a := range m.Actions {
				hs = append(hs, a.header())
			}
			header.Set("Actions", strings.Join(hs, "; "))
		}
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
