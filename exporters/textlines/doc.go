// Package textlines writes the canonical one-line reports people read in
// logs: [voice-turn] for a phone's turn and [tts-take] for an engine's take.
//
// The lines are written from the same recordings as the spans (instr fills a
// Turn or a Take when the report ends), so a log and a trace never disagree.
// The field order and formats are part of the contract and documented in
// docs/semconv.md; fields are key=value, separated by one space, values never
// contain spaces, durations are seconds with two decimals.
package textlines
