// Package verdictcountconnector is a collector traces → metrics connector
// (type "verdictcount") that turns the verdict processor's verdict spans into
// the two verdict counters, percause_turns_total and
// percause_cause_implicated_total, counting each verdict span once: a
// verdict sent again (after a refusal further on, or a retry) is not
// counted again. It reads the same events, and writes the same delta sums,
// as the contrib count connector configured for them.
package verdictcountconnector
