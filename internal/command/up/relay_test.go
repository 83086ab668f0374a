package up

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percause/percause/dashboards"
)

var update = flag.Bool("update", false, "rewrite testdata/messages from the code")

// target is a notification target on loopback: it records every post and
// answers with the status its fail function gives (200 by default).
type target struct {
	*httptest.Server
	mu    sync.Mutex
	posts []post
	fail  func(n int) int
}

type post struct {
	header http.Header
	body   []byte
}

func newTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		tg.mu.Lock()
		n := len(tg.posts)
		tg.posts = append(tg.posts, post{header: r.Header.Clone(), body: b})
		fail := tg.fail
		tg.mu.Unlock()
		if fail != nil {
			if code := fail(n); code != http.StatusOK {
				http.Error(w, "the target is down", code)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) received() []post {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]post(nil), tg.posts...)
}

const testToken = "relay-test-token"

func newTestRelay(t *testing.T, targetURL, format, verdictFile string) (*relay, *bytes.Buffer) {
	t.Helper()
	c := testConfig(t, map[string]string{EnvNotifyURL: targetURL, EnvNotifyFormat: format, EnvPageURL: "https://laptop.tailnet.ts.net:9465/"})
	c.VerdictFile = verdictFile
	var log bytes.Buffer
	r := newRelay(c, testToken, &syncWriter{w: &log})
	r.loc = time.UTC
	r.turnWait = 0
	return r, &log
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// alertOf is an alert as Prometheus sends it for one of the generated
// rules: its labels and its annotations with the labels filled in.
func alertOf(name, status string, labels map[string]string, startsAt time.Time) amAlert {
	var rule dashboards.Alert
	for _, a := range dashboards.Alerts() {
		if a.Name == name {
			rule = a
		}
	}
	l := map[string]string{labelAlertname: name, labelSeverity: rule.Severity}
	for k, v := range labels {
		l[k] = v
	}
	fill := func(s string) string {
		for k, v := range labels {
			s = strings.ReplaceAll(s, "{{ $labels."+k+" }}", v)
		}
		return s
	}
	a := amAlert{Status: status, Labels: l, StartsAt: startsAt, Fingerprint: fmt.Sprintf("%x", len(name)+len(labels[labelInstallation])),
		Annotations: map[string]string{"summary": fill(rule.Summary), "description": fill(rule.Description)}}
	if status == statusResolved {
		a.EndsAt = startsAt.Add(10*time.Minute + 5*time.Second)
	}
	return a
}

func payloadOf(alerts ...amAlert) []byte {
	l := alerts[0].Labels
	key := fmt.Sprintf("{}:{alertname=%q, app_installation_id=%q}", l[labelAlertname], l[labelInstallation])
	b, _ := json.Marshal(amPayload{Version: "4", GroupKey: key, Status: alerts[0].Status, Receiver: "percause", Alerts: alerts})
	return b
}

// withTally is the alert at a running tally (a new alert of its group:
// its own fingerprint and start).
func withTally(a amAlert, n int, startsAt time.Time) amAlert {
	l := map[string]string{}
	for k, v := range a.Labels {
		l[k] = v
	}
	l[dashboards.LabelTally] = fmt.Sprint(n)
	a.Labels, a.StartsAt = l, startsAt
	a.Fingerprint = fmt.Sprintf("%s-%d", a.Fingerprint, n)
	return a
}

// resolvedAt is the alert resolved at end.
func resolvedAt(a amAlert, end time.Time) amAlert {
	a.Status, a.EndsAt = statusResolved, end
	return a
}

// TestRelayTellsEveryMovementInPlace: a second movement while the alert
// fires comes as Alertmanager sends it (the alert at the old tally
// resolved, a new one firing at the new tally, in one post of the group):
// it is told, as a movement again with the count and the span, and the
// three messages of the episode (firing, moved again, resolved) carry one
// sequence ID, so the phone shows one notification updated in place. A
// tally that changed with no new turn is not told again.
func TestRelayTellsEveryMovementInPlace(t *testing.T) {
	t0 := poolTurnEnded.Add(8 * time.Second)
	for _, format := range []string{FormatNtfy, FormatJSON} {
		tg := newTarget(t)
		r, log := newTestRelay(t, tg.URL, format, verdictsFile)
		base := alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: "e2e-nobody"}, t0)
		first, second := withTally(base, 1, t0), withTally(base, 2, t0.Add(40*time.Second))
		for i, body := range [][]byte{
			payloadOf(first),
			payloadOf(resolvedAt(first, second.StartsAt), second),
			payloadOf(resolvedAt(second, second.StartsAt.Add(10*time.Minute))),
		} {
			if w := send(t, r, testToken, body); w.Code != http.StatusOK {
				t.Fatalf("post %d: %d %s", i, w.Code, w.Body)
			}
		}
		got := tg.received()
		if len(got) != 3 {
			t.Fatalf("%s: %d posts for firing, moved again and resolved, want 3\n%s", format, len(got), log)
		}
		ids := map[string]bool{}
		for _, p := range got {
			id := p.header.Get("X-Sequence-ID")
			if format == FormatJSON {
				var j jsonMessage
				if err := json.Unmarshal(p.body, &j); err != nil {
					t.Fatal(err)
				}
				id = j.SequenceID
			}
			ids[id] = true
		}
		if len(ids) != 1 || ids[""] {
			t.Errorf("%s: sequence IDs %v, want one for the group", format, ids)
		}
		if st := got[1].header.Get("X-Percause-Status"); st != statusFiring || !bytes.Contains(got[1].body, []byte("again: 2 movements in 40 s")) {
			t.Errorf("%s: the second movement is not told as one:\n%s", format, render(got[1]))
		}
		if got[2].header.Get("X-Percause-Status") != statusResolved {
			t.Errorf("%s: the third post:\n%s", format, render(got[2]))
		}
	}

	// The pool installation's one pool turn: a tally that changes without
	// a new turn is no movement.
	tg := newTarget(t)
	r, log := newTestRelay(t, tg.URL, FormatNtfy, verdictsFile)
	base := alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, t0)
	first, second := withTally(base, 2, t0), withTally(base, 1, t0.Add(time.Minute))
	send(t, r, testToken, payloadOf(first))
	send(t, r, testToken, payloadOf(resolvedAt(first, second.StartsAt), second))
	if got := tg.received(); len(got) != 1 || !strings.Contains(log.String(), "not told again") {
		t.Errorf("a tally changed without a turn: %d posts\n%s", len(got), log)
	}
}

