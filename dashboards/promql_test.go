package dashboards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"
)

// query is one PromQL expression found in a generated file.
type query struct {
	File  string // generated file it came from
	Where string // panel title, annotation, variable or rule
	Expr  string // as written (with Grafana variables)
}

// expand substitutes Grafana's variables the way Grafana does before a
// query reaches Prometheus: every selection variable at "All" (.*), and
// the interval variables at the given durations.
func expand(expr, rateInterval, wholeRange string) string {
	r := strings.NewReplacer(
		"$__rate_interval", rateInterval,
		"$__range", wholeRange,
		"$__interval", rateInterval,
		"$"+varInstallation, ".*",
		"$"+varLink, ".*",
		"$"+varLaunch, ".*",
	)
	return r.Replace(expr)
}

var labelValuesRe = regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// allQueries reads every PromQL expression out of the generated files:
// panel targets, annotations, variables (the selector inside
// label_values), Grafana alert rules and Prometheus alert rules.
func allQueries(t *testing.T) []query {
	t.Helper()
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var qs []query
	for _, p := range []string{PathOverviewJSON, PathPipelineJSON} {
		var d map[string]any
		if err := json.Unmarshal(files[p], &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, panel := range asList(d["panels"]) {
			pm := panel.(map[string]any)
			for _, target := range asList(pm["targets"]) {
				if e, ok := target.(map[string]any)["expr"].(string); ok {
					qs = append(qs, query{p, fmt.Sprintf("panel %q", pm["title"]), e})
				}
			}
		}
		if ann, ok := d["annotations"].(map[string]any); ok {
			for _, a := range asList(ann["list"]) {
				am := a.(map[string]any)
				if e, ok := am["expr"].(string); ok {
					qs = append(qs, query{p, fmt.Sprintf("annotation %q", am["name"]), e})
				}
			}
		}
		if tmpl, ok := d["templating"].(map[string]any); ok {
			for _, v := range asList(tmpl["list"]) {
				vm := v.(map[string]any)
				if s, ok := vm["query"].(string); ok {
					if m := labelValuesRe.FindStringSubmatch(s); m != nil {
						qs = append(qs, query{p, fmt.Sprintf("variable %q", vm["name"]), m[1]})
					}
				}
			}
		}
	}
	var grafana struct {
		Groups []struct {
			Rules []struct {
				Title string
				Data  []struct {
					Model map[string]any
				}
			}
		}
	}
	if err := yaml.Unmarshal(files[PathGrafanaAlertRules], &grafana); err != nil {
		t.Fatal(err)
	}
	for _, g := range grafana.Groups {
		for _, r := range g.Rules {
			for _, d := range r.Data {
				if e, ok := d.Model["expr"].(string); ok {
					qs = append(qs, query{PathGrafanaAlertRules, "grafana rule " + r.Title, e})
				}
			}
		}
	}
	var prom promRuleFile
	if err := yaml.Unmarshal(files[PathPrometheusRules], &prom); err != nil {
		t.Fatal(err)
	}
	for _, g := range prom.Groups {
		for _, r := range g.Rules {
			qs = append(qs, query{PathPrometheusRules, "prometheus rule " + r.Alert, r.Expr})
		}
	}
	return qs
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestEveryQueryParses parses every expression of every panel, annotation,
// variable and rule with Prometheus's own parser.
func TestEveryQueryParses(t *testing.T) {
	qs := allQueries(t)
	if len(qs) < 40 {
		t.Fatalf("found only %d queries: the extraction missed some", len(qs))
	}
	p := parser.NewParser(parser.Options{})
	for _, q := range qs {
		e := expand(q.Expr, "1m", "1h")
		if _, err := p.ParseExpr(e); err != nil {
			t.Errorf("%s %s: %v\n  %s", q.File, q.Where, err, e)
		}
	}
}

// TestEveryPanelHasADescriptionAndQuery: each panel states what it reads.
func TestEveryPanelHasADescriptionAndQuery(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{PathOverviewJSON, PathPipelineJSON} {
		var d map[string]any
		if err := json.Unmarshal(files[p], &d); err != nil {
			t.Fatal(err)
		}
		titles := map[string]bool{}
		for _, panel := range asList(d["panels"]) {
			pm := panel.(map[string]any)
			if pm["type"] == "row" {
				continue
			}
			title, _ := pm["title"].(string)
			if titles[title] {
				t.Errorf("%s: two panels titled %q", p, title)
			}
			titles[title] = true
			if desc, _ := pm["description"].(string); len(desc) < 40 {
				t.Errorf("%s: panel %q has no description of what it reads", p, title)
			}
			if len(asList(pm["targets"])) == 0 {
				t.Errorf("%s: panel %q has no query", p, title)
			}
		}
	}
}

// TestCauseRowsStateTheirRule: every cause row's panels quote its rule.
func TestCauseRowsStateTheirRule(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Type, Title, Description string
		}
	}
	if err := json.Unmarshal(files[PathOverviewJSON], &d); err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{
		"Network": "Rule (network)", "Synthesis": "Rule (synthesis)", "Pipeline and accumulated state": "Rule (state)",
		"Pool healing": "Rule (pool)", "Bluetooth": "Rule (bluetooth)", "The wait": "Rule (wait)", "Done or not": "",
		"Verdicts": "",
	}
	// Panels that read another rule than their row's.
	byTitle := map[string]string{
		"Link status changes":                `"Reconnecting" shows only when ` + reconnectingRule,
		"Turns by primary cause":             primaryRule,
		"Share of turns by primary cause":    primaryRule,
		"Causes implicated":                  "Every cause a rule implicated",
		"Turns in range":                     "",
		"Recent turns: verdict and evidence": "",
	}
	row := ""
	var rows []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			row = p.Title
			rows = append(rows, row)
			continue
		}
		want, ok := byTitle[p.Title]
		if !ok {
			want = rules[row]
		}
		if want != "" && !strings.Contains(p.Description, want) {
			t.Errorf("row %q panel %q does not state %q", row, p.Title, want)
		}
	}
	sort.Strings(rows)
	if len(rows) != 8 {
		t.Errorf("rows: %v", rows)
	}
}

// TestDashboardsAreValidSDKTypes reads the generated JSON back strictly into
// the foundation SDK's types: no unknown field, no wrong type.
func TestDashboardsAreValidSDKTypes(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	cog.NewRuntime().RegisterDataqueryVariant(JaegerQueryVariantConfig())
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{PathOverviewJSON, PathPipelineJSON} {
		var d dashboard.Dashboard //lint:ignore SA1019 the v1 schema is the one generated
		// The SDK returns an empty cog.BuildErrors, not nil, when all is well.
		if err := d.UnmarshalJSONStrict(files[p]); err != nil && err.Error() != "" {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := d.Validate(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
