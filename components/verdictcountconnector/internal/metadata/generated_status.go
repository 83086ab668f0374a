// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type used in collector configuration files.
	Type = component.MustNewType("verdictcount")
	// ScopeName is the instrumentation scope of the counters it writes and of
	// its own telemetry.
	ScopeName = "github.com/percause/percause/components/verdictcountconnector"
)

const (
	// TracesToMetricsStability is the stability of the traces → metrics
	// connector.
	TracesToMetricsStability = component.StabilityLevelAlpha
)
