package verdictexporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/percause/percause/internal/page/verdictpage"
)

// The alerts box: at each rendering the page asks Alertmanager's API what
// is firing (docs/decisions/0233-the-page-asks-alertmanager.md).
const (
	// AlertmanagerTimeout bounds asking Alertmanager: past it the page
	// says it did not answer and renders without its alerts.
	AlertmanagerTimeout = time.Second
	// alertsPath asks for the alerts a person would be told of: active,
	// neither silenced nor inhibited.
	alertsPath = "/api/v2/alerts?active=true&silenced=false&inhibited=false"
	// maxAlertsBody bounds the answer read.
	maxAlertsBody = 1 << 20
)

// Labels and annotations an alert names its turn, its installation and its
// cause by, in the order they are looked for: the generated rules group by
// app_installation_id and label the cause a rule is about percause_cause;
// a rule or a receiver may add trace_id.
var (
	traceKeys        = []string{"trace_id", "percause_trace_id", "trace"}
	installationKeys = []string{"app_installation_id", "installation", "app.installation.id"}
	causeKeys        = []string{"percause_cause", "cause"}
)

// amAlert is the part of an alert of Alertmanager's API v2 the page reads.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

// parseAlerts reads Alertmanager's answer to alertsPath: its active
// alerts, longest firing first.
func parseAlerts(b []byte) ([]verdictpage.Alert, error) {
	var raw []amAlert
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("its answer is not a list of alerts: %w", err)
	}
	out := make([]verdictpage.Alert, 0, len(raw))
	for _, a := range raw {
		if a.Status.State != "" && a.Status.State != "active" {
			continue
		}
		al := verdictpage.Alert{Name: a.Labels["alertname"], Summary: a.Annotations["summary"], Since: a.StartsAt,
			Installation: lookup(a, installationKeys), Cause: lookup(a, causeKeys)}
		if tr := strings.ToLower(lookup(a, traceKeys)); verdictpage.TraceID(tr) {
			al.Trace = tr
		}
		if al.Name == "" {
			al.Name = "(an alert without alertname)"
		}
		out = append(out, al)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// lookup is the first of keys an alert names, in its labels, then its
// annotations.
func lookup(a amAlert, keys []string) string {
	for _, k := range keys {
		if v := a.Labels[k]; v != "" {
			return v
		}
	}
	for _, k := range keys {
		if v := a.Annotations[k]; v != "" {
			return v
		}
	}
	return ""
}

// firingAlerts asks Alertmanager at base what is firing, within
// AlertmanagerTimeout. What it says, or why it did not answer, is what the
// page shows.
func firingAlerts(ctx context.Context, client *http.Client, base string) *verdictpage.Alerts {
	out := &verdictpage.Alerts{Source: base}
	ctx, cancel := context.WithTimeout(ctx, AlertmanagerTimeout)
	defer cancel()
	alerts, err := askAlertmanager(ctx, client, strings.TrimSuffix(base, "/")+alertsPath)
	if err != nil {
		out.Err = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			out.Err = fmt.Sprintf("no answer within %s", AlertmanagerTimeout)
		}
		return out
	}
	out.Firing = alerts
	// Its silences, for the box to show what is muted and until when; a
	// failure to list them leaves them out.
	if silences, err := askSilences(ctx, client, strings.TrimSuffix(base, "/")+silencesPath); err == nil {
		out.Silences = silences
	}
	return out
}

// Silences: the box shows Alertmanager's active silences, and lifts those
// `percause up` made from a notification's mute (their createdBy,
// silenceCreator, as internal/command/up writes it), never another's.
const (
	silencesPath   = "/api/v2/silences"
	silencePath    = "/api/v2/silence/"
	silenceCreator = "percause up"
)

// amSilence is the part of a silence of Alertmanager's API v2 the page
// reads.
type amSilence struct {
	ID       string `json:"id"`
	Matchers []struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"isRegex"`
		IsEqual *bool  `json:"isEqual"`
	} `json:"matchers"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
}

// matchersText is a silence's matchers as Alertmanager writes them.
func (s amSilence) matchersText() string {
	var parts []string
	for _, m := range s.Matchers {
		equal := m.IsEqual == nil || *m.IsEqual
		op := map[[2]bool]string{{true, false}: "=", {false, false}: "!=", {true, true}: "=~", {false, true}: "!~"}[[2]bool{equal, m.IsRegex}]
		parts = append(parts, fmt.Sprintf("%s%s%q", m.Name, op, m.Value))
	}
	return strings.Join(parts, ", ")
}

// silenceID is what an Alertmanager silence ID looks like (a UUID).
func silenceID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && c != '-' {
			return false
		}
	}
	return true
}

func askSilences(ctx context.Context, client *http.Client, u string) ([]verdictpage.Silence, error) {
	b, err := askJSON(ctx, client, u)
	if err != nil {
		return nil, err
	}
	var raw []amSilence
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	var out []verdictpage.Silence
	for _, s := range raw {
		if s.Status.State != "active" || !silenceID(s.ID) {
			continue
		}
		out = append(out, verdictpage.Silence{ID: s.ID, Matchers: s.matchersText(), Ends: s.EndsAt, Comment: s.Comment,
			Liftable: s.CreatedBy == silenceCreator})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ends.Before(out[j].Ends) })
	return out, nil
}

// askJSON GETs u and returns its body (at most maxAlertsBody).
func askJSON(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAlertsBody+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("it answered %s", resp.Status)
	}
	if len(b) > maxAlertsBody {
		return nil, fmt.Errorf("its answer is over %d bytes", maxAlertsBody)
	}
	return b, nil
}

// liftSilence lifts (expires) the silence id at Alertmanager base, if
// percause up made it; it says why not otherwise (an HTTP status and a
// sentence).
func liftSilence(ctx context.Context, client *http.Client, base, id string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, AlertmanagerTimeout)
	defer cancel()
	base = strings.TrimSuffix(base, "/")
	b, err := askJSON(ctx, client, base+silencePath+id)
	if err != nil {
		return http.StatusBadGateway, fmt.Errorf("asking Alertmanager what silence %s is: %w", id, err)
	}
	var s amSilence
	if err := json.Unmarshal(b, &s); err != nil {
		return http.StatusBadGateway, fmt.Errorf("the answer of Alertmanager is not a silence: %w", err)
	}
	if s.CreatedBy != silenceCreator {
		return http.StatusForbidden, fmt.Errorf("silence %s was not made by %s: lift it in Alertmanager", id, silenceCreator)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, base+silencePath+id, nil)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return http.StatusBadGateway, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return http.StatusBadGateway, fmt.Errorf("lifting it, Alertmanager answered %s", resp.Status)
	}
	return http.StatusSeeOther, nil
}

func askAlertmanager(ctx context.Context, client *http.Client, u string) ([]verdictpage.Alert, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, context.DeadlineExceeded
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, ue.Err // the page shows the URL beside it
		}
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAlertsBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading its answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("it answered %s", resp.Status)
	}
	if len(b) > maxAlertsBody {
		return nil, fmt.Errorf("its answer is over %d bytes", maxAlertsBody)
	}
	return parseAlerts(b)
}
