package verdictexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/dashboards"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/page/verdictpage"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// postAlert posts one alert to a real Alertmanager's API, as Prometheus
// does.
func postAlert(t *testing.T, am *testenv.Alertmanager, labels, annotations map[string]string, startsAt time.Time) {
	t.Helper()
	body, _ := json.Marshal([]map[string]any{{"labels": labels, "annotations": annotations,
		"startsAt": startsAt.Format(time.RFC3339), "endsAt": startsAt.Add(time.Hour).Format(time.RFC3339)}})
	resp, err := http.Post(am.URL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("posting an alert: %s", resp.Status)
	}
}

// TestPageShowsFiringAlerts: with page.alertmanager naming a real
// Alertmanager on loopback, the page lists each firing alert above "Done?",
// since when, linking to the turn it names (trace_id) or else to its
// installation's turns; once Alertmanager is stopped (by its pid) the page
// says plainly that it does not answer, and still renders the day.
func TestPageShowsFiringAlerts(t *testing.T) {
	am := testenv.StartAlertmanager(t)
	since := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	postAlert(t, am, map[string]string{"alertname": "PercausePoolResetMoved", "app_installation_id": "install-1", "severity": "warning"},
		map[string]string{"summary": "pool_reset moved on installation install-1", "trace_id": traceOf(1)}, since)
	postAlert(t, am, map[string]string{"alertname": "PercauseReconnectingShown", "app_installation_id": "install-2"},
		map[string]string{"summary": `"Reconnecting" was shown on installation install-2`}, since.Add(time.Minute))
	testenv.WaitFor(t, 10*time.Second, "Alertmanager to hold both alerts", func() bool {
		a, err := am.Alerts()
		return err == nil && len(a) == 2
	})

	cfg := pageConfig(filepath.Join(t.TempDir(), "v.jsonl"))
	cfg.Page.Alertmanager = am.URL
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c := &clock{time.Now()}
	e := startWith(t, cfg, newHost(t), c)
	if err := e.ConsumeTraces(context.Background(), turnAt(1, c.t.Add(-11*time.Minute))); err != nil {
		t.Fatal(err)
	}
	base := "http://" + e.addr + "/"
	code, body, _ := get(t, base)
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	for _, want := range []string{
		`data-state="firing"`,
		`<li data-alert="PercausePoolResetMoved"><strong class="tok">PercausePoolResetMoved</strong>, firing since <time class="tok">` + since.In(time.Local).Format("2006-01-02 15:04:05") + `</time> (10 min): pool_reset moved on installation install-1 · <a href="./?turn=` + traceOf(1) + `">its turn</a></li>`,
		`<a href="./?installation=install-2&amp;range=all">the installation&#39;s turns</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %s", want)
		}
	}
	if strings.Index(body, `id="alerts"`) > strings.Index(body, `id="h-done"`) || strings.Index(body, "PercausePoolResetMoved") > strings.Index(body, "PercauseReconnectingShown") {
		t.Error("the alerts are not above Done?, longest firing first")
	}
	// The permalink the alert links to shows the box too.
	if _, turn, _ := get(t, base+"?turn="+traceOf(1)); !strings.Contains(turn, `data-alert="PercausePoolResetMoved"`) || !strings.Contains(turn, `data-trace="`+traceOf(1)+`"`) {
		t.Error("the alert's turn does not show the alert and the turn")
	}

	am.Proc.Stop()
	code, body, _ = get(t, base)
	if code != http.StatusOK || !strings.Contains(body, `data-state="unanswered"`) ||
		!strings.Contains(body, `Alertmanager (<code class="tok">`+am.URL+`</code>) does not answer, so the page cannot say what is firing: dial tcp`) {
		t.Errorf("with Alertmanager stopped the page = %d and does not say it does not answer", code)
	}
	if !strings.Contains(body, `<strong data-n="1">1</strong> turns`) {
		t.Error("with Alertmanager stopped the day is not shown")
	}
}

// turnOfCause is turn n at at, its verdict implicating cause alone.
func turnOfCause(n byte, at time.Time, cause string) ptrace.Traces {
	td := turnAt(n, at)
	a := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	a.PutStr(semconv.VerdictCause, cause)
	a.PutEmptySlice(semconv.VerdictCauses).AppendEmpty().SetStr(cause)
	return td
}

// TestAlertLinksToTheLatestTurnOfItsCause: an alert as the generated rules
// send it names its installation and its cause (percause_cause) but no
// trace, since the rules group by installation; the box links it to that
// installation's latest kept turn that implicated the cause, and an alert
// no kept turn matches to the installation's turns.
func TestAlertLinksToTheLatestTurnOfItsCause(t *testing.T) {
	am := testenv.StartAlertmanager(t)
	since := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	postAlert(t, am, map[string]string{"alertname": dashboards.AlertPoolResetMoved, "app_installation_id": "install-1", "severity": "page", "percause_cause": semconv.CausePool},
		map[string]string{"summary": "pool_reset moved on installation install-1"}, since)
	postAlert(t, am, map[string]string{"alertname": dashboards.AlertLiveCountGrowing, "app_installation_id": "install-1", "severity": "warning", "percause_cause": semconv.CauseState},
		map[string]string{"summary": "a live count rose on installation install-1"}, since)
	testenv.WaitFor(t, 10*time.Second, "Alertmanager to hold both alerts", func() bool {
		a, err := am.Alerts()
		return err == nil && len(a) == 2
	})
	cfg := pageConfig(filepath.Join(t.TempDir(), "v.jsonl"))
	cfg.Page.Alertmanager = am.URL
	c := &clock{time.Now()}
	e := startWith(t, cfg, newHost(t), c)
	for _, td := range []ptrace.Traces{
		turnOfCause(1, c.t.Add(-20*time.Minute), semconv.CausePool),
		turnOfCause(2, c.t.Add(-12*time.Minute), semconv.CausePool), // the latest pool turn
		turnOfCause(3, c.t.Add(-5*time.Minute), semconv.CauseSynthesis),
	} {
		if err := e.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	_, body, _ := get(t, "http://"+e.addr+"/")
	pool := fmt.Sprintf(`data-alert="%s">`, dashboards.AlertPoolResetMoved)
	i := strings.Index(body, pool)
	if i < 0 {
		t.Fatalf("the page does not list %s", dashboards.AlertPoolResetMoved)
	}
	item := body[i : i+strings.Index(body[i:], "</li>")]
	if !strings.Contains(item, `<a href="./?turn=`+traceOf(2)+`">its turn</a>`) {
		t.Errorf("the pool alert does not link to the latest pool turn (%s): %s", traceOf(2), item)
	}
	state := body[strings.Index(body, fmt.Sprintf(`data-alert="%s">`, dashboards.AlertLiveCountGrowing)):]
	state = state[:strings.Index(state, "</li>")]
	if !strings.Contains(state, `<a href="./?installation=install-1&amp;range=all">the installation&#39;s turns</a>`) {
		t.Errorf("the state alert, which no kept turn implicates, does not link to its installation's turns: %s", state)
	}
}

