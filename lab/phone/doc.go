// Package phone is the lab's phone: a real client of the lab engine, built on
// the SDK (instr) and the client's lanes (instr/lanes), that runs voice turns
// the way docs/domain.md describes them.
//
// One turn starts from speech: the microphone opens (the audio session, the
// engine's listening grant, the listening socket), she speaks, and after the
// end-of-speech window her recording (her speech at 16 kHz, 16-bit mono: 32
// KB a second) is posted over the lab's link, posted again once if it fails.
// The end of speech to the post leaving the phone is measured to the
// engine's answer, the first moment the phone knows the last byte got
// through. Then the turn's line
// stream brings the reply's words one unit a line, and every unit's take is
// prepared and streamed at once on the bulk lane beside the upload of the
// microphone-rate copy. Each take's bytes are timed as they come off the
// socket and replayed through the player model (package player), in order,
// each unit no earlier than the end of the one before: the underruns, silent
// seconds and longest silence are what that model heard. The progress check
// asks the engine every 3 s while the turn lasts. At the end the turn report
// carries the units, the listen-open stages, the route, the live-object counts
// and the lanes' pool-reset tally, and is exported through the SDK.
//
// Its status line (instr/linkstatus) says what the phone waits on: the
// microphone's stage once it takes over 1.5 s, the post while it is not
// sent ("not sent for 4s (6 other calls open)"), her voice while the first
// take's audio is late (with what a probe of the bulk lane itself found),
// and, when a check fails, why the link is lost. Each change is recorded in
// the turn's trace.
//
// The phone's own faults are switches of a turn (Plan): a leaked object, a
// scripted Bluetooth route change with the listener's stutter mark, a slow
// audio session, media downloads of its own while she speaks, the link it
// reports (Wi-Fi, LTE). The
// device's path (online or not) is set by the lab, as the OS would tell the
// app.
package phone
