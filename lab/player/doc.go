// Package player is the lab phone's model of a streaming audio player: the
// piece that turns the arrival times of a take's real bytes into what the
// listener heard.
//
// A take's bytes are buffered as they arrive. Playback starts when the cushion
// (seconds of audio buffered ahead of the play head) is full, and never before
// the unit's turn to play (the end of the previous unit). The play head then
// moves at one second of audio per second. When it catches up with the bytes
// received before the stream has ended, that is an underrun: the listener hears
// silence until the cushion is full again (or the stream ends), and the model
// counts the underrun, its silent seconds and the longest silence.
//
// The model is a pure function of the arrivals (time, byte count) and the time
// the stream ended, so the lab can record arrivals from a real socket and
// replay them here, and the tests can state exact expectations. Times are
// person-seconds on any common origin (the lab scales wall time up by its time
// scale before feeding the model).
package player
