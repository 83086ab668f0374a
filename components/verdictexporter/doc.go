// Package verdictexporter is a collector traces exporter (type "verdicts")
// that keeps the percause.verdict spans the verdict processor makes, and the
// pippa.link.status spans passed on beside them, in the verdict file: it
// appends each batch, as an OTLP/JSON line, with one write before the
// exporter returns, so a verdict the pipeline accepted is in the file even
// if the collector is killed the next moment (store.go). At start it cuts
// off what a crash left half written and reads back the newest span IDs, so
// a span sent again after a retry or a restart is written once.
//
// With http it also serves the verdict page (server.go, with
// internal/page/verdictpage), from a bounded store in memory read back from
// the verdict file at start (rebuild.go), and asks Alertmanager what fires
// when one is configured (alertmanager.go). README.md says what it keeps and
// what a crash can lose.
package verdictexporter
