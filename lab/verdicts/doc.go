// Package verdicts reads the verdicts of voice turns back from the running
// collector: the percause.verdict spans its verdicts exporter
// (components/verdictexporter) writes to the verdict file as OTLP JSON, one
// export request a line. The lab matches them to the turns it ran by
// trace ID; it never decides a turn itself.
//
// The file is read incrementally (only bytes appended since the last read),
// a line that is not a complete JSON request yet is left for the next read,
// and a broken line is counted and skipped, never fatal.
package verdicts
