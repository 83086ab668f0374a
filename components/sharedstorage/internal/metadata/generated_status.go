// Code written by hand in the style mdatagen generates (mdatagen is not
// available to this build); metadata.yaml beside the component describes it.

package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	// Type is the component type used in collector configuration files.
	Type = component.MustNewType("shared_storage")
	// ScopeName is the instrumentation scope of the component's own telemetry.
	ScopeName = "github.com/percause/percause/components/sharedstorage"
)

const (
	// ExtensionStability is the stability level of the extension.
	ExtensionStability = component.StabilityLevelAlpha
)
