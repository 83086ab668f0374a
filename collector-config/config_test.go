package collectorconfig_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// fleetFile is not a whole configuration: it is layered on local.yaml.
const fleetFile = "fleet.yaml"

// agentFile is the one configuration here that this distribution cannot
// validate: it is for the upstream contrib distribution, whose load-balancing
// exporter cannot be built into percause (see agent.yaml's header).
const agentFile = "agent.yaml"

func TestEmbeddedIsLocalYAML(t *testing.T) {
	b, err := os.ReadFile("local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, collectorconfig.Local) {
		t.Fatal("Local differs from local.yaml")
	}
}

// TestValidate runs `percause collector validate --config FILE` on every
// configuration in this folder except agent.yaml, and on the embedded
// default (no --config).
func TestValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	bin := testenv.PercauseBin(t)
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	token := "PERCAUSE_OTLP_TOKEN=test-token"
	// What docker-compose.yml sets beside the token: the stack's Prometheus
	// endpoint is reached by its own network only.
	composeAllows := "PERCAUSE_ALLOW_UNAUTHENTICATED=prometheus"
	// percause's validate reads the gateway's certificate and key: they
	// must exist and load as a pair.
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir, gatewayTLSName)
	tlsFiles := []string{"PERCAUSE_TLS_CERT_FILE=" + certFile, "PERCAUSE_TLS_KEY_FILE=" + keyFile}
	missingTLS := []string{token, "PERCAUSE_TLS_CERT_FILE=" + filepath.Join(dir, "none.crt"), "PERCAUSE_TLS_KEY_FILE=" + keyFile}
	type run struct {
		name string
		args []string
		env  []string
		fail string // a substring of the expected error; "" means it must pass
	}
	var runs []run
	for _, f := range files {
		switch f {
		case agentFile:
			continue
		case fleetFile: // an overlay: layered on the embedded default's file
			runs = append(runs, run{name: f, args: []string{"--config", "local.yaml", "--config", f}})
			continue
		}
		env := append([]string{token}, tlsFiles...)
		if f == "compose.yaml" {
			env = append(env, composeAllows)
		}
		runs = append(runs, run{name: f, args: []string{"--config", f}, env: env})
	}
	// The load tool's variants are overlays of the embedded default.
	variants, err := filepath.Glob(filepath.Join("variants", "*.yaml"))
	if err != nil || len(variants) == 0 {
		t.Fatalf("no variants (%v)", err)
	}
	for _, f := range variants {
		runs = append(runs, run{name: f, args: []string{"--config", "local.yaml", "--config", f}})
	}
	runs = append(runs,
		run{name: "embedded default", args: nil},
		run{name: "compose.yaml with remote write", args: []string{"--config", "compose.yaml"},
			env: []string{token, composeAllows, "PERCAUSE_METRICS_EXPORTERS=[prometheus, prometheusremotewrite]"}},
		// The checks are real: a compose collector without its token fails,
		// and so does one whose Prometheus endpoint is not allowed.
		run{name: "compose.yaml without a token", args: []string{"--config", "compose.yaml"}, env: []string{composeAllows}, fail: "no bearer token"},
		run{name: "compose.yaml without allowing its Prometheus endpoint", args: []string{"--config", "compose.yaml"}, env: []string{token},
			fail: `exporters::prometheus listens on "0.0.0.0:9464", beyond loopback, without an authenticator`},
		run{name: "gateway.yaml without a token", args: []string{"--config", "gateway.yaml"}, env: tlsFiles, fail: "no bearer token"},
		run{name: "gateway.yaml without TLS", args: []string{"--config", "gateway.yaml"}, env: []string{token}, fail: "certificate and key"},
		run{name: "gateway.yaml with a certificate that does not exist", args: []string{"--config", "gateway.yaml"}, env: missingTLS,
			fail: "cert_file: open " + filepath.Join(dir, "none.crt")},
		// file_storage's fsync is a setting: on is a valid configuration,
		// and a value that is not a boolean is refused, not ignored.
		run{name: "local.yaml with fsync on", args: []string{"--config", "local.yaml"}, env: []string{"PERCAUSE_FSYNC=true"}},
		run{name: "local.yaml with a bad fsync", args: []string{"--config", "local.yaml"},
			env: []string{"PERCAUSE_FSYNC=sometimes"}, fail: "'fsync' expected type 'bool'"},
		run{name: "local.yaml with a bad verdict wait", args: []string{"--config", "local.yaml"},
			env: []string{"PERCAUSE_VERDICT_WAIT=0s"}, fail: "wait must be positive"},
		run{name: "local.yaml with a decision window past the wait", args: []string{"--config", "local.yaml"},
			env: []string{"PERCAUSE_VERDICT_WAIT=500ms"}, fail: "decision_wait must be positive and at most wait"},
	)
	if len(runs) < 6 {
		t.Fatalf("found only %v", files)
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"collector", "validate"}, r.args...)...)
			cmd.Env = append(os.Environ(), r.env...)
			out, err := cmd.CombinedOutput()
			switch {
			case r.fail == "" && err != nil:
				t.Fatalf("validate: %v\n%s", err, out)
			case r.fail != "" && err == nil:
				t.Fatalf("validate passed, want an error with %q", r.fail)
			case r.fail != "" && !strings.Contains(string(out), r.fail):
				t.Fatalf("validate failed with\n%s\nwant %q", out, r.fail)
			}
		})
	}
}

