package otlp

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

func metricAttr(k, v string) metric.AddOption {
	return metric.WithAttributes(attribute.String(k, v))
}
