// Package textlines is the [voice-turn] and [tts-take] line format: the
// canonical one-line reports people read in logs, [voice-turn] for a
// phone's turn and [tts-take] for an engine's take, and the reader of them
// as they sit in a log.
//
// One table of fields (fields.go) holds each key once: the form its value
// takes, how the writer prints it and how the readers read it. From it:
//
//   - the writer (AppendTurn, AppendTake, Writer), which the SDK uses: the
//     lines are written from the same recordings as the spans (instr fills
//     a Turn or a Take when the report ends), so a log and a trace never
//     disagree. The field order and formats are part of the contract and
//     documented in docs/semconv.md; fields are key=value, separated by one
//     space, values never contain spaces, durations are seconds with two
//     decimals;
//   - Parse and ParseTake, which read the canonical line back and check it
//     is exactly what the writer prints;
//   - Read, which reads a line as an app's log holds it (any prefix, CRLF,
//     fields in any order, fields this version does not know, the app's own
//     spellings of the same readings; docs/lines.md is its grammar) and
//     refuses a line with every fault it has. The collector's lines
//     connector and `percause lines` read with it.
//
// The package imports nothing but the standard library, so the SDK that
// writes the lines and the collector that reads them share one format
// without the SDK pulling in a collector.
package textlines