// envDefault replaces ${env:NAME:-default} by its default, and ${env:NAME}
// by an empty string, as the collector does with an empty environment.
var envRE = regexp.MustCompile(`\$\{env:[A-Z_]+(?::-([^}]*))?\}`)

func load(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b = envRE.ReplaceAllFunc(b, func(m []byte) []byte { return envRE.ReplaceAll(m, []byte("$1")) })
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cfg
}

func get(t *testing.T, m any, path ...string) any {
	t.Helper()
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			t.Fatalf("%v: %s is not a map", path, p)
		}
		m = mm[p]
	}
	return m
}

// TestLocalListensOnLoopback: every listener of the embedded default is on
// 127.0.0.1 unless the environment says otherwise.
func TestLocalListensOnLoopback(t *testing.T) {
	cfg := load(t, "local.yaml")
	endpoints := map[string]any{
		"otlp http":    get(t, cfg, "receivers", "otlp", "protocols", "http", "endpoint"),
		"prometheus":   get(t, cfg, "exporters", "prometheus", "endpoint"),
		"health_check": get(t, cfg, "extensions", "health_check", "endpoint"),
		"verdict page": get(t, cfg, "exporters", "verdicts", "http", "endpoint"),
	}
	for name, ep := range endpoints {
		if s, _ := ep.(string); !strings.HasPrefix(s, "127.0.0.1:") {
			t.Errorf("%s listens on %v, want 127.0.0.1", name, ep)
		}
	}
	if g := get(t, cfg, "receivers", "otlp", "protocols", "grpc"); g != nil {
		t.Errorf("local.yaml opens OTLP/gRPC too: %v", g)
	}
	readers := get(t, cfg, "service", "telemetry", "metrics", "readers").([]any)
	for _, r := range readers {
		if h := get(t, r, "pull", "exporter", "prometheus", "host"); h != "127.0.0.1" {
			t.Errorf("collector telemetry on %v, want 127.0.0.1", h)
		}
	}
}

