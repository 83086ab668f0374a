package dashboards

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/alerting"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/expr"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Grafana-managed alert rules: the same alerts as the Prometheus rules,
// for a person who reads alerts in Grafana rather than in Alertmanager.
// Each rule is A (the PromQL, instant) -> B (last value per series) ->
// C (threshold), the shape Grafana's own rule editor makes.

const (
	grafanaOrgID       = 1
	grafanaFolder      = "percause"
	grafanaRuleGroup   = "percause"
	grafanaContactName = "percause-phone"
	// grafanaEvalSeconds is the rule group's evaluation interval.
	grafanaEvalSeconds = 60
	// grafanaLookbackSeconds is the range Grafana queries for A.
	grafanaLookbackSeconds = 600
)

func grafanaRule(a Alert) *alerting.RuleBuilder {
	query := alerting.NewQueryBuilder("A").
		DatasourceUid(PrometheusUID).
		RelativeTimeRange(grafanaLookbackSeconds, 0).
		Model(prometheus.NewDataqueryBuilder().
			Datasource(promDS()).
			Expr(a.Query).
			Instant().
			RefId("A"))
	reduce := alerting.NewQueryBuilder("B").
		DatasourceUid("__expr__").
		Model(expr.NewExprBuilder().TypeReduce(expr.NewTypeReduceBuilder().
			RefId("B").
			Expression("A").
			Reducer(expr.TypeReduceReducerLast)))
	evaluator := expr.ExprTypeThresholdConditionsEvaluatorTypeGt
	if a.Op == below {
		evaluator = expr.ExprTypeThresholdConditionsEvaluatorTypeLt
	}
	threshold := alerting.NewQueryBuilder("C").
		DatasourceUid("__expr__").
		Model(expr.NewExprBuilder().TypeThreshold(expr.NewTypeThresholdBuilder().
			RefId("C").
			Expression("B").
			Conditions([]cog.Builder[expr.ExprTypeThresholdConditions]{
				expr.NewExprTypeThresholdConditionsBuilder().Evaluator(
					expr.NewExprTypeThresholdConditionsEvaluatorBuilder().
						Type(evaluator).
						Params([]float64{a.Threshold})),
			})))
	return alerting.NewRuleBuilder(a.Name).
		Uid(grafanaRuleUID(a.Name)).
		FolderUID(grafanaFolder).
		RuleGroup(grafanaRuleGroup).
		OrgID(grafanaOrgID).
		Condition("C").
		WithQuery(query).
		WithQuery(reduce).
		WithQuery(threshold).
		// A movement that ended is "no data", which is the normal state.
		NoDataState(alerting.RuleNoDataStateOK).
		ExecErrState(alerting.RuleExecErrStateError).
		For(a.For).
		Labels(grafanaLabels(a)).
		Annotations(map[string]string{"summary": a.Summary, "description": a.Description}).
		NotificationSettings(alerting.NewNotificationSettingsBuilder().Receiver(grafanaContactName))
}

// grafanaLabels are the rule's labels, and that Grafana evaluated it.
func grafanaLabels(a Alert) map[string]string {
	l := a.Labels()
	l["source"] = "grafana"
	return l
}

// grafanaRuleUID is a rule's UID: short (Grafana caps UIDs at 40
// characters) and stable across regenerations.
func grafanaRuleUID(name string) string {
	uid := "percause-" + escape(name)
	if len(uid) > 40 {
		uid = uid[:40]
	}
	return uid
}

// grafanaAlertRules is the alerting provisioning file: the SDK's rules,
// rewritten into Grafana's file-provisioning shape (a group names its
// folder and interval; the rules inside drop the folder, group and org,
// which the group carries).
func grafanaAlertRules(alerts []Alert) (map[string]any, error) {
	var rules []any
	for _, a := range alerts {
		r, err := grafanaRule(a).Build()
		if err != nil {
			return nil, fmt.Errorf("grafana rule %s: %w", a.Name, err)
		}
		m, err := toMap(r)
		if err != nil {
			return nil, err
		}
		delete(m, "folderUID")
		delete(m, "ruleGroup")
		delete(m, "orgID")
		rules = append(rules, m)
	}
	return map[string]any{
		"apiVersion": 1,
		"groups": []any{map[string]any{
			"orgId":    grafanaOrgID,
			"name":     grafanaRuleGroup,
			"folder":   grafanaFolder,
			"interval": fmt.Sprintf("%ds", grafanaEvalSeconds),
			"rules":    rules,
		}},
	}, nil
}

// grafanaContactPoints provisions the contact point every Grafana rule
// notifies, and the policy routing to it. Its URL comes from the
// environment of the Grafana container (Grafana expands $VAR in
// provisioning files), so no address or token lives in the repository.
func grafanaContactPoints() (map[string]any, error) {
	cp, err := alerting.NewContactPointBuilder().
		Uid("percause-phone-webhook").
		Name(grafanaContactName).
		Type(alerting.ContactPointTypeWebhook).
		Settings(map[string]any{"url": "$" + EnvAlertWebhookURL, "httpMethod": "POST"}).
		DisableResolveMessage(false).
		Build()
	if err != nil {
		return nil, fmt.Errorf("contact point: %w", err)
	}
	policy, err := alerting.NewNotificationPolicyBuilder().
		Receiver(grafanaContactName).
		GroupBy([]string{"alertname", lInstallation}).
		GroupWait("0s").
		GroupInterval("1m").
		RepeatInterval("4h").
		Build()
	if err != nil {
		return nil, fmt.Errorf("notification policy: %w", err)
	}
	receiver, err := toMap(cp)
	if err != nil {
		return nil, err
	}
	delete(receiver, "name")
	delete(receiver, "provenance")
	pol, err := toMap(policy)
	if err != nil {
		return nil, err
	}
	pol["orgId"] = grafanaOrgID
	return map[string]any{
		"apiVersion": 1,
		"contactPoints": []any{map[string]any{
			"orgId":     grafanaOrgID,
			"name":      grafanaContactName,
			"receivers": []any{receiver},
		}},
		"policies": []any{pol},
	}, nil
}

// toMap turns an SDK object into plain maps through its JSON form (the
// form Grafana reads), so it can be reshaped and written as YAML.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}