func send(t *testing.T, r *relay, token string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, RelayPath, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w
}

// render is a post as the golden files keep it: the headers that carry
// the message, then the body.
func render(p post) []byte {
	var b bytes.Buffer
	var keys []string
	for k := range p.header {
		if k == "Title" || k == "Priority" || k == "Tags" || k == "Click" || k == "Content-Type" || strings.HasPrefix(k, "X-Percause-") || k == "Authorization" ||
			k == "X-Sequence-Id" || k == "X-Delay" || k == "Actions" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, p.header.Get(k))
	}
	b.WriteString("\n")
	b.Write(p.body)
	if !bytes.HasSuffix(p.body, []byte("\n")) {
		b.WriteString("\n")
	}
	return b.Bytes()
}

// TestMessages: each kind of alert, firing and resolved, as the target
// receives it in both formats (testdata/messages, -update rewrites). The
// pool alert names the tally before and after, the installation and the
// page's address of the turn that moved; the state alert the live kind and
// its counts.
func TestMessages(t *testing.T) {
	fired := poolTurnEnded.Add(8 * time.Second)
	stateFired := time.Unix(0, 1796139452819052079).Add(6 * time.Second)
	cases := []struct {
		name  string
		alert amAlert
	}{
		{"pool-firing", alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, fired)},
		{"pool-resolved", alertOf(dashboards.AlertPoolResetMoved, statusResolved, map[string]string{labelInstallation: poolInstallation}, fired)},
		{"pool-firing-turn-not-in", alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: "e2e-nobody"}, fired)},
		{"state-firing", alertOf(dashboards.AlertLiveCountGrowing, statusFiring, map[string]string{labelInstallation: stateInstallation}, stateFired)},
		{"reconnecting-firing", alertOf(dashboards.AlertReconnectingFired, statusFiring, map[string]string{labelInstallation: poolInstallation}, fired)},
		{"synthesis-firing", alertOf(dashboards.AlertSynthesisTooSlow, statusFiring, map[string]string{"service_instance_id": "engine-launch-1"}, fired)},
		{"phone-silent-firing", alertOf(dashboards.AlertPhoneSilent, statusFiring, nil, fired)},
		{"phone-silent-resolved", alertOf(dashboards.AlertPhoneSilent, statusResolved, nil, fired)},
	}
	for _, format := range []string{FormatNtfy, FormatJSON} {
		tg := newTarget(t)
		r, log := newTestRelay(t, tg.URL+"/private-topic", format, verdictsFile)
		for _, tc := range cases {
			before := len(tg.received())
			if w := send(t, r, testToken, payloadOf(tc.alert)); w.Code != http.StatusOK {
				t.Fatalf("%s: the relay answered %d %s\n%s", tc.name, w.Code, w.Body, log)
			}
			got := tg.received()
			if len(got) != before+1 {
				t.Fatalf("%s: %d posts to the target, want 1", tc.name, len(got)-before)
			}
			golden := filepath.Join("testdata", "messages", tc.name+"."+format+".txt")
			out := render(got[len(got)-1])
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s (%s) differs from %s:\n%s", tc.name, format, golden, out)
			}
		}
	}
}

