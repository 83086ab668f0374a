// Package lab runs the scenarios of package scenario through the real
// pipeline: a lab engine (package engine) and a lab phone (package phone),
// both built on the SDK and exporting through a disk spool over OTLP/HTTP, a
// fault proxy between them (package faults), and a running percause
// collector whose verdict processor decides every turn. The verdicts come
// back from the collector's verdict file (package verdicts), matched to the
// turns by trace ID; the lab never applies the rules itself.
//
// Alongside each verdict the lab reports the readings behind it, taken from
// the very spans the phone and the engine exported (a copy of every batch on
// its way to the spool): underruns and silence from the player model fed by
// real bytes over real sockets, need from the engine's real production
// timeline, the live counts, the pool-reset tally, leads, the route, the end
// of speech to the post and the status lines (the link's and the waits'). A
// reading the SDK refuses fails its turn.
//
// Time scales down: at scale 5 (the default) a person-second lasts 200 ms and
// every scenario runs at once, so the whole table takes about half a minute.
// Every reading is still recorded in person-seconds, and every threshold
// (the rules', the status lines', the lanes' timeouts, the link's shape)
// is person-time scaled the same way, so the collector's rules hold
// unchanged. A higher scale is quicker, and multiplies a busy machine's
// scheduling delays by as much: 100 ms lost to another process reads as half
// a second of a person's time at scale 5.
package lab