// TestCountMetricNames: every configuration counting verdicts counts them
// with the verdict count connector (which writes the two fixed Prometheus
// names the dashboards and alerts depend on, by cause and link, and by
// installation where the processor names one), in a metrics pipeline of its
// own; the fleet setting and the gateway name no installation.
func TestCountMetricNames(t *testing.T) {
	byInstallation := map[string]bool{"local.yaml": true, "compose.yaml": true, "lines.yaml": true, "gateway.yaml": false}
	for f, named := range byInstallation {
		cfg := load(t, f)
		if _, ok := get(t, cfg, "connectors").(map[string]any)["verdictcount"]; !ok {
			t.Errorf("%s: no verdictcount connector", f)
		}
		if _, ok := get(t, cfg, "connectors").(map[string]any)["count"]; ok {
			t.Errorf("%s: the count connector counts a verdict again on every retry; use verdictcount", f)
		}
		counted := false
		for name, p := range get(t, cfg, "service", "pipelines").(map[string]any) {
			recvs, _ := get(t, p, "receivers").([]any)
			for _, r := range recvs {
				if r == "verdictcount" {
					counted = true
					if exps, _ := get(t, p, "exporters").([]any); len(exps) != 1 || exps[0] != "prometheus" {
						t.Errorf("%s: pipeline %s sends the verdict counters to %v, want [prometheus] (remote write drops deltas)", f, name, exps)
					}
				}
			}
		}
		if !counted {
			t.Errorf("%s: no pipeline receives the verdict counters", f)
		}
		limit, _ := get(t, cfg, "processors", "verdict", "counters", "installations").(int)
		if named != (limit > 0) {
			t.Errorf("%s: the processor names %d installations on the counted events; want named %v", f, limit, named)
		}
	}
	fleet := load(t, fleetFile)
	if n := get(t, fleet, "processors", "verdict", "counters", "installations"); n != 0 {
		t.Errorf("%s: counters.installations %v, want 0", fleetFile, n)
	}
}

// TestNothingRefusesAfterTheVerdictProcessor: in every configuration
// running the verdict processor, nothing after it is asynchronous (no batch
// processor, no queue) and nothing refuses what it has accepted, except in a
// way a retry cannot double: the traces pipeline it is in ends in the
// verdict count connector (which counts a verdict span once) and the
// verdicts exporter (which writes it once), and the counters' metrics
// pipeline has no memory_limiter and no batch (docs/decisions/0220). A
// processor that joins (emit: turns) ends in an OTLP/HTTP exporter with no
// queue and no retries of its own: its answer settles the joined turn, and
// a turn sent twice is decided once where it lands.
func TestNothingRefusesAfterTheVerdictProcessor(t *testing.T) {
	for _, f := range []string{"local.yaml", "compose.yaml", "gateway.yaml", "lines.yaml", "kafka-join.yaml", "kafka-decide.yaml"} {
		cfg := load(t, f)
		pipes := get(t, cfg, "service", "pipelines").(map[string]any)
		for name, p := range pipes {
			procs, _ := get(t, p, "processors").([]any)
			recvs, _ := get(t, p, "receivers").([]any)
			exps, _ := get(t, p, "exporters").([]any)
			at := -1
			for i, pr := range procs {
				if isVerdict(pr) {
					at = i
				}
			}
			if at >= 0 {
				if at != len(procs)-1 {
					t.Errorf("%s: pipeline %s runs %v after the verdict processor", f, name, procs[at+1:])
				}
				joins := lookup(cfg, "processors", toString(procs[at]), "emit") == "turns"
				for _, e := range exps {
					switch {
					case joins:
						checkSynchronousExporter(t, f, name, cfg, toString(e))
					case e != "verdictcount" && e != "verdicts":
						t.Errorf("%s: pipeline %s: %v after the verdict processor; only verdictcount and verdicts are known to neither queue nor double on a retry", f, name, e)
					}
				}
			}
			for _, r := range recvs {
				if r != "verdictcount" {
					continue
				}
				for _, pr := range procs {
					if s := toString(pr); strings.HasPrefix(s, "memory_limiter") || strings.HasPrefix(s, "batch") {
						t.Errorf("%s: pipeline %s: %s after the count connector", f, name, s)
					}
				}
				if len(recvs) != 1 {
					t.Errorf("%s: pipeline %s mixes the count connector's metrics with %v", f, name, recvs)
				}
			}
		}
	}
}

// isVerdict reports whether a pipeline's processor is a verdict processor
// (verdict, verdict/NAME).
func isVerdict(p any) bool {
	s := toString(p)
	return s == "verdict" || strings.HasPrefix(s, "verdict/")
}

