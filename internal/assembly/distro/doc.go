// Package distro is percause's collector distribution: the component
// factories (components.go, laid out like the Collector Builder's output) and
// the collector settings that `percause collector` hands to otelcol.
//
// It carries the OTLP receiver, the verdict processor, batch and
// memory_limiter, the count connector, the Prometheus, Prometheus remote
// write, OTLP/HTTP, debug and file exporters, and the file_storage,
// bearertokenauth and health_check extensions. The load-balancing exporter is
// not among them (it cannot be built here); agents of a scale-out run the
// upstream contrib distribution, see collector-config/agent.yaml.
//
// Two things are the distribution's own: a confmap converter that refuses
// a listener carrying turns or verdicts beyond loopback without an
// authenticator (exposed.go), and file_storage wrapped to hold its folder
// locked, naming the holder (datalock.go).
package distro
