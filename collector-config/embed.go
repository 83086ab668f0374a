// Package collectorconfig holds the collector configurations of percause and
// exposes the embedded default, local.yaml, to Go (the folder's name has a
// dash, so it is imported as github.com/percause/percause/collector-config).
//
// local.yaml is what `percause collector` runs without --config and what the
// demo and the lab start. compose.yaml is the compose stack's, gateway.yaml
// this distribution's side of a scale-out, agent.yaml the upstream contrib
// distribution's (it needs the load-balancing exporter, which this
// distribution cannot carry).
package collectorconfig

import _ "embed"

// Local is local.yaml: the embedded default configuration.
//
//go:embed local.yaml
var Local []byte
