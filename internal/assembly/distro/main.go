package distro

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// Build information of the distribution, shown by `percause collector --version`.
const (
	Command     = "percause collector"
	Description = "percause collector: OTLP in, per-cause verdicts for every voice turn out"
)

// Settings returns the collector settings of the distribution, as the
// Collector Builder's main.go would assemble them. configURIs are the
// configuration sources used when the command line names none (the embedded
// default); the command line's --config replaces them.
func Settings(version string, configURIs ...string) otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     Command,
			Description: Description,
			Version:     version,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				URIs: configURIs,
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(),
					fileprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
				// A listener beyond loopback without an authenticator is
				// refused wherever the configuration is resolved: at start
				// and by validate (exposed.go).
				ConverterFactories: []confmap.ConverterFactory{newExposureCheckFactory()},
			},
		},
		ConverterModules: []string{"github.com/percause/percause/internal/assembly/distro (exposure check)"},
	}
}

// Factories returns every component factory the distribution carries.
func Factories() (otelcol.Factories, error) { return components() }
