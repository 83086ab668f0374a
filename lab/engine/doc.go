// Package engine is the lab's engine: a real HTTP server with the calls of a
// voice turn (docs/domain.md), behind a front that answers 503 while the engine
// restarts, as the home machine's reverse proxy does.
//
//	POST /api/listen             the listening grant
//	POST /api/turn               the turn's post (what was said); answers the turn's id
//	GET  /api/turn/{id}/lines    the turn's line stream: the reply's words, one unit a line
//	POST /api/tts/prepare        a take ticket; the take starts being made at once
//	POST /api/tts/ensure         the take made whole before the answer
//	GET  /api/tts/take/{id}      the take's audio bytes, streamed as they are made
//	GET  /api/progress           the progress check
//	POST /api/upload             the microphone-rate copy of the recording
//
// Takes are made over real time: a first-byte delay, then audio at a
// configurable rate against real time (audio seconds per second of making),
// in small chunks. Each chunk is a progress mark of the take's tts.take span,
// so the take's need (the cushion it alone needed) comes from this real
// production timeline, never from a number the lab writes down. The engine
// continues the phone's trace from the traceparent of each call.
//
// Times in Config are person-seconds; the engine divides them by its time
// scale to sleep in wall time, so a lab run at scale 20 is twenty times
// quicker and reports the same person-second readings.
package engine
