// Package lanes is the client's networking for a voice assistant's phone:
// traffic by kind, a connection pool that heals without feeding itself, and
// the readings a status line and a turn report need to tell the truth.
//
// Why: one pool of six connections carried audio and control alike; when a
// reply's tool ended, four take prepares, four take streams and a 2 MB upload
// left in the same second beside the turn's stream, the progress check queued
// behind the audio, timed out, and the status line said "Reconnecting"
// against a healthy engine (docs/domain.md, docs/queueing.md).
//
// What it does:
//
//   - Every call has a Kind. The kind picks its lane and its timeouts: the
//     control lane (checks 5 s, reads, the grant and take tickets 20–30 s,
//     ensure 60 s), the bulk lane (take byte streams, uploads, downloads,
//     the quiet probe), and the turn's line stream on a connection of its own
//     every turn (one handshake, the price of never waiting on a dead
//     kept-alive connection). Each lane opens at most six connections per
//     host. Each call is a client span with pippa.lane and pippa.call.kind.
//
//   - Each pooled lane heals: 2 failures in a row (buffered replies timing
//     out; byte and line streams stalling or losing their connection) send
//     later calls to a fresh session while calls in flight finish on the old
//     one. The heal is logged, counted in pippa.pool.resets{pippa.lane} (a
//     cumulative counter from the launch; Client.Resets is the tally a turn
//     report carries) and happens at most once per 20 s. Replies reach their
//     callers through the call itself, never through a per-session number,
//     and failures of calls on an already-healed session never count toward
//     the next heal: a heal that can produce the symptom it counts is a loop.
//
//   - Replies in flight per lane (pippa.pool.replies_in_flight{pippa.lane})
//     and the calls not sent yet, so a wait can say "not sent for 20s (4
//     other calls open)" (Client.Waiting, Client.TakeNotSent). A call is sent
//     once the engine has heard it: a call without a body when it has a
//     connection, one with a body when the engine answers the "Expect:
//     100-continue" its request carries, so a post written into a stale
//     kept-alive connection stays not sent.
//
//   - Responsiveness under working conditions: the control lane's round trip
//     on its loaded connections and on a fresh connection, for
//     Turn.SetRPM(loaded, fresh).
//
//   - The readings the status line needs (package instr/linkstatus):
//     LastHeard (any byte from the engine on any lane, streamed words
//     included) for the Reconnecting verdict, and LinkProbes (the failing
//     lane's fill, the engine heard anywhere, its front's answer on a fresh
//     connection, then the failing lane's own pool) for the lost-link
//     message, so a full lane reads as this device's congestion and a stale
//     connection as one, never as the engine's absence. Probe is the quiet
//     probe of the bulk lane itself, for "Getting her voice ready…".
//
// Times given to options are person-time; WithTimeScale runs them faster for
// a lab and reports readings back in person-time.
package lanes
