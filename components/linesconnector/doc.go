// Package linesconnector is the collector's lines connector (type "lines"):
// a logs → traces connector that reads the [voice-turn] and [tts-take] lines
// an app already prints (the canonical spelling of exporters/textlines and
// the app's own, docs/lines.md) and turns them into the voice.turn /
// voice.unit / tts.take trace the SDK makes, so the verdict processor decides
// them unchanged. Lines come from files tailed by the filelog receiver or as
// OTLP log records; phone and engine lines join by trace ID, or by take ID
// within a time window when a line has none. README.md says what it holds
// and what a crash can lose.
package linesconnector