// TestRelayNotifiesEachAlertOnce: Alertmanager sends a group again (a
// retry after a lost answer, a restart): the person is told once.
func TestRelayNotifiesEachAlertOnce(t *testing.T) {
	tg := newTarget(t)
	r, _ := newTestRelay(t, tg.URL, FormatNtfy, verdictsFile)
	a := alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, poolTurnEnded.Add(8*time.Second))
	for i := 0; i < 3; i++ {
		if w := send(t, r, testToken, payloadOf(a)); w.Code != http.StatusOK {
			t.Fatalf("post %d: %d %s", i, w.Code, w.Body)
		}
	}
	resolved := a
	resolved.Status, resolved.EndsAt = statusResolved, a.StartsAt.Add(10*time.Minute)
	for i := 0; i < 2; i++ {
		send(t, r, testToken, payloadOf(resolved))
	}
	got := tg.received()
	if len(got) != 2 || got[0].header.Get("X-Percause-Status") != statusFiring || got[1].header.Get("X-Percause-Status") != statusResolved {
		t.Fatalf("%d posts to the target, want one firing and one resolved", len(got))
	}
	if r.sent.Load() != 2 || r.received.Load() != 5 {
		t.Errorf("sent %d of %d posts received", r.sent.Load(), r.received.Load())
	}
}

// TestRelayAnswersOnlyOnceTheTargetAccepted: while the target fails, the
// relay answers Alertmanager 502, so Alertmanager sends the alert again;
// once the target accepts it, the relay answers 200 and sends no more.
func TestRelayAnswersOnlyOnceTheTargetAccepted(t *testing.T) {
	tg := newTarget(t)
	tg.fail = func(n int) int {
		if n < 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	r, log := newTestRelay(t, tg.URL+"/secret-topic", FormatNtfy, verdictsFile)
	body := payloadOf(alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, poolTurnEnded))
	for i, want := range []int{http.StatusBadGateway, http.StatusBadGateway, http.StatusOK, http.StatusOK} {
		if w := send(t, r, testToken, body); w.Code != want {
			t.Fatalf("post %d: %d %s, want %d", i, w.Code, w.Body, want)
		}
	}
	if n := len(tg.received()); n != 3 {
		t.Errorf("%d posts to the target, want 2 refused and 1 accepted", n)
	}
	if r.failed.Load() != 2 || r.sent.Load() != 1 {
		t.Errorf("failed %d, sent %d", r.failed.Load(), r.sent.Load())
	}
	if strings.Contains(log.String(), "secret-topic") || !strings.Contains(log.String(), "503") {
		t.Errorf("the relay's log names the topic or not the failure:\n%s", log)
	}
	// A target that does not listen at all.
	r2, _ := newTestRelay(t, "http://127.0.0.1:1/topic", FormatNtfy, verdictsFile)
	if w := send(t, r2, testToken, body); w.Code != http.StatusBadGateway || strings.Contains(w.Body.String(), "/topic") {
		t.Errorf("an unreachable target: %d %s", w.Code, w.Body)
	}
}

// TestRelayRefuses: no token, a wrong one, another path or method, a
// payload that is not Alertmanager's: refused, counted, nothing sent.
func TestRelayRefuses(t *testing.T) {
	tg := newTarget(t)
	r, _ := newTestRelay(t, tg.URL, FormatNtfy, verdictsFile)
	good := payloadOf(alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, poolTurnEnded))
	for _, tc := range []struct {
		name, token string
		body        []byte
		want        int
	}{
		{"no token", "", good, http.StatusUnauthorized},
		{"a wrong token", "guess", good, http.StatusUnauthorized},
		{"not JSON", testToken, []byte("hello"), http.StatusBadRequest},
		{"another version", testToken, bytes.Replace(good, []byte(`"version":"4"`), []byte(`"version":"3"`), 1), http.StatusBadRequest},
		{"no alerts", testToken, []byte(`{"version":"4","alerts":[]}`), http.StatusBadRequest},
		{"an unknown status", testToken, bytes.Replace(good, []byte(`"status":"firing","labels"`), []byte(`"status":"maybe","labels"`), 1), http.StatusBadRequest},
		{"too large", testToken, bytes.Repeat([]byte(" "), maxPayload+1), http.StatusRequestEntityTooLarge},
	} {
		if w := send(t, r, tc.token, tc.body); w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
	}
	req := httptest.NewRequest(http.MethodGet, RelayPath, nil)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", w.Code)
	}
	req = httptest.NewRequest(http.MethodPost, "/other", bytes.NewReader(good))
	w = httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != http.StatusNotFound {
		t.Errorf("another path: %d", w.Code)
	}
	if n := len(tg.received()); n != 0 {
		t.Errorf("%d posts reached the target", n)
	}
	if r.refused.Load() != 7 {
		t.Errorf("refused %d, want 7", r.refused.Load())
	}
}

