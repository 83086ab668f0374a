// Package verdictexporter is a collector traces exporter (type "verdicts")
// that keeps the percause.verdict spans the verdict processor makes: it
// appends them, as OTLP/JSON lines, to a file that is written before the
// exporter returns, so a verdict the pipeline accepted is on disk even if
// the collector is killed the next moment.
//
// It reads only spans named percause.verdict and skips one it has already
// written (the same span ID: a verdict sent again after a retry or a
// restart), so the file holds each verdict once.
package verdictexporter