// checkSynchronousExporter fails unless the exporter after a joining
// verdict processor answers for the next hop itself: OTLP/HTTP, or Kafka
// acknowledged by every in-sync replica, with its sending queue and its
// retries off.
func checkSynchronousExporter(t *testing.T, f, pipe string, cfg map[string]any, e string) {
	t.Helper()
	switch {
	case strings.HasPrefix(e, "kafka"):
		if a := lookup(cfg, "exporters", e, "producer", "required_acks"); a != -1 {
			t.Errorf("%s: pipeline %s: %s has producer.required_acks %v, want -1 (every in-sync replica)", f, pipe, e, a)
		}
	case !strings.HasPrefix(e, "otlphttp"):
		t.Errorf("%s: pipeline %s joins turns into %s; want an otlphttp or a kafka exporter", f, pipe, e)
	}
	if q := lookup(cfg, "exporters", e, "sending_queue", "enabled"); q != false {
		t.Errorf("%s: pipeline %s: %s has sending_queue.enabled %v, want false (a queue would accept for the next hop)", f, pipe, e, q)
	}
	if r := lookup(cfg, "exporters", e, "retry_on_failure", "enabled"); r != false {
		t.Errorf("%s: pipeline %s: %s has retry_on_failure.enabled %v, want false (the processor sends a refused turn again)", f, pipe, e, r)
	}
}

// pipelineOf is the traces pipeline of cfg that receives from receiver
// (in a gateway, the one that runs a verdict processor), and its name;
// it fails unless exactly one does.
func pipelineOf(t *testing.T, file string, cfg map[string]any, receiver string) (string, map[string]any) {
	t.Helper()
	var name string
	var found map[string]any
	for n, p := range get(t, cfg, "service", "pipelines").(map[string]any) {
		recvs, _ := get(t, p, "receivers").([]any)
		procs, _ := get(t, p, "processors").([]any)
		if file == "gateway.yaml" && !slices.ContainsFunc(procs, isVerdict) {
			continue
		}
		for _, r := range recvs {
			if r == receiver && strings.HasPrefix(n, "traces") {
				if found != nil {
					t.Fatalf("%s: traces pipelines %s and %s both receive from %s", file, name, n, receiver)
				}
				name, found = n, p.(map[string]any)
			}
		}
	}
	if found == nil {
		t.Fatalf("%s: no traces pipeline receives from %s", file, receiver)
	}
	return name, found
}

// only is the one element of a pipeline's list under key.
func only(t *testing.T, file, pipe string, p map[string]any, key string) string {
	t.Helper()
	l, _ := p[key].([]any)
	if len(l) != 1 {
		t.Fatalf("%s: pipeline %s has %s %v, want one", file, pipe, key, l)
	}
	return toString(l[0])
}

// verdictOf is the verdict processor a gateway pipeline runs, and its emit.
func verdictOf(t *testing.T, gateway map[string]any, pipe string, p map[string]any) string {
	t.Helper()
	procs, _ := p["processors"].([]any)
	for _, pr := range procs {
		if isVerdict(pr) {
			emit, _ := lookup(gateway, "processors", toString(pr), "emit").(string)
			return emit
		}
	}
	t.Fatalf("gateway.yaml: pipeline %s runs no verdict processor: %v", pipe, procs)
	return ""
}

func portOf(endpoint string) string { return endpoint[strings.LastIndex(endpoint, ":")+1:] }