// TestRelayWaitsForTheTurnThatMoved: the alert comes before the turn's
// verdict (the tally's metric arrives first); the relay waits for it and
// names it.
func TestRelayWaitsForTheTurnThatMoved(t *testing.T) {
	good, err := os.ReadFile(verdictsFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(good, []byte("\n"))
	path := filepath.Join(t.TempDir(), "verdicts.jsonl")
	if err := os.WriteFile(path, lines[0], 0o644); err != nil {
		t.Fatal(err)
	}
	tg := newTarget(t)
	r, _ := newTestRelay(t, tg.URL, FormatNtfy, path)
	r.turnWait, r.poll = 30*time.Second, 20*time.Millisecond
	go func() {
		time.Sleep(300 * time.Millisecond)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, _ = f.Write(lines[1])
			f.Close()
		}
	}()
	send(t, r, testToken, payloadOf(alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, poolTurnEnded)))
	got := tg.received()
	if len(got) != 1 || got[0].header.Get("X-Percause-Turn") != poolTurn || !bytes.Contains(got[0].body, []byte("pool_reset moved 0→2")) {
		t.Fatalf("posts %d; the first:\n%s", len(got), render(got[0]))
	}
}

// TestRelaySendsTheTargetsToken: PERCAUSE_NOTIFY_TOKEN reaches the target
// as a bearer token.
func TestRelaySendsTheTargetsToken(t *testing.T) {
	tg := newTarget(t)
	r, _ := newTestRelay(t, tg.URL, FormatNtfy, verdictsFile)
	r.targetToken = "tk_phone"
	send(t, r, testToken, payloadOf(alertOf(dashboards.AlertReconnectingFired, statusFiring, map[string]string{labelInstallation: "i"}, poolTurnEnded)))
	if got := tg.received(); len(got) != 1 || got[0].header.Get("Authorization") != "Bearer tk_phone" {
		t.Fatalf("posts %+v", got)
	}
}

