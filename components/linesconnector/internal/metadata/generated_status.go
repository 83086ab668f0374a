// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type used in collector configuration files.
	Type = component.MustNewType("lines")
	// ScopeName is the instrumentation scope of the component's own telemetry
	// and of the spans it makes from lines.
	ScopeName = "github.com/percause/percause/components/linesconnector"
)

const (
	// LogsToTracesStability is the stability level of the logs to traces connector.
	LogsToTracesStability = component.StabilityLevelAlpha
)
