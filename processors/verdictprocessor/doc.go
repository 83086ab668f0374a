// Package verdictprocessor is a collector traces processor (type "verdict")
// that reads each voice turn's measurements with the rules of the percause
// architecture and emits a per-cause verdict: one percause.verdict span in the
// turn's own trace, child of its voice.turn span. With emit: turns it makes
// no verdict and sends the joined turn on instead, for a second processor
// routed by launch to decide (a scale-out's first stage).
//
// Spans pass through at once (emit: all) or not at all (emit: verdicts,
// turns). Per trace the processor keeps only the readings its rules need
// (a few hundred bytes, never the spans) until the turn can be decided: its
// voice.turn span, the units it says it read, and the engine takes those
// units' underruns are read against have all arrived, or the configured wait
// has passed. Its state is bounded: the pending traces (internal/pending),
// a ring of recently decided trace IDs (for duplicate deliveries), the
// installations named on the counted events, and each launch's recent turns
// (processors/internal/launches), which the pool and state rules read for a
// turn that carries no history of its own.
//
// A verdict is remembered as decided only once the next consumer accepted
// it. With a storage extension (storage:), the held traces and decided IDs
// are kept in it (internal/persist). With storage or emit: verdicts, the
// work of concurrent requests is done in cycles (cycle.go), each handing its
// verdicts downstream in one call and committing storage in one transaction,
// which with shared_storage also carries what the count connector staged; a
// request returns once that commit succeeded.
//
// The processor reads spans through the verdict model (package verdict) and
// names from instr/semconv, and nothing of the client library: it depends on
// the wire format. README.md says what it does, its configuration and its
// state; docs/performance.md what it costs.
package verdictprocessor
