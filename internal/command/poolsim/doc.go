// Package poolsim is the deterministic queueing model of docs/queueing.md: a
// reply's calls and a progress check sharing one pool of six connections, or
// split into a control and a bulk pool, against a healthy engine or one that
// is gone. It reproduces the reference rows byte for byte and lets a reader
// change the case (take lengths, pools, engine, the end of her words) to see
// when the check misses and when "Reconnecting" would show.
//
// The model is exact arithmetic on time.Duration (no floating point), so its
// output never depends on rounding. The Reconnecting rule it applies is the
// SDK's own (instr/linkstatus), so the model and the phone cannot disagree.
package poolsim
