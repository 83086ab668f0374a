// Package exporters holds how a phone or an engine ships its telemetry:
//
//   - otlp: OTLP/HTTP (protobuf, gzip) to a collector on an HTTP client of its
//     own, so telemetry never rides the app's control or bulk lanes;
//   - spool: a crash-safe, bounded disk spool that every batch passes through
//     before it is sent, so an offline stretch, a crash or a relaunch loses
//     nothing but what the size bound drops (and that is counted);
//   - textlines: the [voice-turn] and [tts-take] log lines: the canonical
//     line written from the same reports as the spans, and the reader the
//     collector's lines connector reads an app's lines with.
//
// instr.Setup wires them together; they are usable on their own too.
package exporters
