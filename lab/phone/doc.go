// Package phone is the lab's phone: a real client of the lab engine, built on
// the SDK (instr) and the client's lanes (instr/lanes), that runs voice turns
// the way docs/domain.md describes them.
//
// One turn: the microphone opens (the audio session, then the engine's
// listening grant), she speaks, the recording is posted, the turn's line
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
// The phone's own faults are switches of a turn (Plan): a leaked object, a
// scripted Bluetooth route change with the listener's stutter mark. The
// device's path (online or not) is set by the lab, as the OS would tell the
// app.
package phone
