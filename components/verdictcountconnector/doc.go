// Package verdictcountconnector is a collector traces → metrics connector
// (type "verdictcount") that turns the verdict processor's verdict spans into
// the two verdict counters, percause_turns_total and
// percause_cause_implicated_total, counting each verdict span once: a
// verdict sent again (after a refusal further on, or a retry) is not
// counted again. It reads the same events, and writes the same delta sums,
// as the contrib count connector configured for them.
//
// It remembers the span IDs it counted in a bounded ring and, with storage,
// stores them before any count is handed on: on shared_storage the IDs are
// staged (storage.go) and ride the verdict processor's commit, so a request
// costs one commit for both; on another storage extension the connector
// commits each delivery itself. Stored counts wait up to flush_interval to
// go on together, one delivery at a time (handon.go). README.md says what
// it holds and what a crash can do to the counters.
package verdictcountconnector
