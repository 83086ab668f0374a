// Package simulation proves the default's promise — a request answered
// 200 is kept, and every turn accepted gets one verdict and one count —
// by a seeded fault simulation of its whole stateful path in one process:
// the lines connector, the verdict processor, shared_storage on its log
// engine, the verdict count connector and the verdicts exporter, on a
// file system in memory (FS) that fails, cuts short, kills and powers off
// at any call. Time,
// the order of the senders' requests and every fault come from one seed,
// so a failing schedule replays from its seed alone; after each one the
// invariants are checked (check.go). docs/simulation.md says what it
// covers, its budget and what it found.
package simulation
