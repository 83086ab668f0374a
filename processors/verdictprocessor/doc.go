// Package verdictprocessor is a collector traces processor (type "verdict")
// that reads each voice turn's measurements with the rules of the percause
// architecture and emits a per-cause verdict: one percause.verdict span in the
// turn's own trace, child of its voice.turn span.
//
// Spans pass through at once. Per trace the processor keeps only the readings
// its rules need (a few hundred bytes, never the spans) until the turn can be
// decided: its voice.turn span, the units it says it read, and the engine
// takes those units' underruns are read against have all arrived, or the
// configured wait has passed. Cross-turn rules read the history each turn
// report carries, so the only state is the bounded set of pending traces and
// a bounded set of recently decided trace IDs (for duplicate deliveries).
//
// The processor reads every name from instr/semconv and nothing else of the
// project: it depends on the wire format, not on the client library.
package verdictprocessor
