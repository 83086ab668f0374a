// Package metadata holds the verdict processor's component type, stability
// and self-telemetry, laid out the way mdatagen would generate them from
// metadata.yaml, so the component reads like every other collector component.
package metadata
