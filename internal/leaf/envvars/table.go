package envvars

// The shipped configurations that read PERCAUSE_* variables, by their paths
// from the repository's root.
const (
	local       = "collector-config/local.yaml"
	lines       = "collector-config/lines.yaml"
	compose     = "collector-config/compose.yaml"
	gateway     = "collector-config/gateway.yaml"
	agent       = "collector-config/agent.yaml"
	durablePeer = "internal/command/load/durablepeer.yaml"
	passthrough = "internal/command/load/passthrough.yaml"
	kafkaEdge   = "collector-config/kafka-edge.yaml"
	kafkaJoin   = "collector-config/kafka-join.yaml"
	kafkaDecide = "collector-config/kafka-decide.yaml"
)

// ShippedConfigs are the configurations that read PERCAUSE_* variables:
// the embedded default first, then what `percause collector --config` runs
// (agent.yaml is contrib's), then the load tool's stock peers.
var ShippedConfigs = []string{local, lines, compose, gateway, agent, kafkaEdge, kafkaJoin, kafkaDecide, durablePeer, passthrough}

// configNotes say who runs a shipped configuration that `percause collector`
// does not.
var configNotes = map[string]string{
	agent:       "contrib's distribution runs it",
	durablePeer: "percause load --compare runs it",
	passthrough: "percause load --compare runs it",
}

// The commands that start a collector on the embedded default pass it their
// environment; they set its addresses and folders themselves.
var (
	startsCollector = []string{"collector", "up", "demo", "lab", "load"}
	// readByCollector: what the collector reads and every command that
	// starts one leaves to the environment.
	readByCollector = startsCollector
)

// Commands are the percause commands that read variables of the table, in
// the order of their help's wording. A command not here reads none
// (check, poolsim).
var Commands = []Command{
	{Name: "collector", Reads: "what the embedded default (" + local + ") reads, and PERCAUSE_ALLOW_UNAUTHENTICATED with any configuration", Configs: true},
	{Name: "up", Reads: "what up reads; the collector it starts gets the same environment, with its data folder, verdict file and " +
		"PERCAUSE_ALERTMANAGER_URL set by up"},
	{Name: "turn", Reads: "where turn looks without --file or with --page"},
	{Name: "demo", Reads: "what the collector it starts reads (its addresses, data folder, verdict file and wait are the demo's own)"},
	{Name: "lab", Reads: "what the collector lab run starts reads (its addresses, data folder, verdict file and wait are the lab's own)"},
	{Name: "load", Reads: "what the collectors it starts read (their addresses, data folders and verdict files are its own; " +
		"--compare-fsync sets PERCAUSE_FSYNC, --compare the durable peer's PERCAUSE_TRACES_FORWARD)"},
	{Name: "lines", Reads: "what its collector in process reads at start"},
	{Name: "dashboards", Reads: "what the files it writes read, in Grafana, at run time"},
}

