// Package linkstatus decides what the phone's status line may say about the
// link to the engine, and records every change of it.
//
// Two decisions live here, each a small pure function fed by a little state:
//
//   - The Reconnecting verdict (Reconnecting, fed by Tracker): "Reconnecting"
//     shows only when the progress check has failed 2 times in a row, has been
//     failing for at least 6 s, and nothing has been heard from the engine for
//     15 s. Streamed words and other answers count as hearing from it. One
//     missed check is never a verdict.
//
//   - The lost-link status (Diagnose, fed by Probes): "Connection lost.
//     Checking why…" first, then exactly one of: the engine is restarting (its
//     front answers 502, 503 or 504), this device is offline, the engine
//     cannot be reached from this device (the only message with the tailnet
//     advice), the engine is answering on another lane while this lane is
//     saturated — the client's own congestion, which must never read as the
//     engine's absence — or a fresh connection answers while this lane's
//     kept-alive one hangs: a stale connection, said while the pool heals.
//
//   - The waits (Monitor.Show, Monitor.Clear), each naming what it waits on:
//     "Opening the microphone…" with its stage (the audio session, the
//     engine's listening grant and its seconds, the listening socket); a
//     turn's post not sent yet, for how long and beside how many other calls
//     ("not sent for 20s (4 other calls open)"); "Getting her voice ready…"
//     when the first take's audio is late, with what a probe of the bulk
//     lane itself found.
//
// The messages are registered once as Warnables: a code, a title, a text
// built from named arguments,
// DependsOn (a warning is hidden while one it depends on is shown: an
// offline device hides "cannot be reached", a saturated lane hides
// "Reconnecting") and TimeToVisible (shown only once it has persisted).
//
// Monitor ties them together for an app: it keeps the warnings' state,
// and records each change of the visible status as a span with the readings
// that chose it (the probes', or the wait's own) and what the line last
// said, plus the counter pippa.link.status_changes by pippa.link.status.
// Thresholds are person-time; WithTimeScale lets a lab run them faster than
// life.
package linkstatus
