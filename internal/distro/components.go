package distro

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"

	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/countconnector"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusremotewriteexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
)

var (
	_ component.Type
	_ connector.Factory
	_ exporter.Factory
	_ extension.Factory
	_ processor.Factory
	_ receiver.Factory
	_ otelcol.Factories
	_ confmap.Provider
	_ = debugexporter.NewFactory
	_ = otlphttpexporter.NewFactory
	_ = batchprocessor.NewFactory
	_ = memorylimiterprocessor.NewFactory
	_ = otlpreceiver.NewFactory
	_ = envprovider.NewFactory
	_ = fileprovider.NewFactory
	_ = yamlprovider.NewFactory
	_ = processortest.NewNopSettings
	_ = processorhelper.NewTraces
	_ = countconnector.NewFactory
	_ = fileexporter.NewFactory
	_ = prometheusexporter.NewFactory
	_ = prometheusremotewriteexporter.NewFactory
	_ = bearertokenauthextension.NewFactory
	_ = healthcheckextension.NewFactory
	_ = filestorage.NewFactory
)
