// Package spool is a crash-safe, bounded disk spool for telemetry batches.
//
// Every batch is on disk before anything tries to send it, and it is removed
// only once the sender reports that the collector accepted it:
//
//   - Put writes the batch to a temporary file, fsyncs it, renames it into
//     place and fsyncs the folder. A crash mid-write leaves only a temporary
//     file, which the next Open removes (counted as torn); a complete file is
//     never half-visible.
//   - Each file carries a header with a magic number, the payload length and a
//     CRC-32C of the payload. A file that fails that check at send time is
//     skipped and removed with a logged reason, and counted as torn.
//   - Files are named by a sequence number, so the oldest is sent first and,
//     after a relaunch, what was left is resent in order.
//   - The size bound drops the oldest batches first and counts them.
//   - A latest-only kind (WithLatestOnly; the SDK uses it for cumulative
//     metrics) keeps only this launch's newest unsent batch of that kind.
//   - Sending runs on a goroutine of its own: Put never waits for the network.
//     While the app says its voice lane is busy (WithBusy), sending waits,
//     unless the spool is near full.
//
// Delivery is at least once: a crash after the collector answered but before
// the file was removed resends that batch on relaunch.
package spool
