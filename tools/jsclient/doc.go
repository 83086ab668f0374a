// Package jsclient holds a non-Go OpenTelemetry client of percause
// (client.js, on the OpenTelemetry JavaScript SDK pinned by package.json and
// package-lock.json) and the test that holds it to the Go SDK's verdicts.
package jsclient
