// Package distro is percause's collector distribution: the component
// factories (components.go, laid out like the Collector Builder's output) and
// the collector settings that `percause collector` hands to otelcol.
//
// It carries percause's own components (the verdict processor, the lines
// and verdict count connectors, the verdicts exporter and the
// shared_storage extension) beside the collector's and contrib's: the OTLP
// and filelog receivers; the batch, memory_limiter and resource
// processors; the count and forward connectors; the Prometheus, Prometheus
// remote write, OTLP/HTTP, debug, nop and file exporters; and the
// file_storage, bearertokenauth, health_check and pprof extensions. The load-balancing exporter is
// not among them (it cannot be built here); agents of a scale-out run the
// upstream contrib distribution, see collector-config/agent.yaml.
//
// Two things are the distribution's own: a confmap converter that refuses
// a listener carrying turns or verdicts beyond loopback without an
// authenticator (exposed.go), and file_storage and shared_storage wrapped
// to hold their folder locked, naming the holder (datalock.go).
package distro
