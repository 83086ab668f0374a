// Package metadata holds the shared storage extension's component type,
// stability and self-telemetry, laid out the way mdatagen would generate
// them from metadata.yaml.
package metadata
