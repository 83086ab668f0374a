// Package metadata holds the verdict count connector's component type,
// stability and self-telemetry, laid out the way mdatagen would generate them
// from metadata.yaml.
package metadata
