package distro

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	prometheusexporter "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/confmap"
	otlpreceiver "go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.uber.org/zap"

	verdictexporter "github.com/percause/percause/components/verdictexporter"
	"github.com/percause/percause/internal/leaf/envvars"
	"github.com/percause/percause/internal/leaf/loopback"
)

// EnvAllowUnauthenticated lists, comma-separated, the components whose
// listeners may listen beyond loopback without an authenticator, on a
// network the user trusts ("otlp", "otlp,prometheus"). Each one so allowed
// is logged with a warning at start. The verdict page cannot be listed.
const EnvAllowUnauthenticated = "PERCAUSE_ALLOW_UNAUTHENTICATED"

// A listener that carries turns or verdicts: the OTLP receiver's protocols,
// the Prometheus exporter's endpoint (the verdict counters) and the
// verdicts exporter's page. The collector refuses to start with one beyond
// loopback and no authenticator (docs/decisions/0231-every-listener-beyond-loopback-authenticates.md).
type listener struct {
	component string // its configuration key: "receivers::otlp"
	id        component.ID
	setting   string // where its server settings are, within the component: "protocols::http"; "" at the top
	endpoint  string
	carries   string // what anyone reaching it gets: "send turns", …
	optOut    bool   // EnvAllowUnauthenticated may allow it
	auth      bool
	loopback  bool
}

func (l listener) key() string {
	if l.setting == "" {
		return l.component
	}
	return l.component + "::" + l.setting
}

// refusal says which listener is exposed, where, and what fixes it.
func (l listener) refusal() error {
	fix := fmt.Sprintf("set %s::auth::authenticator (bearertokenauth, its token from the environment", l.key())
	if l.id.Type() == prometheusexporter.NewFactory().Type() {
		fix += "; Prometheus presents it with its scrape config's authorization"
	}
	fix += "), or listen on 127.0.0.1"
	if l.optOut {
		fix += fmt.Sprintf(", or, on a network you trust, allow it with %s=%s", EnvAllowUnauthenticated, l.id)
	} else {
		fix += " (the verdict page has no opt-out)"
	}
	return fmt.Errorf("%s listens on %q, beyond loopback, without an authenticator: anyone who reaches it can %s; %s", l.key(), l.endpoint, l.carries, fix)
}

// newExposureCheckFactory makes the converter that refuses a configuration
// whose listeners are exposed without an authenticator. As a converter it
// runs wherever the configuration is resolved: at start and in validate.
func newExposureCheckFactory() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(set confmap.ConverterSettings) confmap.Converter {
		return &exposureCheck{logger: set.Logger, allow: os.Getenv(EnvAllowUnauthenticated)}
	})
}

type exposureCheck struct {
	logger *zap.Logger
	allow  string // EnvAllowUnauthenticated's value
}

// Convert changes nothing: it checks the resolved configuration.
func (c *exposureCheck) Convert(_ context.Context, conf *confmap.Conf) error {
	allowed, err := parseAllowed(c.allow)
	if err != nil {
		return err
	}
	var errs []error
	used := map[component.ID]bool{}
	for _, l := range listeners(conf) {
		if l.auth || l.loopback {
			continue
		}
		if l.optOut && allowed[l.id] {
			used[l.id] = true
			if c.logger != nil {
				c.logger.Warn("listening beyond loopback without an authenticator, as "+EnvAllowUnauthenticated+" allows: anyone who reaches it can "+l.carries,
					zap.String("listener", l.key()), zap.String("endpoint", l.endpoint))
			}
			continue
		}
		if !l.optOut && allowed[l.id] {
			used[l.id] = true
			errs = append(errs, fmt.Errorf("%s names %s, which it cannot allow: %w", EnvAllowUnauthenticated, l.id, l.refusal()))
			continue
		}
		errs = append(errs, l.refusal())
	}
	for id := range allowed {
		if !used[id] && c.logger != nil {
			c.logger.Warn(EnvAllowUnauthenticated+" names a component with no listener it allows (none beyond loopback without an authenticator)",
				zap.String("component", id.String()))
		}
	}
	return errors.Join(errs...)
}

