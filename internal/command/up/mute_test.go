package up

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percause/percause/dashboards"
)

// fakeSilences stands in for Alertmanager's silences API: it keeps every
// silence posted.
type fakeSilences struct {
	*httptest.Server
	mu  sync.Mutex
	got []map[string]any
}

func newFakeSilences(t *testing.T) *fakeSilences {
	f := &fakeSilences{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v2/silences" {
			http.NotFound(w, r)
			return
		}
		var s map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &s); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.got = append(f.got, s)
		n := len(f.got)
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"silenceID": "s" + string(rune('0'+n))})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSilences) silences() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.got...)
}

// TestMuteFromThePhone: a firing notification carries ntfy's action
// ("Mute until HH:MM", an HTTP POST to the relay as the phone reaches
// it); tapping it makes one Alertmanager silence of the installation's
// alerts, made by percause up, ending when the action says; tapping it
// again makes no second. The token is good for that silence only: another
// installation, another end, or the same after its end are refused, and
// nothing reaches Alertmanager.
func TestMuteFromThePhone(t *testing.T) {
	am := newFakeSilences(t)
	tg := newTarget(t)
	r, log := newTestRelay(t, tg.URL, FormatNtfy, verdictsFile)
	now := poolTurnEnded.Add(10 * time.Second)
	r.now = func() time.Time { return now }
	r.muteURL, r.alertmanager = "https://laptop.tailnet.ts.net:9468", am.URL
	var err error
	if r.muteKey, err = loadMuteKey(filepath.Join(t.TempDir(), MuteKeyFile)); err != nil {
		t.Fatal(err)
	}
	send(t, r, testToken, payloadOf(alertOf(dashboards.AlertPoolResetMoved, statusFiring, map[string]string{labelInstallation: poolInstallation}, poolTurnEnded)))
	got := tg.received()
	if len(got) != 1 {
		t.Fatalf("%d posts", len(got))
	}
	act := got[0].header.Get("Actions")
	parts := strings.Split(act, ", ")
	if len(parts) < 4 || parts[0] != "http" || parts[1] != "Mute until 16:24" || parts[3] != "method=POST" {
		t.Fatalf("the action: %q", act)
	}
	u, err := url.Parse(parts[2])
	if err != nil || !strings.HasPrefix(parts[2], r.muteURL+MutePath+"?") {
		t.Fatalf("the action's URL %q: %v", parts[2], err)
	}
	tap := func(q url.Values) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, MutePath+"?"+q.Encode(), nil)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w
	}
	for i := 0; i < 2; i++ {
		if w := tap(u.Query()); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "muted installation "+poolInstallation+" until 16:24") {
			t.Fatalf("tap %d: %d %s\n%s", i, w.Code, w.Body, log)
		}
	}
	s := am.silences()
	if len(s) != 1 {
		t.Fatalf("%d silences for two taps, want 1", len(s))
	}
	end := time.Unix(mustInt(t, u.Query().Get("until")), 0)
	if s[0]["createdBy"] != SilenceCreator || s[0]["endsAt"] != end.UTC().Format(time.RFC3339) ||
		!strings.Contains(toJSON(s[0]["matchers"]), `"name":"app_installation_id","value":"`+poolInstallation+`"`) {
		t.Errorf("the silence: %v", s[0])
	}
	// The token is good for that silence only.
	other := u.Query()
	other.Set("i", "another-installation")
	later := u.Query()
	later.Set("until", u.Query().Get("until")+"0")
	for name, q := range map[string]url.Values{"another installation": other, "another end": later} {
		if w := tap(q); w.Code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	now = end
	r.mutes = map[string]string{}
	if w := tap(u.Query()); w.Code != http.StatusGone {
		t.Errorf("after its end: %d %s", w.Code, w.Body)
	}
	if n := len(am.silences()); n != 1 {
		t.Errorf("%d silences after the refused taps", n)
	}
	// Without an address the phone reaches, no action.
	r.muteURL = ""
	send(t, r, testToken, payloadOf(alertOf(dashboards.AlertLiveCountGrowing, statusFiring, map[string]string{labelInstallation: stateInstallation}, poolTurnEnded)))
	if got := tg.received(); got[len(got)-1].header.Get("Actions") != "" {
		t.Errorf("an action without PERCAUSE_MUTE_URL: %q", got[len(got)-1].header.Get("Actions"))
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
