// Package dashboards generates, as Go, everything a person reads the
// verdicts with: the Grafana dashboards ("Voice lane: one measurement per
// cause" and the pipeline's own health), the alerts (as Prometheus rules for
// Alertmanager and as Grafana-managed rules), Grafana's provisioning
// (datasources for Prometheus, Jaeger and Alertmanager, the dashboards
// provider, the alert rules, a contact point), Prometheus's and
// Alertmanager's configuration for the compose stack, and a reference page of
// every panel's queries. `percause dashboards` writes them under
// dashboards/generated, where they are committed.
//
// It is written in the style of grafana-foundation-sdk's Go examples: one
// function per panel, shared query helpers (queries.go), one file per area
// (overview_<row>.go, pipeline.go, alerts.go, grafana_alerts.go).
//
// It knows metric names and nothing else of the project: the OpenTelemetry
// names come from instr/semconv and are turned into the names the
// collector's Prometheus exporter gives them (names.go); the verdict counters
// percause_turns_total and percause_cause_implicated_total are fixed by the
// architecture.
//
// Counts are growth, with a series born inside the window counted from 0,
// because every counter here is born at its first event and increase() would
// drop exactly that event (docs/decisions/0301-…).
//
// The tests prove the output: regeneration leaves no diff; every PromQL
// expression parses with Prometheus's parser; the dashboards read back
// strictly into the SDK's types; `promtool test rules` runs a case for every
// alert, including the relaunch that must not fire; and, against the real
// collector, a real Prometheus and a real Alertmanager fed by the lab's
// scenarios, every query returns data, each cause's panels show the
// scenario's cause, and the pool-reset alert reaches Alertmanager.
package dashboards