// FuzzParsePayload: any post parses or is refused, never a panic; what
// parses has what the message is made of.
func FuzzParsePayload(f *testing.F) {
	f.Add(payloadOf(alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, poolTurnEnded)))
	f.Add(payloadOf(alertOf(dashboards.AlertSynthesisTooSlow, statusResolved, nil, poolTurnEnded)))
	f.Add([]byte(`{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"x"},"startsAt":"0001-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"version":"4","alerts":[null]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePayload(b)
		if err != nil {
			return
		}
		for _, a := range p.Alerts {
			if a.Labels[labelAlertname] == "" || a.StartsAt.IsZero() || (a.Status != statusFiring && a.Status != statusResolved) {
				t.Fatalf("accepted %+v", a)
			}
			m := compose(a, nil, messageContext{pageURL: "http://127.0.0.1:9465/", window: "10m", loc: time.UTC})
			if m.Title == "" || m.Body == "" {
				t.Fatalf("an empty message for %+v", a)
			}
		}
	})
}

// TestRelayBadLabelsNeverWedge: an installation or launch ID that is not
// printable (a newline, a NUL) once made a header the target could not be
// sent, and Alertmanager retried the post forever. The alert goes out with
// a marker in its place, the other alerts of the post with it, and the log
// names the value once.
func TestRelayBadLabelsNeverWedge(t *testing.T) {
	fired := poolTurnEnded.Add(8 * time.Second)
	for _, format := range []string{FormatNtfy, FormatJSON} {
		for _, bad := range []string{"abc\ndef", "\x00", "abc\r\nX-Injected: 1", strings.Repeat("i", 1000)} {
			name := fmt.Sprintf("%s %.24q", format, bad)
			t.Run(name, func(t *testing.T) {
				tg := newTarget(t)
				r, log := newTestRelay(t, tg.URL, format, verdictsFile)
				// With the mute on, so its action (a header in the ntfy
				// format) is checked too.
				r.muteURL, r.muteKey = "https://laptop.tailnet.ts.net:9468", []byte("k")
				badAlert := alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: bad}, fired)
				sameBad := alertOf(dashboards.AlertReconnectingFired, statusFiring, map[string]string{labelInstallation: bad}, fired)
				badLaunch := alertOf(dashboards.AlertSynthesisTooSlow, statusFiring, map[string]string{"service_instance_id": bad}, fired)
				normal := alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, fired)
				for i, body := range [][]byte{payloadOf(badAlert, normal), payloadOf(badAlert, normal), payloadOf(sameBad, badLaunch)} {
					if w := send(t, r, testToken, body); w.Code != http.StatusOK {
						t.Fatalf("%s, post %d: the relay answered %d %s (Alertmanager retries it forever)\n%s", name, i, w.Code, strings.TrimSpace(w.Body.String()), log)
					}
				}
				got := tg.received()
				if len(got) != 4 {
					t.Fatalf("%s: %d posts to the target, want 4", name, len(got))
				}
				for i, p := range got {
					for k, vs := range p.header {
						for _, v := range vs {
							if strings.ContainsFunc(v, func(c rune) bool { return c < ' ' || c == 0x7f }) {
								t.Errorf("%s, post %d: header %s %q", name, i, k, v)
							}
						}
					}
					if bytes.Contains(p.body, []byte(bad)) || strings.Contains(p.header.Get("Title"), bad) {
						t.Errorf("%s, post %d carries the value:\n%s", name, i, render(p))
					}
				}
				title := func(p post) string {
					if format == FormatJSON {
						var j jsonMessage
						if err := json.Unmarshal(p.body, &j); err != nil {
							t.Fatal(err)
						}
						return j.Title
					}
					return p.header.Get("Title")
				}
				for _, i := range []int{0, 2} {
					if got[i].header.Get("X-Percause-Installation") != badLabel || !strings.Contains(title(got[i]), badLabel) {
						t.Errorf("%s, post %d does not name %q:\n%s", name, i, badLabel, render(got[i]))
					}
				}
				if format == FormatNtfy && (got[0].header.Get("Actions") != "" || !strings.Contains(got[1].header.Get("Actions"), "i="+poolInstallation)) {
					t.Errorf("%s: a mute for an installation not printable, or none for the normal one: %q, %q", name, got[0].header.Get("Actions"), got[1].header.Get("Actions"))
				}
				if got[1].header.Get("X-Percause-Installation") != poolInstallation || got[1].header.Get("X-Percause-Turn") != poolTurn {
					t.Errorf("%s: the normal alert:\n%s", name, render(got[1]))
				}
				if !strings.Contains(title(got[3]), "engine launch "+badLabel) {
					t.Errorf("%s: the launch alert's title %q", name, title(got[3]))
				}
				if n := strings.Count(log.String(), quoteLabel(bad)); n != 1 {
					t.Errorf("%s: the log names the value %d times, want once:\n%s", name, n, log)
				}
			})
		}
	}
}

// TestCleanLabels: what is printable passes as it is, text that is not
// ASCII included (the title RFC 2047-encodes it in the ntfy format);
// anything else becomes the marker in the labels and in the annotations
// filled from them. Invalid UTF-8 cannot come through the webhook (JSON
// makes it U+FFFD) but is refused all the same.
func TestCleanLabels(t *testing.T) {
	for v, want := range map[string]bool{
		poolInstallation: true, "café-ü": true, "日本の端末": true, "a b": true, strings.Repeat("x", maxLabel): true,
		"a\tb": false, "a\nb": false, "\x00": false, "\x7f": false, "\u202eevil": false, "\xff\xfe": false, strings.Repeat("x", maxLabel+1): false,
	} {
		if printable(v) != want {
			t.Errorf("printable(%q) = %v", v, !want)
		}
	}
	a := alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: "café"}, poolTurnEnded)
	if c, bad := cleanLabels(a); bad != nil || c.Labels[labelInstallation] != "café" || c.Annotations["summary"] != "pool_reset moved on installation café" {
		t.Errorf("a printable installation: %v %v", c.Labels, bad)
	}
	a = alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: "\xff\xfe"}, poolTurnEnded)
	c, bad := cleanLabels(a)
	if bad[labelInstallation] != "\xff\xfe" || c.Labels[labelInstallation] != badLabel || c.Annotations["summary"] != "pool_reset moved on installation "+badLabel {
		t.Errorf("invalid UTF-8: %q %q", c.Labels, c.Annotations)
	}
	if a.Labels[labelInstallation] != "\xff\xfe" {
		t.Error("cleanLabels changed the alert passed in")
	}
}
