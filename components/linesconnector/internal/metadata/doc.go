// Package metadata is the lines connector's type, stability and own
// telemetry, written by hand in mdatagen's style from ../metadata.yaml.
package metadata
