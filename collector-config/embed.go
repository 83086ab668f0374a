// Package collectorconfig holds the collector configurations of percause and
// exposes the embedded default, local.yaml, to Go (the folder's name has a
// dash, so it is imported as github.com/percause/percause/collector-config).
//
// local.yaml is what `percause collector` runs without --config and what the
// demo and the lab start. compose.yaml is the compose stack's, gateway.yaml
// this distribution's side of a scale-out, agent.yaml the upstream contrib
// distribution's (it needs the load-balancing exporter, which this
// distribution cannot carry).
package collectorconfig

import _ "embed"

// Lines is lines.yaml: the embedded default's pipeline with the apps' own
// [voice-turn] and [tts-take] lines as a way in (tailed files, OTLP logs).
//
//go:embed lines.yaml
var Lines []byte

// Local is local.yaml: the embedded default configuration.
//
//go:embed local.yaml
var Local []byte

// Environment variables local.yaml reads, each with a loopback or relative
// default, so the demo, the lab and the tests can run a collector on free
// ports and a folder of their own. Their defaults and meanings are in the
// one table of internal/leaf/envvars, which `percause collector --help`
// and docs/environment.md are written from.
const (
	EnvOTLPEndpoint   = "PERCAUSE_OTLP_ENDPOINT"   // OTLP/HTTP in, host:port (127.0.0.1:4318)
	EnvPromEndpoint   = "PERCAUSE_PROM_ENDPOINT"   // Prometheus metrics out, host:port (127.0.0.1:9464)
	EnvPageEndpoint   = "PERCAUSE_PAGE_ENDPOINT"   // the verdict page, host:port (127.0.0.1:9465)
	EnvHealthEndpoint = "PERCAUSE_HEALTH_ENDPOINT" // health_check, host:port (127.0.0.1:13133)
	EnvTelemetryPort  = "PERCAUSE_TELEMETRY_PORT"  // the collector's own metrics on 127.0.0.1 (8888)
	EnvDataDir        = "PERCAUSE_DATA_DIR"        // data folder (./percause-data)
	EnvVerdictFile    = "PERCAUSE_VERDICT_FILE"    // the verdicts, OTLP JSON lines (./percause-data/verdicts.jsonl)
	EnvVerdictWait    = "PERCAUSE_VERDICT_WAIT"    // how long a turn waits for its takes (5s)
	EnvDecisionWait   = "PERCAUSE_DECISION_WAIT"   // quiet time before a turn without its unit count is decided (1s; at most the wait)
	// EnvFsync makes the storage fsync each transaction and the verdict
	// file each line (false): what a request stored then survives the
	// machine losing power, not only the collector being killed.
	EnvFsync = "PERCAUSE_FSYNC"
	// EnvForwardExporters lists the exporters every trace is forwarded to
	// ([nop]); [otlphttp/traces] forwards through a queue kept on disk.
	EnvForwardExporters = "PERCAUSE_FORWARD_EXPORTERS"
	EnvTracesForward    = "PERCAUSE_TRACES_FORWARD" // where otlphttp/traces sends (http://127.0.0.1:4320/v1/traces)
	// EnvLinesInclude lists the files lines.yaml tails, a YAML list of globs ([./logs/*.log]).
	EnvLinesInclude = "PERCAUSE_LINES_INCLUDE"
	EnvLinesWait    = "PERCAUSE_LINES_WAIT" // how long a line waits for the lines it joins (10s)
)

// Environment variables the fleet on Kafka reads (kafka-edge.yaml,
// kafka-join.yaml, kafka-decide.yaml), beside local.yaml's listeners and
// folders.
const (
	EnvKafkaBrokers     = "PERCAUSE_KAFKA_BROKERS"      // the brokers, a YAML list ([127.0.0.1:9092])
	EnvKafkaSpansTopic  = "PERCAUSE_KAFKA_SPANS_TOPIC"  // every span, keyed by trace ID (percause-spans)
	EnvKafkaTurnsTopic  = "PERCAUSE_KAFKA_TURNS_TOPIC"  // every joined turn, keyed by launch (percause-turns)
	EnvKafkaJoinGroup   = "PERCAUSE_KAFKA_JOIN_GROUP"   // the join gateways' consumer group (percause-join)
	EnvKafkaDecideGroup = "PERCAUSE_KAFKA_DECIDE_GROUP" // the decide gateways' consumer group (percause-decide)
	// EnvKafkaJoinChangelog and EnvKafkaDecideChangelog are the topics
	// where each partition's owner keeps what it holds for the next.
	EnvKafkaJoinChangelog   = "PERCAUSE_KAFKA_JOIN_CHANGELOG"   // percause-join-changelog
	EnvKafkaDecideChangelog = "PERCAUSE_KAFKA_DECIDE_CHANGELOG" // percause-decide-changelog
)