// TestAlertmanagerThatHangs: an Alertmanager that takes the connection and
// never answers costs the page AlertmanagerTimeout, after which it says so.
func TestAlertmanagerThatHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // read nothing, answer nothing
		}
	}()
	defer func() {
		close(held)
		for c := range held {
			c.Close()
		}
	}()
	got := firingAlerts(context.Background(), &http.Client{Timeout: AlertmanagerTimeout}, "http://"+ln.Addr().String())
	if got.Err != "no answer within 1s" || got.Firing != nil {
		t.Errorf("a hanging Alertmanager: %+v", got)
	}
	select {
	case c := <-held:
		held <- c
	default:
		t.Fatal("the hanging listener was never asked: the test injected no fault")
	}
}

func TestParseAlerts(t *testing.T) {
	got, err := parseAlerts([]byte(`[
{"labels":{"alertname":"B","installation":"i2","percause_cause":"pool"},"annotations":{},"startsAt":"2026-12-01T09:00:00Z","status":{"state":"active"}},
{"labels":{"alertname":"A","trace_id":"0A00000000000000000000000000001F"},"annotations":{"summary":"s"},"startsAt":"2026-12-01T08:00:00Z","status":{"state":"active"}},
{"labels":{"alertname":"C"},"annotations":{"trace_id":"short"},"startsAt":"2026-12-01T07:00:00Z","status":{"state":"suppressed"}},
{"labels":{},"annotations":{"percause_trace_id":"0a00000000000000000000000000002f","app_installation_id":"i3"},"startsAt":"2026-12-01T10:00:00Z","status":{"state":"active"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []verdictpage.Alert{
		{Name: "A", Summary: "s", Since: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), Trace: "0a00000000000000000000000000001f"},
		{Name: "B", Since: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Installation: "i2", Cause: "pool"},
		{Name: "(an alert without alertname)", Since: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Installation: "i3", Trace: "0a00000000000000000000000000002f"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if !got[i].Since.Equal(want[i].Since) || got[i].Name != want[i].Name || got[i].Summary != want[i].Summary ||
			got[i].Trace != want[i].Trace || got[i].Installation != want[i].Installation || got[i].Cause != want[i].Cause {
			t.Errorf("alert %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{``, `{}`, `[1]`, `[{"startsAt":"yesterday"}]`, `null x`} {
		if _, err := parseAlerts([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzParseAlerts: any answer parses or is refused, without a panic; a
// trace it keeps is one the page can link to.
func FuzzParseAlerts(f *testing.F) {
	for _, s := range []string{`[]`, `null`, `[{"labels":{"alertname":"A","trace_id":"0a00000000000000000000000000001f"}}]`,
		`[{"labels":{"alertname":"A"},"annotations":{"summary":"x"},"startsAt":"2026-12-01T08:00:00Z","status":{"state":"active"}}]`, `[{"labels":[]}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		alerts, err := parseAlerts(b)
		if err != nil {
			return
		}
		for _, a := range alerts {
			if a.Name == "" || (a.Trace != "" && !verdictpage.TraceID(a.Trace)) {
				t.Fatalf("%q: kept %+v", b, a)
			}
		}
	})
}

// postSilence makes a silence of installation at a real Alertmanager, as
// createdBy, until end, and returns its ID.
func postSilence(t *testing.T, am *testenv.Alertmanager, installation, createdBy string, end time.Time) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"matchers": []map[string]any{{"name": "app_installation_id", "value": installation, "isRegex": false, "isEqual": true}},
		"startsAt": time.Now().UTC().Format(time.RFC3339), "endsAt": end.UTC().Format(time.RFC3339),
		"createdBy": createdBy, "comment": "muted from a notification on the phone",
	})
	resp, err := http.Post(am.URL+"/api/v2/silences", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		SilenceID string `json:"silenceID"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("posting a silence: %s %v", resp.Status, err)
	}
	return out.SilenceID
}

// silenceState is a silence's state at a real Alertmanager.
func silenceState(t *testing.T, am *testenv.Alertmanager, id string) string {
	t.Helper()
	resp, err := http.Get(am.URL + "/api/v2/silence/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s amSilence
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.Status.State
}

// postLift posts the alerts box's form, with headers.
func postLift(t *testing.T, url, id string, hdr ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader("lift="+id))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPageShowsAndLiftsSilences: the alerts box lists Alertmanager's
// active silences with their end; the one percause up made from a
// notification's mute has a form that lifts it, and the page's own form
// does (Alertmanager then has it expired); another's silence has none and
// is refused if asked; a post another site makes the browser send is
// refused.
func TestPageShowsAndLiftsSilences(t *testing.T) {
	am := testenv.StartAlertmanager(t)
	end := time.Now().Add(time.Hour).Truncate(time.Second)
	ours := postSilence(t, am, "install-1", silenceCreator, end)
	theirs := postSilence(t, am, "install-2", "someone at a terminal", end.Add(time.Hour))

	cfg := pageConfig(filepath.Join(t.TempDir(), "v.jsonl"))
	cfg.Page.Alertmanager = am.URL
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c := &clock{time.Now()}
	e := startWith(t, cfg, newHost(t), c)
	base := "http://" + e.addr + "/"
	_, body, _ := get(t, base)
	for _, want := range []string{
		`<li data-silence="` + ours + `">Muted: <code class="tok">app_installation_id=&#34;install-1&#34;</code> until <time class="tok">` + end.In(time.Local).Format("2006-01-02 15:04:05") + `</time> (in 59 min): muted from a notification on the phone <form method="post" action="./"><input type="hidden" name="lift" value="` + ours + `"><button type="submit">Lift</button></form></li>`,
		`<li data-silence="` + theirs + `">Muted: <code class="tok">app_installation_id=&#34;install-2&#34;</code>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %s\n%s", want, body[strings.Index(body, `id="alerts"`):])
		}
	}
	if strings.Contains(body, `value="`+theirs+`"`) {
		t.Error("the page offers to lift a silence percause up did not make")
	}
	if code := postLift(t, base, ours, "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden || silenceState(t, am, ours) != "active" {
		t.Errorf("a cross-site post: %d", code)
	}
	if code := postLift(t, base, ours, "Origin", "https://elsewhere.example"); code != http.StatusForbidden || silenceState(t, am, ours) != "active" {
		t.Errorf("a post from another origin: %d", code)
	}
	if code := postLift(t, base, theirs, "Sec-Fetch-Site", "same-origin"); code != http.StatusForbidden || silenceState(t, am, theirs) != "active" {
		t.Errorf("lifting another's silence: %d", code)
	}
	if code := postLift(t, base, ours, "Sec-Fetch-Site", "same-origin", "Origin", "http://"+e.addr); code != http.StatusSeeOther {
		t.Fatalf("the page's own form: %d", code)
	}
	if st := silenceState(t, am, ours); st != "expired" {
		t.Errorf("the lifted silence is %s at Alertmanager", st)
	}
	if _, body, _ = get(t, base); strings.Contains(body, `data-silence="`+ours+`"`) {
		t.Error("the lifted silence is still listed")
	}
}
