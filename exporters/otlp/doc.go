// Package otlp sends OTLP/HTTP requests (protobuf bodies, gzip) to a
// collector on an http.Client of its own, and adapts the OpenTelemetry Go SDK's
// span and metric exporters to a Sink that receives ready-to-send payloads.
//
// The split exists for the disk spool: the SDK's batches are encoded once
// (protobuf, then gzip) and handed to a Sink, typically the spool, which keeps
// them on disk until Client.Send reports that the collector accepted them.
//
// Send follows the OTLP/HTTP specification for responses: 2xx is success;
// 429, 502, 503 and 504 are retryable (honouring Retry-After); any other
// status is permanent and the batch must not be retried. Network errors are
// retryable.
package otlp