// parseAllowed reads EnvAllowUnauthenticated's list of component IDs. A
// word that is neither an OTLP receiver's ID nor a Prometheus exporter's
// (a misspelt "otpl") is refused by name with the words it accepts, from
// envvars' table: ignored, it would leave the listener it meant refused,
// or allow nothing while the user believes otherwise. The verdict page's
// ID passes here, so that its refusal says why it cannot be allowed.
func parseAllowed(s string) (map[component.ID]bool, error) {
	page := verdictexporter.NewFactory().Type().String()
	var words []string
	for _, w := range envvars.Words(s) {
		if typ, _, _ := strings.Cut(w, "/"); typ != page {
			words = append(words, w)
		}
	}
	if err := envvars.CheckList(EnvAllowUnauthenticated, words); err != nil {
		return nil, err
	}
	allowed := map[component.ID]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		var id component.ID
		if err := id.UnmarshalText([]byte(name)); err != nil {
			return nil, fmt.Errorf("%s: %q is not a component ID: %w", EnvAllowUnauthenticated, name, err)
		}
		allowed[id] = true
	}
	return allowed, nil
}

// listeners are the listeners of the OTLP receivers, the Prometheus
// exporters and the verdicts exporters the service's pipelines use, with
// each component's defaults. A component whose settings do not decode is
// left to the collector, which reports it.
func listeners(conf *confmap.Conf) []listener {
	receivers, exporters := inPipelines(conf)
	var out []listener
	otlp, prom, page := otlpreceiver.NewFactory(), prometheusexporter.NewFactory(), verdictexporter.NewFactory()
	for _, id := range receivers {
		if id.Type() != otlp.Type() {
			continue
		}
		cfg := otlp.CreateDefaultConfig().(*otlpreceiver.Config)
		if !decode(conf, "receivers::"+id.String(), cfg) {
			continue
		}
		if cfg.Protocols.GRPC.HasValue() {
			g := cfg.Protocols.GRPC.Get()
			out = append(out, newListener("receivers", id, "protocols::grpc", g.NetAddr, g.Auth.HasValue(), "send turns", true))
		}
		if cfg.Protocols.HTTP.HasValue() {
			h := cfg.Protocols.HTTP.Get()
			out = append(out, newListener("receivers", id, "protocols::http", h.ServerConfig.NetAddr, h.ServerConfig.Auth.HasValue(), "send turns", true))
		}
	}
	for _, id := range exporters {
		switch id.Type() {
		case prom.Type():
			cfg := prom.CreateDefaultConfig().(*prometheusexporter.Config)
			if decode(conf, "exporters::"+id.String(), cfg) {
				out = append(out, serverListener(id, "", &cfg.ServerConfig, "read the verdict counters", true))
			}
		case page.Type():
			cfg := page.CreateDefaultConfig().(*verdictexporter.Config)
			if decode(conf, "exporters::"+id.String(), cfg) && cfg.HTTP.HasValue() {
				out = append(out, serverListener(id, "http", cfg.HTTP.Get(), "read the verdicts", false))
			}
		}
	}
	return out
}

func serverListener(id component.ID, setting string, sc *confighttp.ServerConfig, carries string, optOut bool) listener {
	return newListener("exporters", id, setting, sc.NetAddr, sc.Auth.HasValue(), carries, optOut)
}

func newListener(kind string, id component.ID, setting string, addr confignet.AddrConfig, auth bool, carries string, optOut bool) listener {
	return listener{component: kind + "::" + id.String(), id: id, setting: setting, endpoint: addr.Endpoint,
		carries: carries, optOut: optOut, auth: auth, loopback: loopback.Addr(addr)}
}

func decode(conf *confmap.Conf, key string, cfg any) bool {
	sub, err := conf.Sub(key)
	return err == nil && sub.Unmarshal(cfg) == nil
}

// inPipelines are the receivers and exporters the service's pipelines
// name, each once, in the order first named: only those are started.
func inPipelines(conf *confmap.Conf) (receivers, exporters []component.ID) {
	pipelines, _ := conf.Get("service::pipelines").(map[string]any)
	names := make([]string, 0, len(pipelines))
	for name := range pipelines {
		names = append(names, name)
	}
	slices.Sort(names)
	add := func(to []component.ID, v any) []component.ID {
		list, _ := v.([]any)
		for _, e := range list {
			s, _ := e.(string)
			var id component.ID
			if id.UnmarshalText([]byte(s)) == nil && !slices.Contains(to, id) {
				to = append(to, id)
			}
		}
		return to
	}
	for _, name := range names {
		p, _ := pipelines[name].(map[string]any)
		receivers = add(receivers, p["receivers"])
		exporters = add(exporters, p["exporters"])
	}
	return receivers, exporters
}
