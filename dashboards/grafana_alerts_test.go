package dashboards

import (
	"encoding/json"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/alerting"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/expr"
	"gopkg.in/yaml.v3"
)

// strictOK treats the SDK's empty cog.BuildErrors as no error.
func strictOK(err error) bool { return err == nil || err.Error() == "" }

// TestGrafanaAlertingFilesAreValidSDKTypes reads the generated alerting
// provisioning back: each rule (with the group's folder, name and org put
// back) strictly into the SDK's Rule, the contact point's receiver into
// ContactPoint and the policy into NotificationPolicy.
func TestGrafanaAlertingFilesAreValidSDKTypes(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	cog.NewRuntime().RegisterDataqueryVariant(expr.VariantConfig())
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		APIVersion int `yaml:"apiVersion"`
		Groups     []struct {
			OrgID    int64            `yaml:"orgId"`
			Name     string           `yaml:"name"`
			Folder   string           `yaml:"folder"`
			Interval string           `yaml:"interval"`
			Rules    []map[string]any `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(files[PathGrafanaAlertRules], &rules); err != nil {
		t.Fatal(err)
	}
	if rules.APIVersion != 1 || len(rules.Groups) != 1 {
		t.Fatalf("rules file: apiVersion %d, %d groups", rules.APIVersion, len(rules.Groups))
	}
	g := rules.Groups[0]
	if g.Folder == "" || g.Name == "" || g.Interval == "" || g.OrgID != grafanaOrgID {
		t.Errorf("group lacks folder, name, interval or org: %+v", g)
	}
	if len(g.Rules) != len(Alerts()) {
		t.Errorf("%d Grafana rules for %d alerts", len(g.Rules), len(Alerts()))
	}
	for _, r := range g.Rules {
		r["folderUID"], r["ruleGroup"], r["orgID"] = g.Folder, g.Name, g.OrgID
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var rule alerting.Rule
		if err := rule.UnmarshalJSONStrict(b); !strictOK(err) {
			t.Errorf("rule %v: %v", r["title"], err)
			continue
		}
		if err := rule.Validate(); !strictOK(err) {
			t.Errorf("rule %s: %v", rule.Title, err)
		}
		if rule.Condition != "C" || len(rule.Data) != 3 {
			t.Errorf("rule %s: condition %s over %d queries", rule.Title, rule.Condition, len(rule.Data))
		}
	}

	var cps struct {
		ContactPoints []struct {
			Name      string           `yaml:"name"`
			Receivers []map[string]any `yaml:"receivers"`
		} `yaml:"contactPoints"`
		Policies []map[string]any `yaml:"policies"`
	}
	if err := yaml.Unmarshal(files[PathGrafanaContactPoints], &cps); err != nil {
		t.Fatal(err)
	}
	if len(cps.ContactPoints) != 1 || len(cps.ContactPoints[0].Receivers) != 1 || len(cps.Policies) != 1 {
		t.Fatalf("contact points file: %+v", cps)
	}
	recv := cps.ContactPoints[0].Receivers[0]
	recv["name"] = cps.ContactPoints[0].Name
	b, _ := json.Marshal(recv)
	var cp alerting.ContactPoint
	if err := cp.UnmarshalJSONStrict(b); !strictOK(err) {
		t.Errorf("contact point: %v", err)
	}
	if url, _ := cp.Settings.(map[string]any)["url"].(string); url != "$"+EnvAlertWebhookURL {
		t.Errorf("the contact point's URL is %q, not the environment variable", url)
	}
	pol := cps.Policies[0]
	delete(pol, "orgId")
	b, _ = json.Marshal(pol)
	var np alerting.NotificationPolicy
	if err := np.UnmarshalJSONStrict(b); !strictOK(err) {
		t.Errorf("policy: %v", err)
	}
	if np.Receiver == nil || *np.Receiver != cps.ContactPoints[0].Name {
		t.Errorf("the policy routes to %v, not the contact point", np.Receiver)
	}
}
