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
	return out
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
