package dashboards

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/percause/percause/instr/semconv"
)

// overviewPanel is what these tests read of a generated panel.
type overviewPanel struct {
	Type, Title, Description string
	Targets                  []struct{ Expr string }
	FieldConfig              struct {
		Defaults struct {
			Thresholds struct {
				Steps []struct {
					Value *float64
					Color string
				}
			}
		}
	}
}

func overviewPanels(t *testing.T) []overviewPanel {
	t.Helper()
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Panels []overviewPanel }
	if err := json.Unmarshal(files[PathOverviewJSON], &d); err != nil {
		t.Fatal(err)
	}
	return d.Panels
}

// notBreaks are the causes that name no break of their own, so they have no
// row: the Verdicts row shows them beside every other cause.
var notBreaks = map[string]string{
	semconv.CauseNone:    "no rule fired",
	semconv.CauseUnknown: "the rules could not read the turn (a take missing, bad input)",
}

// TestEveryCauseHasARow: every cause of semconv.Causes that names a break
// has a row on the overview, one whose title names the cause or whose
// panels read that cause's verdicts; and every cause has its colour. A new
// cause added to semconv fails here until the dashboards show it.
func TestEveryCauseHasARow(t *testing.T) {
	rows := map[string][]overviewPanel{}
	var order []string
	row := ""
	for _, p := range overviewPanels(t) {
		if p.Type == "row" {
			row = p.Title
			order = append(order, row)
			continue
		}
		rows[row] = append(rows[row], p)
	}
	for _, cause := range semconv.Causes {
		if _, ok := causeColors[cause]; !ok {
			t.Errorf("cause %q has no colour in causeColors", cause)
		}
		if _, ok := notBreaks[cause]; ok {
			continue
		}
		if r := rowOf(cause, order, rows); r == "" {
			t.Errorf("cause %q has no row on %q (rows: %v): add one whose panels read its verdicts", cause, OverviewTitle, order)
		}
	}
	for cause := range notBreaks {
		if !strings.Contains(strings.Join(semconv.Causes, ","), cause) {
			t.Errorf("notBreaks lists %q, which is not in semconv.Causes", cause)
		}
	}
}

// rowOf is the first row whose title names cause or whose panels select
// its verdicts (percause_cause="cause"); "" when none does.
func rowOf(cause string, order []string, rows map[string][]overviewPanel) string {
	selects := fmt.Sprintf(`%s="%s"`, lCause, cause)
	for _, r := range order {
		if strings.Contains(strings.ToLower(r), cause) {
			return r
		}
		for _, p := range rows[r] {
			for _, q := range p.Targets {
				if strings.Contains(q.Expr, selects) {
					return r
				}
			}
		}
	}
	return ""
}

// TestRowOfNeedsTheCause: the row finder does not find a row for a cause
// that no row names or reads.
func TestRowOfNeedsTheCause(t *testing.T) {
	rows := map[string][]overviewPanel{
		"Network": {{Title: "Underruns"}},
		"Other":   {{Title: "x", Targets: []struct{ Expr string }{{Expr: `sum(percause_cause_implicated_total{percause_cause="pool"})`}}}},
	}
	order := []string{"Network", "Other"}
	for cause, want := range map[string]string{"network": "Network", "pool": "Other", "radio": ""} {
		if got := rowOf(cause, order, rows); got != want {
			t.Errorf("rowOf(%q) = %q, want %q", cause, got, want)
		}
	}
}

// TestRuleThresholdsComeFromSemconv: the wait row's lines sit at the
// rules' defaults and its text states them, as instr/semconv declares them.
func TestRuleThresholdsComeFromSemconv(t *testing.T) {
	panels := map[string]overviewPanel{}
	for _, p := range overviewPanels(t) {
		panels[p.Title] = p
	}
	lead := -semconv.DefaultLateLead.Seconds()
	mic := semconv.DefaultMicOpenLimit.Seconds()
	for title, line := range map[string]float64{"Unit lead": lead, "Microphone open by stage": mic} {
		p, ok := panels[title]
		if !ok {
			t.Fatalf("no panel %q", title)
		}
		found := false
		for _, s := range p.FieldConfig.Defaults.Thresholds.Steps {
			found = found || s.Value != nil && *s.Value == line
		}
		if !found {
			t.Errorf("%q draws no line at %g", title, line)
		}
		for _, text := range []string{fmt.Sprintf("below -%.2f s", -lead), fmt.Sprintf("over %g s", mic)} {
			if !strings.Contains(p.Description, text) {
				t.Errorf("%q does not state %q: %s", title, text, p.Description)
			}
		}
	}
	state := fmt.Sprintf("rose on each of the last %d turns", semconv.DefaultRisingTurns)
	if p := panels["Live objects by kind"]; !strings.Contains(p.Description, state) {
		t.Errorf("the state row does not state %q", state)
	}
	for _, a := range Alerts() {
		if a.Name == AlertReconnectingFired && !strings.Contains(a.Description, reconnectingRule) {
			t.Errorf("%s does not state the rule %q", a.Name, reconnectingRule)
		}
	}
}