// TestAgentRoutesByTraceThenByLaunch: the scale-out's two routes
// (docs/decisions/0242). The agent sends every span of a trace to one
// gateway, on the port of the gateway's pipeline that joins (verdict
// processor, emit: turns); the gateway sends its joined turns to the
// agent's joined port; the agent routes those by the launch the phone's
// resource names to the port of the gateway's pipeline that decides
// (emit: verdicts, the launches kept). Both stages read with the same
// rules: they say which units and takes a joined turn carries.
func TestAgentRoutesByTraceThenByLaunch(t *testing.T) {
	agent, gateway := load(t, agentFile), load(t, "gateway.yaml")
	gatewayPort := func(receiver, proto string) string {
		ep, _ := get(t, gateway, "receivers", receiver, "protocols", proto, "endpoint").(string)
		return portOf(ep)
	}

	// Stage 1: phones and engines → agent → by trace ID → the join.
	name, traces := pipelineOf(t, agentFile, agent, "otlp")
	lb := only(t, agentFile, name, traces, "exporters")
	if k := get(t, agent, "exporters", lb, "routing_key"); k != "traceID" {
		t.Fatalf("agent pipeline %s routes by %v, want traceID", name, k)
	}
	port := toString(get(t, agent, "exporters", lb, "resolver", "dns", "port"))
	joinName, join := pipelineOf(t, "gateway.yaml", gateway, "otlp")
	if p := gatewayPort("otlp", "grpc"); p != port {
		t.Fatalf("agent sends every span to port %s, the gateway's join listens on %s", port, p)
	}
	if emit := verdictOf(t, gateway, joinName, join); emit != "turns" {
		t.Fatalf("gateway pipeline %s (from the agents' trace route) emits %q, want turns", joinName, emit)
	}

	// The joined turns → the agent's joined port.
	out := only(t, "gateway.yaml", joinName, join, "exporters")
	joinedEP, _ := get(t, gateway, "exporters", out, "endpoint").(string)
	agentJoined, _ := get(t, agent, "receivers", "otlp/joined", "protocols", "http", "endpoint").(string)
	if !strings.HasPrefix(joinedEP, "https://") || portOf(joinedEP) != portOf(agentJoined) {
		t.Fatalf("the gateway sends joined turns to %s, the agent receives them on %s (over TLS)", joinedEP, agentJoined)
	}

	// Stage 2: agent → by launch → the decide.
	name, joined := pipelineOf(t, agentFile, agent, "otlp/joined")
	lb = only(t, agentFile, name, joined, "exporters")
	if k := get(t, agent, "exporters", lb, "routing_key"); k != "attributes" {
		t.Fatalf("agent pipeline %s routes by %v, want attributes", name, k)
	}
	if attrs := get(t, agent, "exporters", lb, "routing_attributes"); !reflect.DeepEqual(attrs, []any{"service.instance.id"}) {
		t.Fatalf("agent pipeline %s routes by %v, want the launch [service.instance.id]", name, attrs)
	}
	port = toString(get(t, agent, "exporters", lb, "resolver", "dns", "port"))
	decideName, decide := pipelineOf(t, "gateway.yaml", gateway, "otlp/joined")
	if p := gatewayPort("otlp/joined", "grpc"); p != port {
		t.Fatalf("agent sends joined turns to port %s, the gateway's decide listens on %s", port, p)
	}
	if emit := verdictOf(t, gateway, decideName, decide); emit != "verdicts" {
		t.Fatalf("gateway pipeline %s (from the agents' launch route) emits %q, want verdicts", decideName, emit)
	}
	if m := lookup(gateway, "processors", "verdict", "launches", "max"); m != nil && m == 0 {
		t.Fatalf("the decide stage keeps no launches")
	}

	if a, b := lookup(gateway, "processors", "verdict/join", "rules"), lookup(gateway, "processors", "verdict", "rules"); !reflect.DeepEqual(a, b) {
		t.Fatalf("the join stage's rules %v differ from the decide stage's %v", a, b)
	}
	for _, k := range []string{"wait", "decision_wait", "max_age"} {
		if a, b := lookup(gateway, "processors", "verdict/join", k), lookup(gateway, "processors", "verdict", k); a != b {
			t.Errorf("%s: the join stage's %v, the decide stage's %v", k, a, b)
		}
	}
}

func toString(v any) string { return fmt.Sprint(v) }

