// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type used in collector configuration files.
	Type = component.MustNewType("verdicts")
	// ScopeName is the instrumentation scope of the component's own telemetry.
	ScopeName = "github.com/percause/percause/components/verdictexporter"
)

const (
	// TracesStability is the stability level of the traces exporter.
	TracesStability = component.StabilityLevelAlpha
)