// Table is every PERCAUSE_* variable: the embedded default's first, then
// the other shipped configurations', then each command's own.
var Table = []Var{
	// The embedded default, collector-config/local.yaml.
	{Name: "PERCAUSE_OTLP_ENDPOINT", Default: "127.0.0.1:4318", Means: "OTLP/HTTP in, host:port: where the phone and the engine send",
		Commands: []string{"collector", "up"}, Configs: []string{local, lines, durablePeer, passthrough, kafkaEdge}},
	{Name: "PERCAUSE_PROM_ENDPOINT", Default: "127.0.0.1:9464 (gateway.yaml: 0.0.0.0:9464)", Means: "Prometheus metrics out, host:port: the verdict counters and the apps' metrics",
		Commands: []string{"collector", "up"}, Configs: []string{local, lines, gateway, kafkaEdge, kafkaDecide}},
	{Name: "PERCAUSE_PAGE_ENDPOINT", Default: "127.0.0.1:9465", Means: "the verdict page, host:port",
		Commands: []string{"collector", "up"}, Configs: []string{local, lines, kafkaDecide}},
	{Name: "PERCAUSE_HEALTH_ENDPOINT", Default: "127.0.0.1:13133 (gateway.yaml: 0.0.0.0:13133)", Means: "the health check, host:port",
		Commands: []string{"collector", "up"}, Configs: []string{local, lines, gateway, durablePeer, passthrough, kafkaEdge, kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_TELEMETRY_PORT", Default: "8888", Means: "the port of the collector's own metrics, on 127.0.0.1 (gateway.yaml: on PERCAUSE_TELEMETRY_HOST)",
		Commands: []string{"collector", "up"}, Configs: []string{local, lines, gateway, durablePeer, passthrough, kafkaEdge, kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_DATA_DIR", Default: "./percause-data (gateway.yaml, compose.yaml: /var/lib/percause)", Means: "the data folder: the processor's state, the queues, the verdict file",
		Commands: []string{"collector", "up", "turn"}, Configs: []string{local, lines, compose, gateway, durablePeer, kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_VERDICT_FILE", Default: "./percause-data/verdicts.jsonl", Means: "the verdict file, OTLP JSON lines (turn: else $PERCAUSE_DATA_DIR/verdicts.jsonl)",
		Commands: []string{"collector", "up", "turn"}, Configs: []string{local, lines, kafkaDecide}},
	{Name: "PERCAUSE_FSYNC", Default: "false", Means: "true: the storage fsyncs each write and the verdict file each line, so what was stored survives a power loss (a kill loses nothing either way)",
		Commands: readByCollector, Configs: []string{local, lines, compose, durablePeer, kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_VERDICT_WAIT", Default: "5s", Means: "how long a turn waits for its takes",
		Commands: []string{"collector", "up", "load"}, Configs: []string{local, lines, kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_DECISION_WAIT", Default: "1s", Means: "the quiet time before a turn that does not say its unit count is decided (at most the wait)",
		Commands: readByCollector, Configs: []string{local, lines, kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_FORWARD_EXPORTERS", Default: "[nop]", Means: "the exporters every trace is also sent to, a YAML list: [otlphttp/traces] forwards through a queue kept on disk",
		List: YAMLList, Words: []string{"nop", "otlphttp/traces"}, Commands: readByCollector, Configs: []string{local}},
	{Name: "PERCAUSE_TRACES_FORWARD", Default: "http://127.0.0.1:4320/v1/traces", Means: "where otlphttp/traces sends",
		Commands: readByCollector, Configs: []string{local, durablePeer}},
	{Name: "PERCAUSE_ALERTMANAGER_URL", Unset: "the page shows no alerts", Means: "the Alertmanager whose firing alerts the verdict page shows (up sets its own)",
		Commands: []string{"collector", "demo", "lab", "load"}, Configs: []string{local}},
	{Name: "PERCAUSE_ALLOW_UNAUTHENTICATED", Unset: "every listener beyond loopback needs an authenticator",
		Means: "comma-separated, the components whose listeners may listen beyond loopback without an authenticator, on a network you trust, " +
			"each logged with a warning at start (the verdict page cannot be allowed)",
		List: Commas, Words: []string{"otlp", "prometheus"}, Instances: true, Commands: append(append([]string(nil), startsCollector...), "lines")},

	// The lines configuration, collector-config/lines.yaml.
	{Name: "PERCAUSE_LINES_INCLUDE", Default: "[./logs/*.log]", Means: "the log files tailed, a YAML list of globs",
		List: YAMLList, Configs: []string{lines}},
	{Name: "PERCAUSE_LINES_WAIT", Default: "10s", Means: "how long a line waits for the lines it joins",
		Configs: []string{lines}},

	// The compose stack, a scale-out's gateways and agents.
	{Name: "PERCAUSE_OTLP_TOKEN", Unset: "the collector refuses to start", Means: "the bearer token OTLP senders present (the agents and gateways present it to each other too)",
		Configs: []string{compose, gateway, agent}},
	{Name: "PERCAUSE_METRICS_EXPORTERS", Default: "[prometheus]", Means: "the exporters of the phone's and engine's metrics, a YAML list: [prometheus, prometheusremotewrite] pushes as well",
		List: YAMLList, Words: []string{"prometheus", "prometheusremotewrite"}, Configs: []string{compose}},
	{Name: "PERCAUSE_OTLP_GRPC_ENDPOINT", Default: "0.0.0.0:4317", Means: "a gateway's OTLP/gRPC in (TLS only), host:port",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_TLS_CERT_FILE", Unset: "the collector refuses to start", Means: "a gateway's TLS certificate (PEM)",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_TLS_KEY_FILE", Unset: "the collector refuses to start", Means: "the key of PERCAUSE_TLS_CERT_FILE",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_JOINED_GRPC_ENDPOINT", Default: "0.0.0.0:4327", Means: "a gateway's OTLP/gRPC in for joined turns, host:port",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_JOINED_HTTP_ENDPOINT", Default: "0.0.0.0:4328", Means: "a gateway's OTLP/HTTP in for joined turns, host:port",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_JOINED_ENDPOINT", Default: "https://percause-agent:4319", Means: "where a gateway sends the joined turns: the agents' joined port, or one deciding gateway's",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_TLS_CA_FILE", Unset: "the system's roots", Means: "the CA that signed the certificate of the other side (the gateways', the joined endpoint's)",
		Configs: []string{gateway, agent}},
	{Name: "PERCAUSE_JOINED_TLS_NAME", Unset: "the joined endpoint's host", Means: "the name to check on the joined endpoint's certificate",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_TRACES_ENDPOINT", Default: "http://jaeger:4318", Means: "OTLP/HTTP base URL of the trace backend a gateway sends to",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_TELEMETRY_HOST", Default: "0.0.0.0", Means: "the host of a gateway's own metrics",
		Configs: []string{gateway}},
	{Name: "PERCAUSE_GATEWAYS_DNS", Default: "percause-gateway", Means: "a DNS name resolving to every gateway (the agent's load balancing)",
		Configs: []string{agent}},
	{Name: "PERCAUSE_GATEWAY_TLS_NAME", Default: "percause-gateway", Means: "the name on the gateways' certificates",
		Configs: []string{agent}},
	{Name: "PERCAUSE_AGENT_TLS_CERT_FILE", Unset: "the collector refuses to start", Means: "the agent's certificate for the joined turns' way in (PEM)",
		Configs: []string{agent}},
	{Name: "PERCAUSE_AGENT_TLS_KEY_FILE", Unset: "the collector refuses to start", Means: "the key of PERCAUSE_AGENT_TLS_CERT_FILE",
		Configs: []string{agent}},

	// The fleet on Kafka: kafka-edge.yaml, kafka-join.yaml, kafka-decide.yaml.
	{Name: "PERCAUSE_KAFKA_BROKERS", Default: "[127.0.0.1:9092]", Means: "the Kafka brokers, a YAML list of host:port (or one host:port)",
		Configs: []string{kafkaEdge, kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_KAFKA_SPANS_TOPIC", Default: "percause-spans", Means: "the topic every span goes to, keyed by trace ID",
		Configs: []string{kafkaEdge, kafkaJoin}},
	{Name: "PERCAUSE_KAFKA_TURNS_TOPIC", Default: "percause-turns", Means: "the topic every joined turn goes to, keyed by launch",
		Configs: []string{kafkaJoin, kafkaDecide}},
	{Name: "PERCAUSE_KAFKA_JOIN_GROUP", Default: "percause-join", Means: "the consumer group of the join gateways",
		Configs: []string{kafkaJoin}},
	{Name: "PERCAUSE_KAFKA_DECIDE_GROUP", Default: "percause-decide", Means: "the consumer group of the decide gateways",
		Configs: []string{kafkaDecide}},
	{Name: "PERCAUSE_KAFKA_JOIN_CHANGELOG", Default: "percause-join-changelog", Means: "the topic where each spans partition's join gateway keeps the traces it holds, for the next owner (compacted, as many partitions as the spans topic)",
		Configs: []string{kafkaJoin}},
	{Name: "PERCAUSE_KAFKA_DECIDE_CHANGELOG", Default: "percause-decide-changelog", Means: "the topic where each turns partition's decide gateway keeps its launches and the turns it holds, for the next owner (compacted, as many partitions as the turns topic)",
		Configs: []string{kafkaDecide}},

	// percause up (internal/command/up).
	{Name: "PERCAUSE_NOTIFY_URL", Unset: "alerts only in Alertmanager and on the page", Means: "where notifications go: an ntfy topic the phone subscribes to, or any webhook",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_NOTIFY_TOKEN", Unset: "none sent", Means: "a bearer token for PERCAUSE_NOTIFY_URL (an ntfy access token)",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_NOTIFY_FORMAT", Default: "ntfy", Means: "the notification's shape: ntfy (text and headers) or json (one JSON object)",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_PAGE_URL", Unset: "the page's loopback address", Means: "the verdict page as the phone opens it, for the notifications' links",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_PROMETHEUS_ENDPOINT", Default: "127.0.0.1:9466", Means: "where Prometheus listens, host:port on loopback",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_ALERTMANAGER_ENDPOINT", Default: "127.0.0.1:9467", Means: "where Alertmanager listens, host:port on loopback",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_SCRAPE_INTERVAL", Default: "5s", Means: "how often Prometheus scrapes the collector and evaluates the rules (whole seconds)",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_ALERT_WINDOW", Default: "10m", Means: "how long a movement keeps its alert firing",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_HEARTBEAT", Default: "10m", Means: "the phone is told within it if up or this machine goes silent (off: never; the json format beats only when it is set)",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_RESTART_LIMIT", Default: "5", Means: "restarts of one child allowed within 10m, then up stops and says so (0: none)",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_MUTE_URL", Unset: "no Mute button", Means: "the relay as the phone reaches it: firing notifications get a Mute button posting there",
		Commands: []string{"up"}},
	{Name: "PERCAUSE_RELAY_ENDPOINT", Unset: "a free port (127.0.0.1:9468 with PERCAUSE_MUTE_URL)", Means: "where the relay listens, host:port on loopback",
		Commands: []string{"up"}},

	// percause turn.
	{Name: "PERCAUSE_PAGE_TOKEN", Unset: "none sent", Means: "the bearer token sent to the page with --page",
		Commands: []string{"turn"}},

	// The generated dashboards (percause dashboards), read by Grafana.
	{Name: "PERCAUSE_ALERT_WEBHOOK_URL", Unset: "Grafana's contact point posts nowhere that answers", Means: "where Grafana's contact point posts alerts (an ntfy topic, say)",
		Commands: []string{"dashboards"}, Others: "Grafana, from the contact point dashboards/generated provisions"},

	// The tests.
	{Name: "PERCAUSE_BIN", Unset: "each test package builds the binary itself", Means: "the percause binary the tests run (make test builds it once)",
		Others: "the tests (internal/testsupport/testenv)"},
}