// lookup is get for a path that may not be there (nil then).
func lookup(m any, path ...string) any {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

// TestExposedConfigsAuthenticate: every configuration that listens beyond
// loopback (compose, the scale-out pair) makes each OTLP protocol it opens
// ask for a bearer token; every token comes from the environment, never the
// file; and no token is sent over a connection marked insecure (gRPC would
// refuse to send it, and it must not cross the network in clear).
func TestExposedConfigsAuthenticate(t *testing.T) {
	tokenRE := regexp.MustCompile(`^\$\{env:[A-Z_]+\}$`)
	for _, f := range []string{"compose.yaml", "gateway.yaml", agentFile} {
		raw := map[string]any{}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		exts, _ := get(t, raw, "extensions").(map[string]any)
		for name, ext := range exts {
			if !strings.HasPrefix(name, "bearertokenauth") {
				continue
			}
			if tok, _ := get(t, ext, "token").(string); !tokenRE.MatchString(tok) {
				t.Errorf("%s: %s token is %q, want ${env:NAME} (no secret in the file)", f, name, tok)
			}
		}
		opened := 0
		for recv, r := range get(t, raw, "receivers").(map[string]any) {
			if recv != "otlp" && !strings.HasPrefix(recv, "otlp/") {
				continue
			}
			protocols, _ := get(t, r, "protocols").(map[string]any)
			opened += len(protocols)
			for proto, p := range protocols {
				auth, _ := get(t, p, "auth", "authenticator").(string)
				if !strings.HasPrefix(auth, "bearertokenauth") {
					t.Errorf("%s: %s: OTLP/%s in has authenticator %q, want a bearer token", f, recv, proto, auth)
				}
				if _, ok := exts[auth]; !ok {
					t.Errorf("%s: %s: OTLP/%s in names authenticator %q, which is not configured", f, recv, proto, auth)
				}
				if proto == "grpc" && get(t, p, "tls") == nil {
					t.Errorf("%s: %s: OTLP/gRPC in without TLS: a gRPC client sends its token over TLS only", f, recv)
				}
			}
		}
		if opened == 0 {
			t.Fatalf("%s opens no OTLP protocol", f)
		}
		exps, _ := get(t, raw, "exporters").(map[string]any)
		// The verdict page, where a configuration serves it beyond
		// loopback, asks for a token too.
		if page, ok := lookup(exps, "verdicts", "http").(map[string]any); ok {
			ep, _ := page["endpoint"].(string)
			auth, _ := lookup(page, "auth", "authenticator").(string)
			if !strings.HasPrefix(ep, "127.0.0.1:") && !strings.HasPrefix(auth, "bearertokenauth") {
				t.Errorf("%s: the verdict page listens on %s with authenticator %q, want a bearer token", f, ep, auth)
			}
			if _, ok := exts[auth]; auth != "" && !ok {
				t.Errorf("%s: the verdict page names authenticator %q, which is not configured", f, auth)
			}
		}
		for name, e := range exps {
			em, _ := e.(map[string]any)
			client := em
			if proto, ok := em["protocol"].(map[string]any); ok { // load-balancing exporter
				client, _ = proto["otlp"].(map[string]any)
			}
			if client == nil || client["auth"] == nil {
				continue
			}
			if tlsCfg, _ := client["tls"].(map[string]any); tlsCfg != nil && tlsCfg["insecure"] == true {
				t.Errorf("%s: exporter %s sends a bearer token over a connection marked insecure", f, name)
			}
		}
	}
}

// TestLocalSharesOneStorage: the verdict processor keeps its state in
// shared_storage, on the same data folder as file_storage and with the
// same fsync setting, so one setting moves both; the forwarding queue
// stays in a file_storage database of its own.
func TestLocalSharesOneStorage(t *testing.T) {
	b, err := os.ReadFile("local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if s := get(t, raw, "processors", "verdict", "storage"); s != "shared_storage" {
		t.Errorf("the verdict processor's storage is %v, want shared_storage", s)
	}
	for _, key := range []string{"directory", "fsync", "create_directory"} {
		fs, shared := get(t, raw, "extensions", "file_storage", key), get(t, raw, "extensions", "shared_storage", key)
		if fs == nil || fmt.Sprint(fs) != fmt.Sprint(shared) {
			t.Errorf("%s: file_storage has %v, shared_storage %v; want the same", key, fs, shared)
		}
	}
	if d := get(t, raw, "extensions", "shared_storage", "stage_flush"); d == nil {
		t.Error("shared_storage names no stage_flush")
	}
	if q := get(t, raw, "exporters", "otlphttp/traces", "sending_queue", "storage"); q != "file_storage" {
		t.Errorf("the forwarding queue is in %v, want file_storage", q)
	}
	exts, _ := get(t, raw, "service", "extensions").([]any)
	for _, want := range []string{"file_storage", "shared_storage"} {
		found := false
		for _, e := range exts {
			found = found || e == want
		}
		if !found {
			t.Errorf("service.extensions %v lacks %s", exts, want)
		}
	}
}

// TestDefaultDataFolderIsIgnored: the embedded default writes its data
// (the verdict file, queues) under ./percause-data of wherever it runs,
// the repository's root included, and git must not offer it for commit.
func TestDefaultDataFolderIsIgnored(t *testing.T) {
	cfg := load(t, "local.yaml")
	dir, _ := get(t, cfg, "extensions", "file_storage", "directory").(string)
	verdicts, _ := get(t, cfg, "exporters", "verdicts", "path").(string)
	if dir == "" || !strings.HasPrefix(verdicts, dir+"/") {
		t.Fatalf("data folder %q, verdict file %q: want the file inside the folder", dir, verdicts)
	}
	name := strings.TrimPrefix(dir, "./")
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	ignored := false
	for _, line := range strings.Split(string(b), "\n") {
		switch strings.TrimSpace(line) {
		case name, name + "/", "/" + name, "/" + name + "/":
			ignored = true
		}
	}
	if !ignored {
		t.Errorf(".gitignore does not list %s/, the embedded default's data folder", name)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	if _, err := os.Stat(filepath.Join(testenv.RepoRoot(), ".git")); err != nil {
		return
	}
	cmd := exec.Command("git", "check-ignore", name+"/verdicts.jsonl", "lab/"+name+"/verdicts.jsonl")
	cmd.Dir = testenv.RepoRoot()
	if err := cmd.Run(); err != nil {
		t.Errorf("git check-ignore %s/verdicts.jsonl: %v (want it ignored)", name, err)
	}
}

// TestKafkaTiersAnswerForTheNextHop: in the fleet on Kafka, every Kafka
// exporter answers once every in-sync replica holds what it wrote, with no
// queue and no retries of its own (its answer is the request's, or the
// processor's, which sends again); every Kafka receiver marks a record
// only once its pipeline accepted it, and commits each polled batch's
// marks at once; the edge keys spans by trace ID and the join keys turns
// by the launch its processor names; the join and the decide keep a
// changelog, each its own.
func TestKafkaTiersAnswerForTheNextHop(t *testing.T) {
	changelogs := map[string]bool{}
	for _, f := range []string{"kafka-edge.yaml", "kafka-join.yaml", "kafka-decide.yaml"} {
		cfg := load(t, f)
		for name := range get(t, cfg, "exporters").(map[string]any) {
			if !strings.HasPrefix(name, "kafka") {
				continue
			}
			checkSynchronousExporter(t, f, "traces", cfg, name)
			if f == "kafka-edge.yaml" && lookup(cfg, "exporters", name, "partition_traces_by_id") != true {
				t.Errorf("%s: %s does not key spans by trace ID", f, name)
			}
		}
		for name := range get(t, cfg, "receivers").(map[string]any) {
			if !strings.HasPrefix(name, "kafka") {
				continue
			}
			for _, want := range []struct {
				path []string
				v    any
			}{
				{[]string{"message_marking", "after"}, true},
				{[]string{"message_marking", "on_error"}, false},
				{[]string{"autocommit", "enable"}, false},
				{[]string{"error_backoff", "enabled"}, true},
			} {
				if v := lookup(cfg, append([]string{"receivers", name}, want.path...)...); v != want.v {
					t.Errorf("%s: %s has %s %v, want %v", f, name, strings.Join(want.path, "."), v, want.v)
				}
			}
		}
		for name := range get(t, cfg, "processors").(map[string]any) {
			if !isVerdict(name) {
				continue
			}
			topic := lookup(cfg, "processors", name, "changelog", "topic")
			if topic == nil {
				t.Errorf("%s: %s keeps no changelog", f, name)
			} else if changelogs[toString(topic)] {
				t.Errorf("%s: %s shares its changelog %v with another tier", f, name, topic)
			}
			changelogs[toString(topic)] = true
			if key := lookup(cfg, "processors", name, "launch_metadata_key"); key != nil &&
				key != lookup(cfg, "exporters", "kafka/turns", "traces", "message_key_from_metadata_key") {
				t.Errorf("%s: %s names the launch under %v, which the turns exporter does not key by", f, name, key)
			}
		}
	}
	if len(changelogs) != 2 {
		t.Errorf("changelogs %v, want the join's and the decide's", changelogs)
	}
}
